"""
Every shipped config (``training_configs/**`` and ``fixtures/configs/**``), its encoder swapped for the tiny
BERT and its data for the fixtures, builds its model and optimizer through allennlp, and every parameter lands
in the group its name says (``training_configs/common/optimizer.libsonnet``): ``encoder.`` parameters in the
encoder groups, everything else in the head groups, no weight decay exactly on biases and LayerNorm weights,
with each config's learning rates and weight decays.
"""

import copy
import itertools
import shutil
from typing import Any, Dict, List

import allennlp_models.pair_classification  # noqa: F401  (registers the "snli" reader)
import pytest
import torch
from allennlp.common import Params
from allennlp.common.registrable import Registrable
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.modules import TextFieldEmbedder
from allennlp.training.optimizers import Optimizer
from transformers import PreTrainedModel

from spanbert_lib.common.modules import SpanBoundaryHead, save_span_boundary_head
from spanbert_lib.common.modules.entity_aware import EntityAwareEncoder
from spanbert_lib.common.transformers_encoder import huggingface_encoder
from tests import REPO_ROOT, TINY_BERT_DIR

CONFIGS = sorted(
    str(path.relative_to(REPO_ROOT))
    for pattern in ("training_configs/**/*.jsonnet", "fixtures/configs/**/*.jsonnet")
    for path in REPO_ROOT.glob(pattern)
)

# the fixture each reader type reads instead of the real data (for the labels of the vocabulary)
FIXTURE_DATA = {
    "spanbert_coref": "fixtures/coref/segmented_document.gold_conll",
    "spanbert_squad": "fixtures/qa/squad11.json",
    "spanbert_mrqa": "fixtures/qa/mrqa_sample.jsonl",
    "spanbert_tacred": "fixtures/relation/tacred_fixture.json",
    "spanbert_semeval2010_task8": "fixtures/relation/semeval2010_sample.txt",
    "spanbert_span_ner_conll": "fixtures/ner/conll2003_iob2.txt",
    "spanbert_span_ner_litbank": "fixtures/ner/litbank",
    "spanbert_open_entity": "fixtures/entity_typing/open_entity_luke.json",
    "spanbert_pretraining_corpus": "fixtures/corpus/miscellany.txt",
    "text_classification_json": "fixtures/classification/train.jsonl",
    "snli": "fixtures/classification_pair/train.jsonl",
}

# the kind of `model.encoder` of every model of this library
ENCODER_KINDS = {
    "spanbert_pretraining": PreTrainedModel,
    "spanbert_qa": PreTrainedModel,
    "spanbert_coref": TextFieldEmbedder,
    "spanbert_relation_classifier": TextFieldEmbedder,
    "spanbert_span_ner": EntityAwareEncoder,
    "spanbert_entity_typing": EntityAwareEncoder,
    "spanbert_entity_pair_relation_classifier": EntityAwareEncoder,
}
# models of other packages (allennlp's basic_classifier has no `encoder` attribute): one
# learning rate, only the no-decay group (`optimizer.no_decay_groups()`)
OTHER_PACKAGES = {"basic_classifier"}

