"""
The shipped GLUE-style configs train as written once the encoder and data are swapped for the tiny BERT
and the project's fixtures (the real SpanBERT checkpoints and GLUE data are not available here).
"""

import json

import allennlp_models.pair_classification  # noqa: F401  (registers the "snli" reader)
import pytest
from allennlp.commands.train import train_model_from_file

from tests import REPO_ROOT, TINY_BERT_DIR


def tiny_overrides(train: str, dev: str) -> str:
    return json.dumps(
        {
            "dataset_reader.tokenizer.model_name": str(TINY_BERT_DIR),
            "dataset_reader.token_indexers.tokens.model_name": str(TINY_BERT_DIR),
            "model.text_field_embedder.token_embedders.tokens.model_name": str(TINY_BERT_DIR),
            "model.seq2vec_encoder.embedding_dim": 32,
            "train_data_path": train,
            "validation_data_path": dev,
            "data_loader.batch_size": 8,
            "trainer.num_epochs": 1,
            "trainer.cuda_device": -1,
            "trainer.use_amp": False,
        }
    )


@pytest.mark.parametrize(
    "config, data",
    [
        ("sst2_spanbert_base.jsonnet", "fixtures/classification"),
        ("mnli_spanbert_base.jsonnet", "fixtures/classification_pair"),
    ],
)
def test_glue_config_trains_with_the_tiny_encoder(tmp_path, config, data):
    overrides = tiny_overrides(str(REPO_ROOT / data / "train.jsonl"), str(REPO_ROOT / data / "dev.jsonl"))
    model = train_model_from_file(
        str(REPO_ROOT / "training_configs" / "classification" / config), str(tmp_path / "run"), overrides=overrides
    )
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert 0.0 <= metrics["validation_accuracy"] <= 1.0
    num_labels = 3 if "mnli" in config else 2
    assert model._classification_layer.out_features == num_labels
