"""Tokenizers for the corpus reader tests: a hand-written vocabulary (exact expectations) and one
trained on the fixture corpus (realistic pieces)."""

import pytest

from spanbert_lib.common.wordpiece import train_wordpiece_tokenizer
from spanbert_lib.pretraining.dataset_readers import expand_text_paths, iter_documents
from tests.pretraining.dataset_readers.corpus_test_utils import FIXTURE_CORPUS, HAND_VOCAB


@pytest.fixture(scope="session")
def hand_tokenizer_dir(tmp_path_factory) -> str:
    """A cased BERT WordPiece tokenizer over exactly ``HAND_VOCAB`` (ids = list positions)."""
    from transformers import BertTokenizerFast

    directory = tmp_path_factory.mktemp("hand_tokenizer")
    vocab_file = directory / "vocab.txt"
    vocab_file.write_text("\n".join(HAND_VOCAB) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab_file=str(vocab_file), do_lower_case=False).save_pretrained(str(directory))
    return str(directory)


@pytest.fixture(scope="session")
def corpus_tokenizer_dir(tmp_path_factory) -> str:
    """A 1000-entry cased WordPiece tokenizer trained on the fixture corpus."""
    directory = tmp_path_factory.mktemp("corpus_tokenizer")
    texts = (document.text for document in iter_documents(expand_text_paths(FIXTURE_CORPUS)))
    train_wordpiece_tokenizer(texts, directory, vocab_size=1000)
    return str(directory)
