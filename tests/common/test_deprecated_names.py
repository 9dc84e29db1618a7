import logging

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.registrable import Registrable
from allennlp.data import DatasetReader
from allennlp.models import Model
from allennlp.predictors import Predictor

import spanbert_lib.plugin  # noqa: F401  (registers every component)
from spanbert_lib.common import deprecated_names
from spanbert_lib.common.deprecated_names import (
    current_name,
    deprecated_aliases,
    register_deprecated_alias,
    renamed_argument,
)
from spanbert_lib.ner.dataset_readers.span_ner_conll import SpanNerConllReader
from tests.conftest import TINY_BERT_DIR

PREFIXED_BASES = (Model, DatasetReader, Predictor)
TINY_BERT = str(TINY_BERT_DIR)


@pytest.fixture
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(deprecated_names, "_warned", set())


def test_old_reader_name_builds_the_same_reader_and_warns_once(fresh_warnings, caplog):
    with caplog.at_level(logging.WARNING, logger=deprecated_names.__name__):
        readers = [
            DatasetReader.from_params(Params({"type": "span_ner_conll", "model_name": TINY_BERT})) for _ in range(2)
        ]
    assert all(type(reader) is SpanNerConllReader for reader in readers)
    warnings = [record.getMessage() for record in caplog.records]
    assert warnings == [
        "DatasetReader type 'span_ner_conll' is deprecated and will be removed; use 'spanbert_span_ner_conll' instead."
    ]


def test_new_name_does_not_warn(fresh_warnings, caplog):
    with caplog.at_level(logging.WARNING, logger=deprecated_names.__name__):
        DatasetReader.from_params(Params({"type": "spanbert_span_ner_conll", "model_name": TINY_BERT}))
    assert caplog.records == []


@pytest.mark.parametrize("base", PREFIXED_BASES, ids=lambda base: base.__name__)
def test_every_alias_resolves_like_its_new_name(base):
    aliases = deprecated_aliases(base)
    assert aliases, f"no deprecated {base.__name__} names"
    for old_name, new_name in aliases.items():
        assert new_name.startswith("spanbert_")
        assert base.resolve_class_name(old_name) == base.resolve_class_name(new_name)
        assert current_name(base, old_name) == new_name
    assert current_name(base, "spanbert_coref") == "spanbert_coref"


@pytest.mark.parametrize("base", PREFIXED_BASES, ids=lambda base: base.__name__)
def test_models_readers_and_predictors_of_the_library_are_prefixed(base):
    aliases = deprecated_aliases(base)
    unprefixed = [
        name
        for name, (subclass, _) in Registrable._registry[base].items()
        if subclass.__module__.startswith("spanbert_lib.") and not name.startswith("spanbert_") and name not in aliases
    ]
    assert unprefixed == []


def test_model_default_predictors_are_current_names():
    for name, (subclass, _) in Registrable._registry[Model].items():
        if subclass.__module__.startswith("spanbert_lib.") and subclass.default_predictor is not None:
            assert subclass.default_predictor not in deprecated_aliases(Predictor), name


def test_alias_errors():
    class Base(Registrable):
        pass

    @Base.register("spanbert_thing")
    class Thing(Base):
        pass

    @Base.register("other")
    class Other(Base):
        pass

    with pytest.raises(ValueError, match="'spanbert_missing' is not a registered Base"):
        register_deprecated_alias(Base, "missing", "spanbert_missing")
    with pytest.raises(ValueError, match="cannot alias 'other': it is already a registered Base"):
        register_deprecated_alias(Base, "other", "spanbert_thing")
    register_deprecated_alias(Base, "thing", "spanbert_thing")
    register_deprecated_alias(Base, "thing", "spanbert_thing")  # idempotent (module re-import)
    assert Base.by_name("thing") is Thing
    assert sorted(Base.list_available()) == ["other", "spanbert_thing", "thing"]


def test_renamed_argument(fresh_warnings, caplog):
    with caplog.at_level(logging.WARNING, logger=deprecated_names.__name__):
        assert renamed_argument("Reader", "model_name", "new", "transformer_model_name", None) == "new"
        for _ in range(2):
            assert renamed_argument("Reader", "model_name", None, "transformer_model_name", "old") == "old"
    assert [record.getMessage() for record in caplog.records] == [
        "Reader argument 'transformer_model_name' is deprecated and will be removed; use 'model_name' instead."
    ]
    with pytest.raises(ConfigurationError, match=r"^Reader: give model_name only \(transformer_model_name is"):
        renamed_argument("Reader", "model_name", "new", "transformer_model_name", "old")
    with pytest.raises(ConfigurationError, match="^Reader: model_name is required$"):
        renamed_argument("Reader", "model_name", None, "transformer_model_name", None)


def test_qa_reader_takes_model_name_and_its_former_name(fresh_warnings):
    from spanbert_lib.qa.dataset_readers import SquadReader

    for name in ("model_name", "transformer_model_name"):
        reader = DatasetReader.from_params(Params({"type": "spanbert_squad", name: TINY_BERT}))
        assert type(reader) is SquadReader and reader.window_tokenizer is not None
