import pytest
from allennlp.common.checks import ConfigurationError

from spanbert_lib.common.reader_tokenizers import reader_tokenizer
from spanbert_lib.ner.dataset_readers import SpanNerConllReader
from tests import TINY_BERT_DIR


def test_budget_leaves_room_for_cls_and_sep():
    tokenizers = reader_tokenizer("Reader", str(TINY_BERT_DIR), max_seq_length=10)
    assert tokenizers.budget == 8
    assert tokenizers.hf_tokenizer.is_fast and tokenizers.tokenizer.tokenizer is tokenizers.hf_tokenizer


def test_slow_tokenizer_is_refused():
    with pytest.raises(ConfigurationError, match=r"^Reader: .*tiny_bert has no fast tokenizer"):
        reader_tokenizer("Reader", str(TINY_BERT_DIR), max_seq_length=10, tokenizer_kwargs={"use_fast": False})


def test_no_room_for_text_is_refused_by_the_readers_that_use_it():
    with pytest.raises(
        ConfigurationError, match="^SpanNerConllReader: max_seq_length 2 leaves no room next to the 2 special tokens$"
    ):
        SpanNerConllReader(str(TINY_BERT_DIR), max_seq_length=2)
