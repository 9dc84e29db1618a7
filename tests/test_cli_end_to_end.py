"""`allennlp train` / `evaluate` / `predict` as a user runs them, through the plugin."""
import json

import pytest

from tests.conftest import run_allennlp

CONFIG = "fixtures/configs/tiny_classifier.jsonnet"


@pytest.mark.slow
@pytest.mark.parametrize("plugin_via", ["include_package", "plugins_file"])
def test_train_evaluate_predict(tmp_path, repo_root, plugin_via):
    # --include-package from any directory; the .allennlp_plugins file when run from the repo root.
    plugin_args = ["--include-package", "spanbert_lib"] if plugin_via == "include_package" else []
    serialization_dir = tmp_path / "run"
    train = run_allennlp(["train", CONFIG, "-s", str(serialization_dir), *plugin_args])
    assert "Plugin spanbert_lib" in train.stderr or plugin_via == "include_package"
    metrics = json.loads((serialization_dir / "metrics.json").read_text())
    assert metrics["epoch"] == 1 and 0.0 <= metrics["validation_accuracy"] <= 1.0
    archive = serialization_dir / "model.tar.gz"
    assert archive.exists()

    evaluation_file = tmp_path / "evaluation.json"
    run_allennlp(["evaluate", str(archive), "fixtures/classification/dev.jsonl",
                  "--output-file", str(evaluation_file), *plugin_args])
    evaluation = json.loads(evaluation_file.read_text())
    assert set(evaluation) >= {"accuracy", "loss"}

    predictions_file = tmp_path / "predictions.jsonl"
    run_allennlp(["predict", str(archive), "fixtures/classification/predict.jsonl", "--predictor", "text_classifier",
                  "--output-file", str(predictions_file), "--silent", *plugin_args])
    predictions = [json.loads(line) for line in predictions_file.read_text().splitlines()]
    assert len(predictions) == 10
    for prediction in predictions:
        assert prediction["label"] in {"pos", "neg"}
        assert abs(sum(prediction["probs"]) - 1.0) < 1e-5


def test_cli_start_is_quiet_and_offline(repo_root):
    """No nltk download attempts, no deprecation noise, both plugins loaded."""
    completed = run_allennlp(["--help"])
    output = completed.stdout + completed.stderr
    assert "nltk_data" not in output and "Error loading" not in output
    assert "pkg_resources" not in output
    assert "Plugin allennlp_models available" in output
    assert "Plugin spanbert_lib.plugin available" in output
    assert "spanbert_lib.commands" in output or "Commands" in output
