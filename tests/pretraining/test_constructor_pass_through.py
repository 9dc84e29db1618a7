"""
Masker and corpus-reader subclasses take only their own arguments and pass the shared ones to their
base class through ``**kwargs``; configs still set both (allennlp's FromParams follows ``**kwargs``
to the base constructor).
"""

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader

from spanbert_lib.pretraining.masking import Masker
from tests import TINY_BERT_DIR


@pytest.mark.parametrize(
    "config, own",
    [
        ({"type": "geometric_span", "geometric_p": 0.3, "max_span_length": 7}, {"geometric_p": 0.3}),
        ({"type": "named_entity", "entity_fraction": 0.25}, {"entity_fraction": 0.25}),
        ({"type": "noun_phrase", "entity_fraction": 0.75}, {"entity_fraction": 0.75}),
    ],
)
def test_maskers_take_the_shared_arguments_from_a_config(config, own):
    masker = Masker.from_params(
        Params({**config, "masking_budget": 0.2, "mask_probability": 0.7, "random_probability": 0.2})
    )
    assert (masker.masking_budget, masker.mask_probability, masker.random_probability) == (0.2, 0.7, 0.2)
    assert all(getattr(masker, name) == value for name, value in own.items())
    with pytest.raises(ValueError, match="masking_budget must be in"):
        Masker.from_params(Params({**config, "masking_budget": 2.0}))


@pytest.mark.parametrize(
    "reader_type, own, minimum",
    [
        ("spanbert_pretraining_corpus", {}, 3),
        ("spanbert_nsp_corpus", {"seed": 7, "random_document_pool_size": 9}, 5),
    ],
)
def test_corpus_readers_take_the_shared_arguments_from_a_config(reader_type, own, minimum):
    reader = DatasetReader.from_params(
        Params(
            {
                "type": reader_type,
                "model_name": str(TINY_BERT_DIR),
                "max_sequence_length": 64,
                "min_document_words": 2,
                "documents_per_batch": 3,
                **own,
            }
        )
    )
    assert (reader.max_sequence_length, reader.min_document_words, reader.documents_per_batch) == (64, 2, 3)
    assert all(getattr(reader, name) == value for name, value in own.items())
    with pytest.raises(ConfigurationError, match=f"max_sequence_length must be >= {minimum}"):
        DatasetReader.from_params(
            Params({"type": reader_type, "model_name": str(TINY_BERT_DIR), "max_sequence_length": minimum - 1})
        )
