"""The coreference training configs: the paper's settings, and optimizer groups that really split
encoder from task parameters (checked on the tiny model's parameter names)."""

import json

import pytest
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.training.optimizers import make_parameter_groups

from tests import REPO_ROOT, require_external_data

TINY_CONFIG = REPO_ROOT / "fixtures" / "configs" / "coref" / "spanbert_coref_tiny.jsonnet"


def config(name):
    return Params.from_file(str(REPO_ROOT / "training_configs" / "coref" / name)).as_dict()


@pytest.mark.parametrize(
    "name, segment_len, encoder_lr, task_lr",
    [
        ("spanbert_base.jsonnet", 384, 2e-5, 1e-4),
        ("spanbert_large.jsonnet", 512, 1e-5, 3e-4),
    ],
)
def test_paper_settings(name, segment_len, encoder_lr, task_lr):
    params = config(name)
    assert params["dataset_reader"]["token_indexers"]["tokens"]["max_segment_len"] == segment_len
    assert params["dataset_reader"]["max_training_segments"] == 3
    assert params["validation_dataset_reader"]["max_training_segments"] is None
    model = params["model"]
    assert (
        model["ffnn_size"],
        model["max_span_width"],
        model["top_span_ratio"],
        model["max_top_antecedents"],
        model["coref_depth"],
        model["dropout"],
    ) == (3000, 30, 0.4, 50, 2, 0.3)
    trainer = params["trainer"]
    assert trainer["num_epochs"] == 20 and params["data_loader"]["batch_size"] == 1
    optimizer = trainer["optimizer"]
    assert optimizer["lr"] == task_lr
    assert [group[1].get("lr") for group in optimizer["parameter_groups"]] == [encoder_lr, encoder_lr, None]
    assert trainer["learning_rate_scheduler"]["warmup_steps"] == int(0.1 * 2802 * 20)


def test_optimizer_groups_split_encoder_and_task_parameters():
    params = Params.from_file(str(TINY_CONFIG)).as_dict()
    model = Model.from_params(vocab=Vocabulary(), params=Params(params["model"]))
    groups_config = config("litbank_minilm.jsonnet")["trainer"]["optimizer"]["parameter_groups"]
    groups_config = [(regexes, options) for regexes, options in groups_config]
    groups = make_parameter_groups(list(model.named_parameters()), groups_config)
    names = {id(p): n for n, p in model.named_parameters()}
    no_decay, decay, task_no_decay, task = ([names[id(p)] for p in group["params"]] for group in groups)
    assert no_decay and all(
        n.startswith("encoder.") and (n.endswith("bias") or n.endswith("LayerNorm.weight")) for n in no_decay
    )
    assert decay and all(n.startswith("encoder.") and not n.endswith("bias") for n in decay)
    assert "encoder.token_embedder_tokens.segment_encoder.transformer_model.embeddings.word_embeddings.weight" in decay
    assert task_no_decay and all(n.endswith("bias") and not n.startswith("encoder.") for n in task_no_decay)
    assert task and not any(n.startswith("encoder.") or n.endswith("bias") for n in task)
    assert len(no_decay) + len(decay) + len(task_no_decay) + len(task) == len(names)


@pytest.mark.external_data
def test_tiny_model_on_a_litbank_document():
    path = require_external_data("coref", "litbank", "1023_bleak_house_brat.conll")
    overrides = {
        "dataset_reader.max_training_segments": 3,
        "dataset_reader.token_indexers.tokens.max_segment_len": 128,
        "dataset_reader.max_span_width": 10,
    }
    params = Params.from_file(str(TINY_CONFIG), params_overrides=json.dumps(overrides))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    model = Model.from_params(vocab=Vocabulary(), params=params.pop("model"))
    instance = next(iter(reader.read(path)))
    assert instance["metadata"]["word_offset"] >= 0 and reader.last_read_stats.windowed == 1
    batch = Batch([instance])
    batch.index_instances(Vocabulary())
    output = model(**batch.as_tensor_dict())
    output["loss"].backward()
    words = len(instance["metadata"]["words"])
    assert output["top_spans"].shape[1] == int(0.4 * words)
    assert 0.0 <= model.get_metrics()["pruned_mention_recall"] <= 1.0


def test_coarse_litbank_config_is_the_litbank_config_without_fine_scoring():
    default, coarse = config("litbank_minilm.jsonnet"), config("litbank_minilm_coarse.jsonnet")
    assert coarse["model"].pop("fine_scoring") is False and coarse["model"].pop("coref_depth") == 1
    default["model"].pop("coref_depth")
    assert coarse == default
    model = Model.from_params(
        vocab=Vocabulary(),
        params=Params(
            Params.from_file(str(TINY_CONFIG)).as_dict()["model"] | {"fine_scoring": False, "coref_depth": 1}
        ),
    )
    assert model._pairwise_scorer is None
