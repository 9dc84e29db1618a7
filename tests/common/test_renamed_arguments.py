"""
Every model takes its encoder as ``transformer`` (README "Conventions"); configs written with the former
argument names build the same model and log one deprecation warning per name.
"""

import json
import logging

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model

import spanbert_lib.plugin  # noqa: F401
from spanbert_lib.common import deprecated_names
from tests.conftest import REPO_ROOT

TINY_BERT = str(REPO_ROOT / "fixtures" / "tiny_bert")
ENTITY_AWARE = {"type": "entity_aware_transformer", "model_name": TINY_BERT, "entity_embedding_dim": 16}
SEGMENTED = {"token_embedders": {"tokens": {"type": "segmented_transformer", "model_name": TINY_BERT}}}
MARKER_AWARE = {
    "token_embedders": {
        "tokens": {
            "type": "entity_marker_aware",
            "model_name": TINY_BERT,
            "tokenizer_kwargs": {"additional_special_tokens": ["[E1]", "[/E1]"]},
        }
    }
}
TINY_CONFIG = {"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32}

# registered model -> (its other arguments, the value under `transformer`, the former arguments for the same model)
CASES = {
    "spanbert_pretraining": (
        {},
        {"model_name": TINY_BERT, "config": TINY_CONFIG},
        {"transformer_model": TINY_BERT, "transformer_config": TINY_CONFIG},
    ),
    "spanbert_qa": (
        {},
        {"model_name": TINY_BERT, "from_pretrained_kwargs": {"attn_implementation": "eager"}},
        {"transformer_model_name": TINY_BERT, "transformer_kwargs": {"attn_implementation": "eager"}},
    ),
    "spanbert_coref": (
        {"ffnn_size": 8, "use_speaker": False, "use_genre": False},
        SEGMENTED,
        {"text_field_embedder": SEGMENTED},
    ),
    "spanbert_relation_classifier": ({"negative_label": "Other"}, MARKER_AWARE, {"text_field_embedder": MARKER_AWARE}),
    "spanbert_span_ner": ({}, ENTITY_AWARE, {"encoder": ENTITY_AWARE}),
    "spanbert_entity_typing": ({}, ENTITY_AWARE, {"encoder": ENTITY_AWARE}),
    "spanbert_entity_pair_relation_classifier": ({"negative_label": "Other"}, ENTITY_AWARE, {"encoder": ENTITY_AWARE}),
}


def vocabulary() -> Vocabulary:
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["Other", "Cause-Effect(e1,e2)", "O", "PER"], "labels")
    return vocab


def build(model_type: str, arguments: dict) -> Model:
    torch.manual_seed(0)
    others = CASES[model_type][0]
    # a JSON round trip, not deepcopy: two arguments given the same dict must not share it (Params pops from it)
    params = json.loads(json.dumps({"type": model_type, **others, **arguments}))
    return Model.from_params(vocab=vocabulary(), params=Params(params))


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(deprecated_names, "_warned", set())


@pytest.mark.parametrize("model_type", CASES)
def test_former_argument_names_build_the_same_model_and_warn_once(model_type, caplog):
    _, transformer, former = CASES[model_type]
    current = build(model_type, {"transformer": transformer})
    with caplog.at_level(logging.WARNING, logger="spanbert_lib.common.deprecated_names"):
        old = build(model_type, former)
        build(model_type, former)
    warnings = [r.getMessage() for r in caplog.records if "is deprecated" in r.getMessage()]
    assert len(warnings) == len(former), warnings  # once per former name, not once per model built
    for name in former:
        assert any(f"'{name}' is deprecated" in w and "'transformer" in w for w in warnings), (name, warnings)
    assert current.transformer.config.to_dict() == old.transformer.config.to_dict()
    old_state, new_state = old.state_dict(), current.state_dict()
    assert old_state.keys() == new_state.keys()
    assert all(torch.equal(old_state[k], new_state[k]) for k in new_state)


@pytest.mark.parametrize("model_type", CASES)
def test_both_names_or_neither_is_an_error(model_type):
    _, transformer, former = CASES[model_type]
    with pytest.raises(ConfigurationError, match=f"{model_type}: give transformer only"):
        build(model_type, {"transformer": transformer, **former})
    with pytest.raises(ConfigurationError, match=f"{model_type}: transformer is required"):
        build(model_type, {})


def test_qa_refuses_a_from_scratch_config():
    with pytest.raises(ConfigurationError, match="transformer.config is not supported"):
        build("spanbert_qa", {"transformer": {"model_name": TINY_BERT, "config": TINY_CONFIG}})


@pytest.mark.parametrize("reader_type", ["spanbert_pretraining_corpus", "spanbert_nsp_corpus"])
def test_pretraining_readers_take_model_name_and_still_accept_tokenizer(reader_type, caplog):
    reader = DatasetReader.from_params(Params({"type": reader_type, "model_name": TINY_BERT}))
    assert reader.model_name == TINY_BERT
    with caplog.at_level(logging.WARNING, logger="spanbert_lib.common.deprecated_names"):
        old = DatasetReader.from_params(Params({"type": reader_type, "tokenizer": TINY_BERT}))
    assert old.model_name == TINY_BERT and old.tokenizer.vocab == reader.tokenizer.vocab
    assert any(
        "'tokenizer' is deprecated" in r.getMessage() and "'model_name'" in r.getMessage() for r in caplog.records
    )
