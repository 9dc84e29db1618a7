"""
evidence/coref_litbank_side_by_side.py with the anchors (issue #21): the runs it plans for five systems, the one line
it says when the anchors' environment cannot be made, and finished anchor runs scored as CoNLL against both keys.
Nothing here needs the anchors' environment.
"""

import json
from argparse import Namespace
from dataclasses import replace
from pathlib import Path

import pytest

from evidence import anchors
from evidence.baselines import litbank_export
from evidence.environments import EnvironmentSetupError
from tests import REPO_ROOT, require_external_data


@pytest.fixture(scope="module")
def script():
    from evidence import coref_litbank_side_by_side

    return coref_litbank_side_by_side


def plan(script, tmp_path, seeds, budget=None, keys=None):
    args = Namespace(out=tmp_path / "out", seeds=seeds, data=tmp_path / "data")
    systems = [script.BY_KEY[key] for key in (keys or script.BY_KEY)]
    return script.planned_runs(args, budget or script.FULL, systems, "/anchors/bin/python")


def test_runs_go_seed_major_in_the_systems_order(script, tmp_path):
    runs = plan(script, tmp_path, [1, 2])
    assert [run.name for run in runs] == [
        f"{key}_seed{seed}"
        for seed in (1, 2)
        for key in (
            "ours",
            "ours_agreement",
            "ours_topk",
            "ours_coarse",
            "ours_coarse_topk",
            "allennlp_models",
            "fcoref",
            "lingmess",
            "maverick",
        )
    ]
    assert [run.seed for run in runs] == [1] * 9 + [2] * 9


def test_the_top_k_rows_train_our_configs_predicting_with_the_top_k_spans(script, tmp_path):
    """``ours_topk`` / ``ours_coarse_topk``: the same configs and seeds with ``min_mention_score`` off (item 4's
    before)."""
    ours, topk, coarse, coarse_topk = plan(
        script, tmp_path, [2], keys=["ours", "ours_topk", "ours_coarse", "ours_coarse_topk"]
    )
    for run, before in ((ours, topk), (coarse, coarse_topk)):
        config = run.command[run.command.index("train") + 1]
        assert before.command[before.command.index("train") + 1] == config
        overrides = json.loads(run.command[run.command.index("-o") + 1])
        assert json.loads(before.command[before.command.index("-o") + 1]) == overrides | {
            "model.min_mention_score": None
        }
        assert before.command[before.command.index("-s") + 1] == str(tmp_path / "out" / f"{before.name}")


@pytest.mark.parametrize(
    "key, adapter, extra",
    [
        ("fcoref", "fastcoref_litbank.py", ["--trainer", "fcoref"]),
        ("lingmess", "fastcoref_litbank.py", ["--trainer", "lingmess"]),
        ("maverick", "maverick_litbank.py", []),
    ],
)
def test_an_anchor_trains_on_the_exported_data_with_the_seed_and_epochs(script, tmp_path, key, adapter, extra):
    [run] = plan(script, tmp_path, [3], keys=[key])
    data, run_dir = tmp_path / "data", tmp_path / "out" / f"{key}_seed3"
    assert run.command == [
        "/anchors/bin/python",
        str(REPO_ROOT / "evidence" / "baselines" / adapter),
        *extra,
        *["--train", str(data / "coref_train.jsonl"), "--dev", str(data / "coref_dev.jsonl")],
        *["--epochs", "6", "--seed", "3", "--out", str(run_dir)],
    ]
    assert run.result_file == run_dir / "run.json" and run.record_path == run_dir / "training_cost.json"
    assert not run.then  # scored once finished, by conll_scores