# config -> (encoder lr, head lr, encoder weight decay, head weight decay): what each config trained with
# before the parameter groups were shared
EXPECTED = {
    "fixtures/configs/classification/tiny_pair_classifier.jsonnet": (1e-3, 1e-3, 0.01, 0.01),
    "fixtures/configs/coref/spanbert_coref_tiny.jsonnet": (1e-3, 1e-2, 0.0, 0.0),
    "fixtures/configs/entity_typing/entity_typing_tiny.jsonnet": (1e-3, 1e-3, 0.01, 0.01),
    "fixtures/configs/ner/span_ner_pretrained_sbo_minilm.jsonnet": (5e-5, 1e-3, 0.01, 0.01),
    "fixtures/configs/ner/span_ner_pretrained_sbo_tiny.jsonnet": (1e-3, 1e-3, 0.01, 0.01),
    "fixtures/configs/ner/span_ner_tiny.jsonnet": (1e-3, 1e-3, 0.01, 0.01),
    "fixtures/configs/pretraining/spanbert_tiny.jsonnet": (1e-3, 1e-3, 0.0, 0.0),
    "fixtures/configs/qa/mrqa_tiny.jsonnet": (1e-3, 1e-3, 0.01, 0.01),
    "fixtures/configs/qa/squad11_tiny.jsonnet": (1e-3, 1e-3, 0.01, 0.01),
    "fixtures/configs/qa/squad20_tiny.jsonnet": (1e-3, 1e-3, 0.01, 0.01),
    "fixtures/configs/relation/tiny_entity_pair_classifier.jsonnet": (1e-3, 1e-3, 0.01, 0.01),
    "fixtures/configs/relation/tiny_relation_classifier.jsonnet": (1e-3, 1e-3, 0.01, 0.01),
    "fixtures/configs/relation/tiny_semeval2010_classifier.jsonnet": (1e-3, 1e-3, 0.01, 0.01),
    "fixtures/configs/tiny_classifier.jsonnet": (1e-3, 1e-3, 0.01, 0.01),
    "training_configs/classification/mnli_spanbert_base.jsonnet": (2e-5, 2e-5, 0.01, 0.01),
    "training_configs/classification/sst2_spanbert_base.jsonnet": (2e-5, 2e-5, 0.01, 0.01),
    "training_configs/coref/litbank_minilm.jsonnet": (5e-5, 3e-4, 0.01, 0.0),
    "training_configs/coref/litbank_minilm_agreement.jsonnet": (5e-5, 3e-4, 0.01, 0.0),
    "training_configs/coref/litbank_minilm_coarse.jsonnet": (5e-5, 3e-4, 0.01, 0.0),
    "training_configs/coref/spanbert_base.jsonnet": (2e-5, 1e-4, 0.01, 0.0),
    "training_configs/coref/spanbert_large.jsonnet": (1e-5, 3e-4, 0.01, 0.0),
    "training_configs/entity_typing/open_entity_spanbert_large.jsonnet": (1e-5, 1e-5, 0.01, 0.01),
    "training_configs/ner/conll2003_spanbert_large.jsonnet": (1e-5, 1e-5, 0.01, 0.01),
    "training_configs/ner/litbank_minilm.jsonnet": (5e-5, 5e-4, 0.01, 0.01),
    "training_configs/ner/litbank_minilm_hard_negatives.jsonnet": (5e-5, 5e-4, 0.01, 0.01),
    "training_configs/ner/litbank_minilm_no_entities.jsonnet": (5e-5, 5e-4, 0.01, 0.01),
    "training_configs/ner/litbank_minilm_plain_attention.jsonnet": (5e-5, 5e-4, 0.01, 0.01),
    "training_configs/pretraining/spanbert_base.jsonnet": (1e-4, 1e-4, 0.1, 0.1),
    "training_configs/pretraining/minilm_adapt_cpu.jsonnet": (2e-4, 2e-3, 0.01, 0.01),
    "training_configs/pretraining/spanbert_large.jsonnet": (1e-4, 1e-4, 0.1, 0.1),
    "training_configs/pretraining/spanbert_tiny_cpu.jsonnet": (2e-3, 2e-3, 0.0, 0.0),
    "training_configs/qa/mrqa_spanbert_large.jsonnet": (2e-5, 2e-5, 0.01, 0.01),
    "training_configs/qa/squad11_minilm.jsonnet": (1e-4, 1e-4, 0.01, 0.01),
    "training_configs/qa/squad11_spanbert_large.jsonnet": (2e-5, 2e-5, 0.01, 0.01),
    "training_configs/qa/squad20_spanbert_large.jsonnet": (2e-5, 2e-5, 0.01, 0.01),
    "training_configs/relation/semeval2010_minilm_cpu.jsonnet": (1e-4, 1e-4, 0.01, 0.01),
    "training_configs/relation/tacred_luke_spanbert_large.jsonnet": (1e-5, 1e-5, 0.01, 0.01),
    "training_configs/relation/tacred_minilm_cpu.jsonnet": (5e-5, 5e-5, 0.01, 0.01),
    "training_configs/relation/tacred_spanbert_large.jsonnet": (2e-5, 2e-5, 0.01, 0.01),
}
# freshly initialised parts of the encoder that train as the head does (`new_encoder_modules`)
NEW_ENCODER_MODULES = {
    "training_configs/ner/litbank_minilm.jsonnet": ("entity_embeddings",),
    "training_configs/ner/litbank_minilm_plain_attention.jsonnet": ("entity_embeddings",),
    "training_configs/ner/litbank_minilm_hard_negatives.jsonnet": ("entity_embeddings",),
    "training_configs/ner/litbank_minilm_no_entities.jsonnet": ("entity_embeddings",),  # built, unused, no gradient
}
# one fixture config per model of this library
ENCODER_CHECK_CONFIGS = {
    "spanbert_pretraining": "fixtures/configs/pretraining/spanbert_tiny.jsonnet",
    "spanbert_qa": "fixtures/configs/qa/squad11_tiny.jsonnet",
    "spanbert_coref": "fixtures/configs/coref/spanbert_coref_tiny.jsonnet",
    "spanbert_relation_classifier": "fixtures/configs/relation/tiny_relation_classifier.jsonnet",
    "spanbert_span_ner": "fixtures/configs/ner/span_ner_tiny.jsonnet",
    "spanbert_entity_typing": "fixtures/configs/entity_typing/entity_typing_tiny.jsonnet",
    "spanbert_entity_pair_relation_classifier": "fixtures/configs/relation/tiny_entity_pair_classifier.jsonnet",
}
TINY_ENCODER_CONFIG = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64}


