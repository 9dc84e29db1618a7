"""`allennlp train` / `evaluate` / `predict` as a user runs them, through the plugin."""

import json

import pytest

from tests import run_allennlp

CONFIG = "fixtures/configs/tiny_classifier.jsonnet"


@pytest.mark.slow
def test_components_registered_through_the_plugins_file(tmp_path):
    """No --include-package: the repo's .allennlp_plugins makes `spanbert_pretraining` etc. known.
    The start is quiet: no nltk download attempts, no deprecation noise."""
    train = run_allennlp(["train", "fixtures/configs/pretraining/spanbert_tiny.jsonnet", "-s", str(tmp_path / "run")])
    assert "Plugin allennlp_models available" in train.stderr
    assert "Plugin spanbert_lib.plugin available" in train.stderr
    assert "nltk_data" not in train.stderr and "Error loading" not in train.stderr
    assert "pkg_resources" not in train.stderr and "FutureWarning" not in train.stderr
    assert (tmp_path / "run" / "model.tar.gz").exists()


@pytest.mark.slow
def test_train_evaluate_predict(tmp_path):
    plugin_args = ["--include-package", "spanbert_lib"]
    serialization_dir = tmp_path / "run"
    run_allennlp(["train", CONFIG, "-s", str(serialization_dir), *plugin_args])
    metrics = json.loads((serialization_dir / "metrics.json").read_text())
    assert metrics["epoch"] == 1 and 0.0 <= metrics["validation_accuracy"] <= 1.0
    archive = serialization_dir / "model.tar.gz"
    assert archive.exists()

    evaluation_file = tmp_path / "evaluation.json"
    run_allennlp(
        [
            "evaluate",
            str(archive),
            "fixtures/classification/dev.jsonl",
            "--output-file",
            str(evaluation_file),
            *plugin_args,
        ]
    )
    evaluation = json.loads(evaluation_file.read_text())
    assert set(evaluation) >= {"accuracy", "loss"}

    predictions_file = tmp_path / "predictions.jsonl"
    run_allennlp(
        [
            "predict",
            str(archive),
            "fixtures/classification/predict.jsonl",
            "--predictor",
            "text_classifier",
            "--output-file",
            str(predictions_file),
            "--silent",
            *plugin_args,
        ]
    )
    predictions = [json.loads(line) for line in predictions_file.read_text().splitlines()]
    assert len(predictions) == 10
    for prediction in predictions:
        assert prediction["label"] in {"pos", "neg"}
        assert abs(sum(prediction["probs"]) - 1.0) < 1e-5
