"""The NER and SemEval side-by-side scripts on the harness: what they run, and how they read finished runs back."""

import importlib
import json
import math
from pathlib import Path

import pytest

from evidence.external_data import EXTERNAL_DATA_ENV
from evidence.repository import tool
from evidence.runs import RunResult, run_all
from tests import REPO_ROOT


def load_script(name: str):
    return importlib.import_module(f"evidence.{name}")


@pytest.fixture(scope="module")
def ner():
    return load_script("ner_litbank_side_by_side")


@pytest.fixture(scope="module")
def outside_bias():
    return load_script("ner_litbank_outside_bias")


@pytest.fixture(scope="module")
def semeval():
    return load_script("semeval2010_side_by_side")


def test_ner_runs_train_each_config_on_the_resolved_data(ner, tmp_path, monkeypatch):
    monkeypatch.setenv(EXTERNAL_DATA_ENV, str(tmp_path / "data"))
    system = "ordinary attention over [words; entities]"
    run = ner.training_run(system, 2, tmp_path)
    assert run.command[1:3] == ["train", ner.BY_LABEL[system].config] and "-f" in run.command
    overrides = json.loads(run.command[-1])
    assert overrides["validation_data_path"] == f"{tmp_path}/data/ner/litbank#files=70:80"
    assert overrides["pytorch_seed"] == 2
    assert run.result_file == tmp_path / "litbank_minilm_plain_attention_seed2" / "metrics.json"


def test_ner_reads_a_finished_run_back(ner, tmp_path):
    run = ner.training_run("entity-aware attention", 1, tmp_path)
    run.result_file.parent.mkdir()
    metrics = {"best_validation_precision": 0.25, "best_validation_recall": 0.5, "best_validation_f1": 1 / 3}
    run.result_file.write_text(json.dumps(dict(metrics, training_duration="0:07:00")))
    [result] = run_all([run])
    scores = ner.scores_of(result)
    assert scores["precision"] == 25.0 and scores["f1"] == pytest.approx(33.33, abs=0.01)
    assert scores["training_seconds"] == "0:07:00" and scores["cpu_seconds"] is None


def test_ner_without_entities_is_the_entity_aware_config_with_no_entity_tokens(ner):
    from allennlp.common import Params

    configs = {
        key: Params.from_file(str(REPO_ROOT / ner.BY_KEY[key].config)).as_dict()
        for key in ner.BY_KEY
        if key != "spanmarker"
    }
    no_entities, plain = configs["no_entities"], configs["plain_attention"]
    assert no_entities["model"].pop("use_entities") is False and plain["model"].pop("use_entities") is True
    assert no_entities == plain


def test_ner_spanmarker_trains_the_same_budget_on_the_exported_files_and_is_scored_by_ours(ner, tmp_path):
    data = tmp_path / "data"
    run = ner.training_run(ner.BY_KEY["spanmarker"].label, 3, tmp_path, data, "/anchors/python")
    assert run.command[:2] == ["/anchors/python", str(REPO_ROOT / "evidence" / "baselines" / "spanmarker_litbank.py")]
    option = dict(zip(run.command[2::2], run.command[3::2]))
    assert option["--train"] == str(data / "ner_train.jsonl") and option["--dev"] == str(data / "ner_dev.jsonl")
    assert (option["--epochs"], option["--seed"], option["--out"]) == ("0.386", "3", str(tmp_path / "spanmarker_seed3"))
    assert abs(float(option["--epochs"]) * 6216 - 300 * 8) < 8  # within a batch of what one epoch of ours sees
    score = [tool("python"), "-m", "evidence.baselines.score_predictions"]
    assert run.then == [[*score, "ner", "--data", str(data), "--run", str(tmp_path / "spanmarker_seed3")]]
    assert run.result_file == tmp_path / "spanmarker_seed3" / "dev_scores.json"


def test_ner_reads_a_finished_spanmarker_run_back(ner, tmp_path):
    run = ner.training_run(ner.BY_KEY["spanmarker"].label, 1, tmp_path, tmp_path / "data", "python")
    run.result_file.parent.mkdir()
    run.result_file.write_text(json.dumps({"precision": 40.0, "recall": 20.0, "f1": 26.67, "entities": {}}))
    (run.result_file.parent / "run.json").write_text(json.dumps({"timings": {"training": {"wall_seconds": 5400.0}}}))
    [result] = run_all([run])
    scores = ner.scores_of(result)
    assert (scores["precision"], scores["recall"], scores["f1"], scores["training_seconds"]) == (
        40.0,
        20.0,
        26.67,
        5400.0,
    )


def test_ner_budgets_give_every_system_n_times_the_budget_scored_after_each(ner, tmp_path):
    ours = ner.training_run("entity-aware attention", 1, tmp_path, budgets=3)
    assert json.loads(ours.command[-1])["trainer.num_epochs"] == 3  # one epoch of 300 batches a budget
    assert "trainer.num_epochs" not in json.loads(ner.training_run("entity-aware attention", 1, tmp_path).command[-1])
    anchor = ner.training_run(ner.BY_KEY["spanmarker"].label, 1, tmp_path, tmp_path, "python", budgets=2)
    option = dict(zip(anchor.command[2::2], anchor.command[3::2]))
    assert option["--epochs"] == "0.772" and option["--curve-every-steps"] == "528"
    # SpanMarker's trainer runs ceil(epochs * 1,367) steps (its samples in batches of 8): whole budgets of 528
    assert [math.ceil(float(ner.spanmarker_epochs(n)) * 1367) for n in (1, 2)] == [528, 1056]
    single = ner.training_run(ner.BY_KEY["spanmarker"].label, 1, tmp_path, tmp_path, "python")
    assert "--curve-every-steps" not in single.command