@pytest.fixture(scope="module")
def tiny_encoder_dir(tmp_path_factory) -> str:
    """The tiny BERT with a span boundary head beside it, as `allennlp export-encoder` writes a pre-trained one
    (for the config whose span extractor reads it)."""
    directory = tmp_path_factory.mktemp("tiny_encoder")
    for file in TINY_BERT_DIR.iterdir():
        shutil.copy(file, directory / file.name)
    save_span_boundary_head(SpanBoundaryHead(32, 8, 6), directory)
    return str(directory)


def with_tiny_encoder(node: Any, encoder_dir: str) -> Any:
    """The config with every model / tokenizer directory (and span boundary archive) swapped for the tiny BERT,
    and every encoder built from a configuration made tiny."""
    if isinstance(node, list):
        return [with_tiny_encoder(item, encoder_dir) for item in node]
    if not isinstance(node, dict):
        return node
    swapped = {key: with_tiny_encoder(value, encoder_dir) for key, value in node.items()}
    for key in ("model_name", "archive"):
        if key in swapped:
            swapped[key] = encoder_dir
    if "model_name" in swapped and isinstance(swapped.get("config"), dict):
        swapped["config"] = dict(TINY_ENCODER_CONFIG)
    return swapped


def build(config: str, encoder_dir: str):
    """The config's model and its optimizer, as `allennlp train` builds them (on at most 40 fixture instances)."""
    params = with_tiny_encoder(Params.from_file(str(REPO_ROOT / config)).as_dict(), encoder_dir)
    fixture = REPO_ROOT / FIXTURE_DATA[params["dataset_reader"]["type"]]
    reader = DatasetReader.from_params(Params(copy.deepcopy(params["dataset_reader"])))
    instances = list(itertools.islice(reader.read(str(fixture)), 40))
    vocabulary = Vocabulary.from_params(Params(copy.deepcopy(params.get("vocabulary", {}))), instances=instances)
    model = Model.from_params(vocab=vocabulary, params=Params(copy.deepcopy(params["model"])))
    parameters = [[name, parameter] for name, parameter in model.named_parameters() if parameter.requires_grad]
    optimizer = Optimizer.from_params(
        model_parameters=parameters, params=Params(copy.deepcopy(params["trainer"]["optimizer"]))
    )
    return params, model, optimizer


def no_decay_parameters(model: torch.nn.Module) -> set:
    """Ids of the parameters that take no weight decay: biases, and the weights of LayerNorm modules."""
    ids = {id(parameter) for name, parameter in model.named_parameters() if name.endswith("bias")}
    ids |= {id(module.weight) for module in model.modules() if isinstance(module, torch.nn.LayerNorm)}
    return ids


def expected_group(name: str, no_decay: bool, model_type: str, new_modules: tuple) -> int:
    """Index of the optimizer group a parameter belongs in (the last one is allennlp's default group)."""
    if model_type in OTHER_PACKAGES:
        return 0 if no_decay else 1
    pretrained_encoder = name.startswith("encoder.") and not name.startswith(
        tuple(f"encoder.{module}." for module in new_modules)
    )
    if pretrained_encoder:
        return 0 if no_decay else 1
    return 2 if no_decay else 3


def test_every_config_is_checked_and_every_model_shipped():
    assert sorted(EXPECTED) == CONFIGS
    spanbert_models = {name for name in Model.list_available() if name.startswith("spanbert_")}
    assert spanbert_models == set(ENCODER_KINDS)
    shipped = {Params.from_file(str(REPO_ROOT / config))["model"]["type"] for config in CONFIGS}
    assert set(ENCODER_KINDS) <= shipped
    assert set(ENCODER_CHECK_CONFIGS) == set(ENCODER_KINDS)
    assert all(
        Params.from_file(str(REPO_ROOT / config))["model"]["type"] == model_type
        for model_type, config in ENCODER_CHECK_CONFIGS.items()
    )


