"""Book text: one document per file, comma lists of corpus paths, and tokenisation of a huge
document in bounded chunks."""

import numpy as np
import pytest

from spanbert_lib.pretraining.dataset_readers import PretrainingCorpusReader, expand_text_paths
from spanbert_lib.pretraining.dataset_readers.wordpiece_corpus import whitespace_chunks
from tests.pretraining.dataset_readers.corpus_test_utils import FIXTURE_CORPUS, pieces, values, write

PARAGRAPHS = ["The cat sat on the mat.", "A dog ran fast.", "He was happy.", "It rained."]
BOOK = "\n\n".join(PARAGRAPHS) + "\n"


class _RecordingBackend:
    """Wraps a ``tokenizers.Tokenizer`` and records the characters of each ``encode_batch`` call."""

    def __init__(self, backend):
        self._backend = backend
        self.call_characters = []

    def encode_batch(self, texts, **kwargs):
        self.call_characters.append(sum(len(text) for text in texts))
        return self._backend.encode_batch(texts, **kwargs)


def test_a_book_file_is_one_document_with_the_file_separator(hand_tokenizer_dir, tmp_path):
    book = write(tmp_path / "book.txt", BOOK)
    by_file = PretrainingCorpusReader(hand_tokenizer_dir, max_sequence_length=12, document_separator="file")
    by_paragraph = PretrainingCorpusReader(hand_tokenizer_dir, max_sequence_length=12)
    # one document: blocks run across paragraph breaks and are full up to the last one
    assert [pieces(i)[1:-1] for i in by_file.read(book)] == [
        ["The", "cat", "sat", "on", "the", "mat", ".", "A", "dog", "ran"],
        ["fast", ".", "He", "was", "happy", ".", "It", "rained", "."],
    ]
    # blank lines as document separators: one short block per paragraph
    assert len(list(by_paragraph.read(book))) == len(PARAGRAPHS)


def test_comma_separated_corpus_paths(tmp_path):
    first = write(tmp_path / "a" / "one.txt", "x")
    second = write(tmp_path / "b" / "two.txt", "x")
    third = write(tmp_path / "b" / "three.txt", "x")
    assert expand_text_paths(f"{first}, {tmp_path / 'b'},{first}") == [first, third, second]
    with_comma = write(tmp_path / "odd,name.txt", "x")
    assert expand_text_paths(with_comma) == [with_comma]
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        expand_text_paths(f"{first},{tmp_path / 'missing.txt'}")


@pytest.mark.parametrize(
    "text, limit, expected",
    [
        ("short text", 100, [0]),
        ("aaa bbb ccc ddd", 8, [0, 8]),  # "aaa bbb " | "ccc ddd"
        ("aaa\nbbb\tccc", 5, [0, 4, 8]),
        ("abcdefghij", 4, [0, 4, 8]),  # no whitespace: cut at the limit
    ],
)
def test_whitespace_chunks(text, limit, expected):
    starts = whitespace_chunks(text, limit)
    assert starts == expected
    ends = starts[1:] + [len(text)]
    assert all(0 < end - start <= limit for start, end in zip(starts, ends))


def test_chunked_tokenisation_equals_tokenising_whole(corpus_tokenizer_dir):
    text = (FIXTURE_CORPUS / "story_the_cartographers_daughter.txt").read_text(encoding="utf-8")
    whole = PretrainingCorpusReader(corpus_tokenizer_dir, max_sequence_length=64, max_chunk_characters=len(text))
    chunked = PretrainingCorpusReader(
        corpus_tokenizer_dir, max_sequence_length=64, max_chunk_characters=300, chunks_per_tokenizer_call=3
    )
    expected = whole.document_to_instances(text)
    actual = chunked.document_to_instances(text)
    assert len(actual) == len(expected) > 20
    for left, right in zip(actual, expected):
        assert values(left, "input_ids") == values(right, "input_ids")
        assert values(left, "word_ids") == values(right, "word_ids")


def test_a_huge_single_line_document_reaches_the_tokenizer_in_bounded_chunks(hand_tokenizer_dir, tmp_path):
    sentence = "The cat sat on the mat . A dog ran unbelievably fast . "
    repeats = 50_000  # a 2.8 MB line, one document whichever separator
    path = write(tmp_path / "one_line.txt", sentence * repeats)
    reader = PretrainingCorpusReader(hand_tokenizer_dir, max_sequence_length=512, document_separator="file")
    recorder = _RecordingBackend(reader._backend)
    reader._backend = recorder
    lengths = np.array([len(instance["input_ids"].tensor) for instance in reader.read(path)])
    bound = reader.max_chunk_characters * reader.chunks_per_tokenizer_call
    assert len(recorder.call_characters) > 1 and max(recorder.call_characters) <= bound
    assert sum(recorder.call_characters) == len(sentence) * repeats  # every character once
    pieces_per_sentence = 16  # 13 words, "unbelievably" in 4 pieces (un ##believ ##ab ##ly)
    assert (lengths - 2).sum() == pieces_per_sentence * repeats  # nothing lost at chunk boundaries
    assert (lengths[:-1] >= 500).all()  # blocks are filled across chunk boundaries