def test_ner_summary_holds_every_finished_run_of_the_folder_not_only_this_commands(ner, tmp_path):
    data = tmp_path / "data"
    finished_ours = ner.training_run("entity-aware attention", 2, tmp_path)
    finished_ours.result_file.parent.mkdir()
    finished_ours.result_file.write_text("{}")
    anchor = ner.training_run(ner.BY_KEY["spanmarker"].label, 1, tmp_path, data, "/anchors/python")
    anchor.result_file.parent.mkdir()
    anchor.result_file.write_text("{}")
    anchor.record_path.write_text(json.dumps({"command": anchor.command}))
    (tmp_path / "spanmarker_seed2").mkdir()  # interrupted: no result yet
    stranger = ner.training_run("no entity tokens ([x_first; x_last])", 1, tmp_path)
    stranger.result_file.parent.mkdir()
    stranger.result_file.write_text("{}")
    stranger.record_path.write_text(json.dumps({"command": ["allennlp", "train", "other.jsonnet"]}))
    (tmp_path / "notes_seed1").mkdir()  # not a system's folder

    found, left_out = ner.runs_on_disk(tmp_path, data, "/anchors/python")
    assert [(run.system, run.seed) for run in found] == [
        ("entity-aware attention", 2),
        ("SpanMarker 1.8.1", 1),
    ]
    assert left_out[0].startswith("litbank_minilm_no_entities_seed1: ") and "another command" in left_out[0]
    assert left_out[1:] == ["spanmarker_seed2: not finished"]


def test_ner_outside_bias_trains_on_60_documents_chooses_on_the_next_10_and_never_on_dev(outside_bias, tmp_path):
    litbank = tmp_path / "litbank"
    train, choose = outside_bias.part_runs(3, tmp_path, litbank)
    overrides = json.loads(train.command[-1])
    assert train.command[1:3] == ["train", "training_configs/ner/litbank_minilm.jsonnet"]
    assert overrides["train_data_path"] == f"{litbank}#files=:60" and overrides["validation_data_path"] is None
    assert overrides["pytorch_seed"] == 3
    assert choose.command[1:4] == [
        "ner-outside-bias",
        str(tmp_path / "train60_seed3" / "model.tar.gz"),
        f"{litbank}#files=60:70",
    ]
    assert choose.command[choose.command.index("--evaluate") + 1] == f"{litbank}#files=70:80"
    assert choose.result_file == tmp_path / "choose_seed3.json"
    applied = outside_bias.apply_run(2, 1.3333, tmp_path, litbank)
    assert applied.command[1:3] == ["evaluate", str(outside_bias.FULL_RUNS / "litbank_minilm_seed2" / "model.tar.gz")]
    assert json.loads(applied.command[applied.command.index("-o") + 1]) == {"model.outside_logit_bias": 1.3333}
    assert applied.command[applied.command.index("-o") - 1] == f"{litbank}#files=70:80"


def test_semeval_reads_the_last_and_best_epoch_of_our_run(semeval, tmp_path):
    run_dir = tmp_path / "ours_seed3"
    run_dir.mkdir()
    for epoch, f1 in enumerate([0.5, 0.8, 0.7]):
        (run_dir / f"metrics_epoch_{epoch}.json").write_text(json.dumps({"validation_macro_f1": f1}))
    (run_dir / "metrics.json").write_text(json.dumps({"best_validation_macro_f1": 0.8}))
    result = semeval.ours_result(run_dir, 3)
    assert result["dev_macro_f1_per_epoch"] == [0.5, 0.8, 0.7]
    assert result["dev_macro_f1"] == 0.7 and result["best_dev_macro_f1"] == 0.8


def test_semeval_baseline_ablations_keep_separate_results(semeval, tmp_path):
    default = semeval.hf_run(Path("config.jsonnet"), "train.txt", 1, tmp_path, "resize", "pooler")
    ablation = semeval.hf_run(Path("config.jsonnet"), "train.txt", 1, tmp_path, "description", "raw_cls")
    assert default.result_file != ablation.result_file
    assert default.command[default.command.index("--result-file") + 1] == str(default.result_file)


def test_semeval_summary_is_mean_and_sample_std_over_seeds(semeval, tmp_path):
    runs = [
        dict(system="ours", seed=seed, dev_macro_f1=f1, best_dev_macro_f1=f1, seconds=100.0, cpu_seconds=None)
        for seed, f1 in ((1, 0.80), (2, 0.82))
    ]
    summary = semeval._summary(runs, "ours")
    assert summary["mean"] == pytest.approx(0.81) and summary["std"] == pytest.approx(0.01414, abs=1e-5)
    assert summary["seconds_mean"] == 100.0 and summary["cpu_seconds_mean"] is None


def test_semeval_run_result_uses_the_measured_seconds(semeval, tmp_path):
    run = semeval.hf_run(Path("config.jsonnet"), "train.txt", 1, tmp_path, "resize", "pooler")
    run.result_file.write_text(json.dumps({"system": "hf_baseline", "seed": 1, "dev_macro_f1": 0.4, "seconds": 5}))
    result = semeval.run_result(RunResult(run, False, 812.0, 790.5, 900.0))
    assert result["seconds"] == 812.0 and result["cpu_seconds"] == 790.5 and result["dev_macro_f1"] == 0.4