def test_the_small_budget_reaches_every_system(script, tmp_path):
    ours, agreement, _, coarse, _, theirs, fcoref, _, _ = plan(script, tmp_path, [1], budget=script.SMALL)
    overrides = json.loads(ours.command[ours.command.index("-o") + 1])
    assert json.loads(coarse.command[coarse.command.index("-o") + 1]) == overrides
    assert json.loads(agreement.command[agreement.command.index("-o") + 1]) == overrides
    assert agreement.command[2].endswith("litbank_minilm_agreement.jsonnet")
    assert overrides["train_data_path"].endswith("coref/litbank#files=:3")
    assert overrides["validation_data_path"].endswith("coref/litbank#files=70:71")
    assert overrides["trainer.num_epochs"] == 1 and overrides["dataset_reader.window_seed"] == 1
    assert ours.then[0][-2:] == ["--dev-files", "70:71"] and "--ours-predictions" in ours.then[0]
    assert theirs.command[-6:] == ["--epochs", "1", "--train-files", ":3", "--dev-files", "70:71"]
    assert "--predictions" in theirs.command
    assert fcoref.command[fcoref.command.index("--epochs") + 1] == "1"


def test_a_longer_budget_with_a_curve_reaches_every_system(script, tmp_path):
    """``--epochs 14 --curve-every 2``: an anchor's fair chance, the same files, its dev predictions every 2 epochs."""
    longer = replace(script.FULL, epochs=14, curve_every=2)
    ours, _, _, _, _, theirs, fcoref, _, maverick = plan(script, tmp_path, [1], budget=longer)
    overrides = json.loads(ours.command[ours.command.index("-o") + 1])
    assert overrides["trainer.num_epochs"] == 14 and overrides["train_data_path"].endswith("#files=:70")
    assert theirs.command[-6:] == ["--epochs", "14", "--train-files", ":70", "--dev-files", "70:80"]
    for anchor in (fcoref, maverick):
        assert anchor.command[-8:] == [
            *["--epochs", "14", "--seed", "1", "--out", str(tmp_path / "out" / f"{anchor.name}")],
            *["--curve-every", "2"],
        ]
    assert "--curve-every" not in plan(script, tmp_path, [1], keys=["fcoref"])[0].command


def test_a_finished_run_keeps_the_learning_curve_it_was_made_with(script, tmp_path):
    """A curve changes what is measured along the way, not what is trained: runs made with and without one sit in
    one table whichever ``--curve-every`` the summarising command gives (they were all left out as "made by another
    command"), and ours train the same either way."""
    with_curve = replace(script.FULL, curve_every=2)
    made = {}
    for key, budget in (("lingmess", with_curve), ("fcoref", script.FULL)):
        run = plan(script, tmp_path, [1], budget=budget, keys=[key])[0]
        run.record_file.parent.mkdir(parents=True)
        run.record_file.write_text(json.dumps({"command": run.command}))
        run.result_file.write_text("{}")
        made[key] = run.command
    assert "--curve-every" in made["lingmess"] and "--curve-every" not in made["fcoref"]
    for budget in (script.FULL, with_curve):
        for key, command in made.items():
            run = plan(script, tmp_path, [1], budget=budget, keys=[key])[0]
            assert run.command == command and script.finished(run)
    assert "--curve-every" in plan(script, tmp_path, [2], budget=with_curve, keys=["fcoref"])[0].command  # not made
    ours = [
        plan(script, tmp_path, [1], budget=budget, keys=["ours"])[0].command for budget in (script.FULL, with_curve)
    ]
    assert ours[0] == ours[1]


def test_an_environment_that_cannot_be_made_is_said_in_one_line(script, monkeypatch, capsys):
    def fail(*_):
        raise EnvironmentSetupError("environment for anchors.lock: pip install failed (exit 1):\n    no network\n")

    monkeypatch.setattr(anchors, "ensure_environment", fail)
    assert script.anchors_python() is None
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("anchors not run: ") and "pip install failed" in out[0]


@pytest.fixture(scope="module")
def small_data(tmp_path_factory):
    """litbank_export.py's files for 1 training and 1 dev document (the smoke budget's dev file)."""
    coref_dir = require_external_data("coref", "litbank")
    ner_dir = require_external_data("ner", "litbank")
    data = tmp_path_factory.mktemp("side_by_side_data")
    litbank_export.export(data, ":1", "70:71", coref_dir, ner_dir)
    return data


