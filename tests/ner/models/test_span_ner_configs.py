"""The shipped span-NER configs: the LitBank MiniLM pair (one switch apart; trains) and CoNLL-2003 large."""

import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params

from tests import REPO_ROOT, TINY_BERT_DIR, require_external_data

CONFIG_DIR = REPO_ROOT / "training_configs" / "ner"
LITBANK_FIXTURE = str(REPO_ROOT / "fixtures" / "ner" / "litbank")


def params_of(name: str) -> dict:
    return Params.from_file(str(CONFIG_DIR / name)).as_dict()


def test_litbank_configs_differ_only_in_entity_aware_attention():
    aware, plain = params_of("litbank_minilm.jsonnet"), params_of("litbank_minilm_plain_attention.jsonnet")
    assert aware["model"]["encoder"].pop("entity_aware_attention") is True
    assert plain["model"]["encoder"].pop("entity_aware_attention") is False
    assert aware == plain


def test_the_hard_negatives_config_differs_only_in_its_negatives():
    shipped, hard = params_of("litbank_minilm.jsonnet"), params_of("litbank_minilm_hard_negatives.jsonnet")
    assert shipped["model"].pop("negative_spans_per_instance") == 24
    assert (
        hard["model"].pop("negative_spans_per_instance"),
        hard["model"].pop("hard_negative_spans_per_instance"),
    ) == (
        12,
        12,
    )
    assert shipped == hard


def test_litbank_config_settings():
    params = params_of("litbank_minilm.jsonnet")
    assert params["train_data_path"] == "../shared/data/ner/litbank#files=:70"
    assert params["validation_data_path"] == "../shared/data/ner/litbank#files=70:80"
    assert (
        params["dataset_reader"]["type"] == "spanbert_span_ner_litbank"
        and params["dataset_reader"]["max_span_width"] == 16
    )
    model = params["model"]
    assert model["encoder"]["model_name"] == params["dataset_reader"]["model_name"] == "pretrained/all-MiniLM-L6-v2"
    assert model["decoding"] == "nested" and model["use_entities"] and model["max_entities_per_pass"] == 128
    assert params["trainer"]["num_epochs"] == 1 and params["trainer"]["cuda_device"] == -1
    assert params["data_loader"]["batches_per_epoch"] == 300


def test_litbank_split_is_70_and_10_documents():
    from spanbert_lib.common.data_files import resolve_data_files

    litbank = require_external_data("ner", "litbank")
    train = resolve_data_files(f"{litbank}#files=:70", "*.tsv")
    dev = resolve_data_files(f"{litbank}#files=70:80", "*.tsv")
    assert len(train) == 70 and len(dev) == 10 and not set(train) & set(dev)
    assert sorted(train + dev) == train + dev


@pytest.mark.parametrize(
    "config, negatives", [("litbank_minilm.jsonnet", (24, 0)), ("litbank_minilm_hard_negatives.jsonnet", (12, 12))]
)
def test_litbank_recipe_trains_with_the_tiny_encoder(tmp_path, config, negatives):
    overrides = json.dumps(
        {
            "dataset_reader.model_name": str(TINY_BERT_DIR),
            "model.encoder.model_name": str(TINY_BERT_DIR),
            "model.encoder.entity_embedding_dim": 16,
            "train_data_path": LITBANK_FIXTURE,
            "validation_data_path": LITBANK_FIXTURE,
            "data_loader.batches_per_epoch": 2,
            "data_loader.batch_sampler.batch_size": 2,
        }
    )
    model = train_model_from_file(str(CONFIG_DIR / config), str(tmp_path / "run"), overrides=overrides)
    assert (model.negative_spans_per_instance, model.hard_negative_spans_per_instance) == negatives
    assert model.encoder.entity_aware_attention
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert {"best_validation_f1", "validation_precision", "validation_recall"} <= set(metrics)
    assert "validation_f1-PER" in metrics  # per-label values at the end of the epoch


def test_conll2003_config_follows_luke():
    params = params_of("conll2003_spanbert_large.jsonnet")
    reader = params["dataset_reader"]
    assert reader["type"] == "spanbert_span_ner_conll" and reader["max_span_width"] == 16
    assert reader["max_seq_length"] == 512 and reader["context_window"] == "fill"
    assert params["train_data_path"].startswith("data/conll2003/")
    model = params["model"]
    assert model["decoding"] == "flat" and model["use_entities"] and model["encoder"]["entity_aware_attention"]
    assert "negative_spans_per_instance" not in model  # every span, as LUKE
    trainer = params["trainer"]
    optimizer = trainer["optimizer"]
    assert optimizer["lr"] == 1e-5 and optimizer["betas"] == [0.9, 0.98]
    assert optimizer["eps"] == 1e-6 and optimizer["weight_decay"] == 0.01
    assert trainer["num_epochs"] == 5 and trainer["grad_norm"] == 5.0
    # batch 2 x 4 accumulation = 8; 14,041 sentences -> 1,756 steps a epoch; 6 % of 8,780 warm up
    assert params["data_loader"]["batch_sampler"]["batch_size"] * trainer["num_gradient_accumulation_steps"] == 8
    assert trainer["learning_rate_scheduler"] == {"type": "linear_with_warmup", "warmup_steps": 526}
