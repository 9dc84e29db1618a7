"""The shipped TACRED configs: the label list agrees with the code, and the recipe trains with the tiny BERT."""

import json

import _jsonnet
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params

from spanbert_lib.relation.dataset_readers.tacred_schema import TACRED_RELATIONS
from tests import REPO_ROOT, TINY_BERT_DIR

CONFIG_DIR = REPO_ROOT / "training_configs" / "relation"
FIXTURE = str(REPO_ROOT / "fixtures" / "relation" / "tacred_fixture.json")


def test_relation_list_matches_the_code():
    assert tuple(json.loads(_jsonnet.evaluate_file(str(CONFIG_DIR / "tacred_relations.libsonnet")))) == TACRED_RELATIONS


def test_large_config_follows_the_paper():
    params = Params.from_file(str(CONFIG_DIR / "tacred_spanbert_large.jsonnet")).as_dict()
    assert params["dataset_reader"]["max_seq_length"] == 128
    assert params["dataset_reader"]["entity_scheme"] == "entity_mask"
    assert params["data_loader"]["batch_size"] == 32
    trainer = params["trainer"]
    assert trainer["optimizer"]["lr"] == 2e-5 and trainer["num_epochs"] == 10
    # 68,124 training examples / 32 -> 2,129 steps per epoch; 10 % of 21,290 steps warm up
    assert trainer["learning_rate_scheduler"] == {"type": "linear_with_warmup", "warmup_steps": 2129}
    assert params["model"]["pooling"] == "cls"


def test_cpu_config_trains_with_the_tiny_encoder(tmp_path):
    overrides = json.dumps(
        {
            "dataset_reader.model_name": str(TINY_BERT_DIR),
            "model.encoder.token_embedders.tokens.model_name": str(TINY_BERT_DIR),
            "train_data_path": FIXTURE,
            "validation_data_path": FIXTURE,
            "test_data_path": FIXTURE,
            "trainer.num_epochs": 1,
        }
    )
    model = train_model_from_file(
        str(CONFIG_DIR / "tacred_minilm_cpu.jsonnet"), str(tmp_path / "run"), overrides=overrides
    )
    # every TACRED label has an id although the fixture has only six of them
    assert model.vocab.get_vocab_size("labels") == 42
    assert model._classifier.out_features == 42
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert {"test_f1", "test_accuracy", "best_validation_f1"} <= set(metrics)
