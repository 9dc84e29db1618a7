"""The from-scratch setting stays trainable: training_configs/pretraining/spanbert_tiny_cpu.jsonnet (the paper's
recipe at tiny size, a freshly initialised 2-layer encoder) trains a few steps as shipped."""

import json
import math

from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import load_archive

from tests import REPO_ROOT

CONFIG = REPO_ROOT / "training_configs" / "pretraining" / "spanbert_tiny_cpu.jsonnet"


def test_tiny_from_scratch_config_trains_a_few_steps(tmp_path):
    overrides = {
        "trainer.num_epochs": 2,
        "data_loader.batches_per_epoch": 2,
        "validation_dataset_reader.max_instances": 16,
        "trainer.learning_rate_scheduler.warmup_steps": 1,
    }
    train_model_from_file(str(CONFIG), str(tmp_path / "run"), overrides=json.dumps(overrides))
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert math.isfinite(metrics["training_loss"]) and metrics["training_loss"] > 0
    assert 0.0 <= metrics["validation_mlm_accuracy"] <= 1.0 and 0.0 <= metrics["validation_sbo_accuracy"] <= 1.0
    first = json.loads((tmp_path / "run" / "metrics_epoch_0.json").read_text())
    assert metrics["training_loss"] < first["training_loss"]
    encoder = load_archive(str(tmp_path / "run" / "model.tar.gz")).model.encoder
    assert encoder.config.num_hidden_layers == 2 and encoder.config.position_embedding_type == "relative_key_query"
