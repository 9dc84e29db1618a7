"""A model still training: progress from its serialization directory, 503 until the archive is loaded."""

import json
import shutil
import warnings

import pytest

from spanbert_lib.serving.app import create_app
from spanbert_lib.serving.masking_preview import MaskingPreview
from spanbert_lib.serving.model_spec import ModelSpec
from spanbert_lib.serving.served_model import ServedModel
from spanbert_lib.serving.training_watch import TrainingWatch, _parse_log_tail

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

# What `allennlp train` writes to out.log (abridged): epoch lines, then tqdm lines per batch.
OUT_LOG = """\
2026-11-23 22:07:28,181 - INFO - allennlp.training.gradient_descent_trainer - Epoch 0/2
2026-11-23 22:07:28,300 - INFO - tqdm - batch_loss: 4.3, loss: 4.1000 ||: 100%|##########| 3/3 [00:00<00:00]
2026-11-23 22:07:28,400 - INFO - allennlp.training.gradient_descent_trainer - Validating
2026-11-23 22:07:28,500 - INFO - tqdm - f1: 0.1, batch_loss: 4.0, loss: 3.9000 ||: 100%|##########| 3/3 [00:00<00:00]
2026-11-23 22:07:29,181 - INFO - allennlp.training.gradient_descent_trainer - Epoch 1/2
2026-11-23 22:07:29,300 - INFO - tqdm - start_acc: 0.2, batch_loss: 3.5, loss: 3.2500 ||:  40%|####      | 4/10 [00:01<00:02]
"""


def test_log_parsing():
    assert _parse_log_tail(OUT_LOG) == {
        "epoch": 2,
        "num_epochs": 3,
        "phase": "training",
        "epoch_fraction": 0.4,
        "loss": 3.25,
    }
    validating = OUT_LOG + "2026-11-23 22:07:30,000 - INFO - allennlp.training.gradient_descent_trainer - Validating\n"
    assert _parse_log_tail(validating)["phase"] == "validation"
    assert _parse_log_tail("nothing yet") == {}


def test_a_training_model_shows_progress_then_serves(tmp_path, tiny_archives):
    run = tmp_path / "typing"
    watch = TrainingWatch(ModelSpec("typing", str(run)), ServedModel)
    masking = MaskingPreview(tokenizer="fixtures/tiny_bert")
    with TestClient(create_app([watch], masking), base_url="http://127.0.0.1") as client:
        waiting = client.get("/models").json()[0]
        assert waiting["status"] == "training" and not waiting["progress"]["started"]
        response = client.post("/predict/typing", json={"sentence": "Ann left.", "start": 0, "end": 3})
        assert response.status_code == 503 and "waiting for training to start" in response.json()["error"]

        run.mkdir()
        shutil.copy(tiny_archives["typing"] / "config.json", run / "config.json")
        (run / "metrics_epoch_0.json").write_text("{}")
        (run / "out.log").write_text(OUT_LOG)
        training = client.get("/models").json()[0]
        progress = training["progress"]
        assert (training["task"], training["encoder"]) == ("entity_typing", "tiny_bert")
        assert (progress["epoch"], progress["num_epochs"], progress["loss"]) == (2, 3, 3.25)
        assert progress["fraction"] == pytest.approx((1 + 0.4) / 3)
        assert progress["eta_s"] is not None and progress["eta_s"] >= 0
        assert client.get("/health").json()["models_training"] == ["typing"]
        assert "epoch 2/3" in client.post("/predict/typing", json={}).json()["error"]

        shutil.copy(tiny_archives["typing"] / "metrics.json", run / "metrics.json")
        shutil.copy(tiny_archives["typing"] / "model.tar.gz", run / "model.tar.gz")
        assert not watch.poll_once()  # first sight of the archive: it may still be growing
        assert watch.poll_once()
        ready = client.get("/models").json()[0]
        assert ready["status"] == "ready" and ready["validation_metrics"]
        assert client.post("/predict/typing", json={"sentence": "Ann left.", "start": 0, "end": 3}).status_code == 200


def test_a_broken_archive_is_reported(tmp_path):
    run = tmp_path / "broken"
    run.mkdir()
    (run / "model.tar.gz").write_bytes(b"not a tar file")
    watch = TrainingWatch(ModelSpec("broken", str(run)), ServedModel)
    for _ in range(6):
        assert not watch.poll_once()
    entry = watch.describe()
    assert entry["status"] == "failed" and "loading" in entry["message"] and "model.tar.gz" in entry["message"]
    json.dumps(entry)  # serialisable as it is
