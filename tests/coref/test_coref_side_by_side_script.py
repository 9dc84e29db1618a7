"""evidence/coref_litbank_side_by_side.py: per-seed scores summarised, and scored runs never trained again."""

import json

import pytest

from evidence.external_data import EXTERNAL_DATA_ENV
from evidence.runs import run_all


@pytest.fixture(scope="module")
def script():
    from evidence import coref_litbank_side_by_side

    return coref_litbank_side_by_side


def scores(conll_with: float, conll_without: float, wall: int, cpu: int) -> dict:
    return {
        "documents": 10,
        "predict_seconds": 20.0,
        "gold_with_singletons": {"muc": 70.0, "bcub": 40.0, "ceafe": 5.0, "conll_f1": conll_with},
        "gold_without_singletons": {"muc": 70.0, "bcub": 50.0, "ceafe": 20.0, "conll_f1": conll_without},
        "wall_seconds": wall,
        "cpu_seconds": cpu,
    }


def test_summary_gives_mean_and_sample_std_per_system(script):
    results = {
        script.OURS: {1: scores(42.0, 49.0, 100, 80), 2: scores(44.0, 51.0, 300, 120)},
        script.THEIRS: {1: scores(41.0, 48.0, 500, 400)},
    }
    summary = script.summarise(results)
    ours = summary[script.OURS]
    assert ours["conll_f1_with_singletons"] == {"mean": 43.0, "std": pytest.approx(1.41, abs=0.01)}
    assert ours["conll_f1_without_singletons"]["mean"] == 50.0
    assert ours["training_wall_seconds"]["mean"] == 200 and ours["training_cpu_seconds"]["mean"] == 100
    assert summary[script.THEIRS]["conll_f1_with_singletons"] == {"mean": 41.0, "std": None}  # one seed: no spread
    assert ours["per_seed"][2]["gold_with_singletons"]["conll_f1"] == 44.0


@pytest.mark.parametrize("system", ["spanbert_coref", "allennlp-models coref"])
def test_a_scored_run_is_read_back_without_training(script, tmp_path, system):
    run_dir = tmp_path / "run_seed7"
    run_dir.mkdir()
    saved = scores(40.0, 47.0, 0, 0)
    (run_dir / script.SCORE_FILE).write_text(
        json.dumps({k: v for k, v in saved.items() if k not in ("wall_seconds", "cpu_seconds")})
    )
    (run_dir / script.COST_FILE).write_text(json.dumps({"wall_seconds": 11, "cpu_seconds": 9}))
    run = script.training_run(system, 7, run_dir)
    [result] = run_all([run])
    assert result.skipped and not run.log_file.exists()  # nothing was started
    scores_read = script.scores_of(result)
    assert scores_read["gold_with_singletons"]["conll_f1"] == 40.0 and scores_read["cpu_seconds"] == 9


def test_our_training_reads_the_resolved_data_with_the_seed_everywhere(script, tmp_path, monkeypatch):
    monkeypatch.setenv(EXTERNAL_DATA_ENV, str(tmp_path / "data"))
    run = script.training_run(script.OURS, 5, tmp_path / "ours_seed5")
    overrides = json.loads(run.command[run.command.index("-o") + 1])
    assert overrides["train_data_path"] == f"{tmp_path}/data/coref/litbank#files=:70"
    assert overrides["validation_data_path"] == f"{tmp_path}/data/coref/litbank#files=70:80"
    assert overrides["random_seed"] == overrides["dataset_reader.window_seed"] == 5
    assert run.then and "--ours-json" in run.then[0]  # scored after training, outside the measured cost


def test_the_coarse_only_system_trains_its_own_config_the_same_way(script, tmp_path, monkeypatch):
    monkeypatch.setenv(EXTERNAL_DATA_ENV, str(tmp_path / "data"))
    default = script.training_run(script.OURS, 2, tmp_path / "ours_seed2")
    coarse = script.training_run(script.OURS_COARSE, 2, tmp_path / "ours_coarse_seed2")
    assert default.command[2] == "training_configs/coref/litbank_minilm.jsonnet"
    assert coarse.command[2] == "training_configs/coref/litbank_minilm_coarse.jsonnet"
    assert coarse.command[coarse.command.index("-o") + 1] == default.command[default.command.index("-o") + 1]
    assert script.run_dir_of(tmp_path, script.OURS_COARSE, 2).name == "ours_coarse_seed2"