def finished_anchor_run(script, out: Path, data: Path, key: str, clusters_of) -> None:
    """What an adapter and the harness leave: predictions, run.json (timings), the harness's record."""
    run_dir = out / f"{key}_seed1"
    run_dir.mkdir(parents=True)
    gold = [json.loads(line) for line in (data / "coref_dev.jsonl").read_text().splitlines()]
    (run_dir / "dev_predictions.jsonl").write_text(
        "".join(json.dumps({"doc_key": d["doc_key"], "clusters": clusters_of(d["clusters"])}) + "\n" for d in gold)
    )
    timings = {
        "training": {"wall_seconds": 120.0, "cpu_seconds": 90.0},
        "prediction": {"wall_seconds": 4.0, "cpu_seconds": 3.0},
    }
    (run_dir / "run.json").write_text(json.dumps({"system": key, "timings": timings, "peak_rss_mib": 3000.0}))
    (run_dir / "training_cost.json").write_text(
        json.dumps({"wall_seconds": 130, "cpu_seconds": 95, "max_rss_mb": 3100})
    )


def test_finished_anchor_runs_are_scored_as_conll_against_both_keys(script, small_data, tmp_path):
    out = tmp_path / "out"
    # F-coref-like: the gold clusters without singletons; Maverick-like: all of them; LingMess: not finished
    finished_anchor_run(script, out, small_data, "fcoref", lambda cs: [c for c in cs if len(c) > 1])
    finished_anchor_run(script, out, small_data, "maverick", lambda cs: cs)
    args = Namespace(out=out, seeds=[1], data=small_data)
    systems = [script.BY_KEY[key] for key in ("fcoref", "lingmess", "maverick")]
    runs = script.planned_runs(args, script.SMALL, systems, "/anchors/bin/python")
    results, left_out = script.collect(runs, small_data)
    assert left_out == ["lingmess_seed1: not finished"]
    fcoref, maverick = results[script.FCOREF][1], results[script.MAVERICK][1]
    assert maverick["gold_with_singletons"]["conll_f1"] == pytest.approx(100.0)
    assert fcoref["gold_without_singletons"]["conll_f1"] == pytest.approx(100.0)
    assert fcoref["gold_with_singletons"]["conll_f1"] < 95.0  # every singleton of the key missed
    # the adapter's own training and prediction timings; the harness's peak RSS of the whole process
    assert (fcoref["cpu_seconds"], fcoref["wall_seconds"], fcoref["predict_seconds"]) == (90.0, 120.0, 4.0)
    assert fcoref["peak_rss_mb"] == 3100 and fcoref["process_cpu_seconds"] == 95
    assert (out / "fcoref_seed1" / "dev_response_no_singletons.conll").exists()
    text = script.table({script.FCOREF: results[script.FCOREF]})
    assert "mean ± std" in text and "1.5" in text  # 90 CPU-s of training = 1.5 min


def test_the_summary_keeps_the_runs_another_command_made(script, small_data, tmp_path):
    """A command for one system still summarises every finished run of its folder (nothing drops out of the
    table because the last command ran another system)."""
    out = tmp_path / "out"
    finished_anchor_run(script, out, small_data, "fcoref", lambda cs: [c for c in cs if len(c) > 1])
    (out / "notes_seed1").mkdir()  # no system of the script
    args = Namespace(out=out, seeds=[1], data=small_data)
    planned = script.planned_runs(args, script.SMALL, [script.BY_KEY["maverick"]], "/anchors/bin/python")
    found = script.runs_on_disk(args, script.SMALL, planned)
    assert [run.name for run in found] == ["fcoref_seed1"]
    results, left_out = script.collect(planned + found, small_data)
    assert list(results) == [script.FCOREF] and left_out == ["maverick_seed1: not finished"]


def test_a_data_folder_exported_for_other_files_is_refused(script, small_data):
    with pytest.raises(SystemExit, match="holds LitBank files :1 / 70:71"):
        script.ensure_data(small_data, script.FULL)