@pytest.mark.parametrize("config", CONFIGS)
def test_every_parameter_lands_in_the_group_its_name_says(config, tiny_encoder_dir):
    params, model, optimizer = build(config, tiny_encoder_dir)
    model_type = params["model"]["type"]
    new_modules = NEW_ENCODER_MODULES.get(config, ())
    groups: List[Dict[str, Any]] = optimizer.param_groups
    group_of = {id(parameter): index for index, group in enumerate(groups) for parameter in group["params"]}
    no_decay = no_decay_parameters(model)
    trained = [(name, parameter) for name, parameter in model.named_parameters() if parameter.requires_grad]
    assert len(group_of) == len(trained)
    misplaced = {
        name: (group_of[id(parameter)], expected)
        for name, parameter in trained
        if group_of[id(parameter)]
        != (expected := expected_group(name, id(parameter) in no_decay, model_type, new_modules))
    }
    assert not misplaced, f"parameter -> (group, expected group): {misplaced}"

    encoder_lr, head_lr, encoder_decay, head_decay = EXPECTED[config]
    if model_type in OTHER_PACKAGES:
        assert len(groups) == 2
        assert [(group["lr"], group["weight_decay"]) for group in groups] == [(head_lr, 0.0), (head_lr, head_decay)]
        return
    assert len(groups) == 4
    assert [(group["lr"], group["weight_decay"]) for group in groups] == [
        (encoder_lr, 0.0),
        (encoder_lr, encoder_decay),
        (head_lr, 0.0),
        (head_lr, head_decay),
    ]
    assert groups[0]["params"] and groups[1]["params"] and groups[3]["params"]


@pytest.mark.parametrize("config", sorted(ENCODER_CHECK_CONFIGS.values()))
def test_the_encoder_is_one_attribute_of_the_kind_its_role_says(config, tiny_encoder_dir):
    """`model.encoder` is of its role's kind, every parameter of the Hugging Face model inside it
    (`huggingface_encoder`) is named `encoder.*`, and there is no other accessor."""
    params, model, _ = build(config, tiny_encoder_dir)
    assert isinstance(model.encoder, ENCODER_KINDS[params["model"]["type"]])
    names = {id(parameter): name for name, parameter in model.named_parameters()}
    transformer = huggingface_encoder(model)
    assert isinstance(transformer, PreTrainedModel)
    assert all(names[id(parameter)].startswith("encoder.") for parameter in transformer.parameters())
    assert not hasattr(model, "transformer")


def test_one_learning_rate_stays_one_setting(tiny_encoder_dir):
    """A config with one learning rate for everything: overriding the optimizer's lr changes the encoder's too."""
    config = "fixtures/configs/qa/squad11_tiny.jsonnet"
    params = Params.from_file(str(REPO_ROOT / config), params_overrides='{"trainer.optimizer.lr": 0.02}').as_dict()
    model = Model.from_params(vocab=Vocabulary(), params=Params(with_tiny_encoder(params, tiny_encoder_dir)["model"]))
    parameters = [[name, parameter] for name, parameter in model.named_parameters() if parameter.requires_grad]
    optimizer = Optimizer.from_params(model_parameters=parameters, params=Params(params["trainer"]["optimizer"]))
    assert [group["lr"] for group in optimizer.param_groups] == [0.02] * 4


def test_huggingface_encoder_names_the_model_class_when_there_is_none():
    from allennlp.common.checks import ConfigurationError

    class NoEncoder(torch.nn.Module):
        pass

    class PlainEncoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = torch.nn.Linear(2, 2)

    with pytest.raises(ConfigurationError, match="^NoEncoder has no encoder module"):
        huggingface_encoder(NoEncoder())
    with pytest.raises(
        ConfigurationError, match=r"^PlainEncoder holds no Hugging Face model inside its encoder \(Linear\)"
    ):
        huggingface_encoder(PlainEncoder())


def test_the_former_registered_names_are_gone():
    for base, old in [
        (Model, "span_ner"),
        (Model, "entity_typing"),
        (DatasetReader, "tacred"),
        (DatasetReader, "mrqa"),
    ]:
        assert old not in Registrable._registry[base]
