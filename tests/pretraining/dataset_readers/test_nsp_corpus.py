import logging

from allennlp.common import Params
from allennlp.data import Batch
from allennlp.data.dataset_readers import DatasetReader

from spanbert_lib.pretraining.dataset_readers import NspCorpusReader, expand_text_paths, iter_documents
from tests.pretraining.dataset_readers.corpus_test_utils import FIXTURE_CORPUS, PAD_ID, pieces, values, write

READER_LOGGER = "spanbert_lib.pretraining.dataset_readers.wordpiece_corpus"
FOUR_SENTENCES = "The cat sat. A dog ran. He was happy. It rained."


def test_is_next_pairs_token_by_token(hand_tokenizer_dir, tmp_path):
    # Pairs of 8 wordpieces; sentences of 4, 4, 4 and 3 pieces: two pairs of two whole sentences.
    reader = NspCorpusReader(
        hand_tokenizer_dir, max_sequence_length=11, random_next_probability=0.0, short_sequence_probability=0.0
    )
    first, second = list(reader.read(write(tmp_path / "c.txt", FOUR_SENTENCES)))
    assert pieces(first) == ["[CLS]", "The", "cat", "sat", ".", "[SEP]", "A", "dog", "ran", ".", "[SEP]"]
    assert values(first, "segment_ids") == [0] * 6 + [1] * 5
    assert values(first, "word_ids") == [-1, 0, 1, 2, 3, -1, 4, 5, 6, 7, -1]
    assert values(first, "next_sentence_label") == 0
    assert first["next_sentence_label"].tensor.dim() == 0
    assert pieces(second) == ["[CLS]", "He", "was", "happy", ".", "[SEP]", "It", "rained", ".", "[SEP]"]
    assert values(second, "segment_ids") == [0] * 6 + [1] * 4
    assert values(second, "word_ids") == [-1, 0, 1, 2, 3, -1, 4, 5, 6, -1]


def test_line_sentence_splitter(hand_tokenizer_dir):
    reader = NspCorpusReader(
        hand_tokenizer_dir,
        max_sequence_length=64,
        random_next_probability=0.0,
        short_sequence_probability=0.0,
        sentence_splitter="line",
    )
    # one "sentence" per line: the only split point is the line break
    (pair,) = reader.document_to_instances("The cat sat. A dog ran.\nHe was happy.")
    assert pieces(pair) == [
        "[CLS]",
        "The",
        "cat",
        "sat",
        ".",
        "A",
        "dog",
        "ran",
        ".",
        "[SEP]",
        "He",
        "was",
        "happy",
        ".",
        "[SEP]",
    ]


def test_random_next_comes_from_another_document(hand_tokenizer_dir, tmp_path):
    path = write(tmp_path / "c.txt", f"{FOUR_SENTENCES}\n\nBarack Obama visited Paris in 2010.\n")
    reader = NspCorpusReader(hand_tokenizer_dir, max_sequence_length=11, random_next_probability=1.0)
    instances = list(reader.read(path))
    assert instances and all(values(i, "next_sentence_label") == 1 for i in instances)
    cats = "The cat sat . A dog ran . He was happy . It rained ."
    obama = "Barack Obama visited Paris in 2010 ."
    # a random B starts at a sentence start of the other document (and may be cut at its end)
    from_cats = {cats[cats.index(s) :] for s in ("The", "A", "He", "It")}
    for instance in instances:
        tokens = pieces(instance)
        sep = tokens.index("[SEP]")
        a, b = " ".join(tokens[1:sep]), " ".join(tokens[sep + 1 : -1])
        if a in obama:
            assert any(suffix.startswith(b) for suffix in from_cats), b
        else:
            assert a in cats and obama.startswith(b), (a, b)
        assert values(instance, "segment_ids") == [0] * (sep + 1) + [1] * (len(tokens) - sep - 1)


def test_single_document_random_next_falls_back_to_same_document(hand_tokenizer_dir, tmp_path, caplog):
    reader = NspCorpusReader(hand_tokenizer_dir, max_sequence_length=11, random_next_probability=1.0)
    with caplog.at_level(logging.INFO, logger=READER_LOGGER):
        instances = list(reader.read(write(tmp_path / "c.txt", FOUR_SENTENCES)))
    assert instances and all(values(i, "next_sentence_label") == 1 for i in instances)
    assert f"random_from_same_document: {len(instances)}" in caplog.text


def test_pair_truncation_keeps_whole_words(hand_tokenizer_dir):
    reader = NspCorpusReader(hand_tokenizer_dir, max_sequence_length=11)
    # A (7 pieces) loses words from its front, B (9 pieces) from its back; 4 + 3 fit in 8
    pair = reader.text_to_instance("The cat sat on the mat.", "A dog ran unbelievably fast.", is_next=True)
    assert pieces(pair) == ["[CLS]", "on", "the", "mat", ".", "[SEP]", "A", "dog", "ran", "[SEP]"]
    assert values(pair, "word_ids") == [-1, 0, 1, 2, 3, -1, 4, 5, 6, -1]
    assert values(pair, "segment_ids") == [0, 0, 0, 0, 0, 0, 1, 1, 1, 1]
    assert values(pair, "next_sentence_label") == 0
    unlabeled = reader.text_to_instance("The cat sat.", "A dog ran.")
    assert "next_sentence_label" not in unlabeled.fields


def test_padding_values(hand_tokenizer_dir):
    reader = NspCorpusReader(hand_tokenizer_dir)
    long = reader.text_to_instance("The cat sat on the mat.", "A dog ran.", is_next=False)
    short = reader.text_to_instance("The cat sat.", "It rained.", is_next=True)
    tensors = Batch([long, short]).as_tensor_dict()
    assert tensors["input_ids"].shape == (2, 14)  # 1 + 7 + 1 + 4 + 1 and 1 + 4 + 1 + 3 + 1
    assert tensors["input_ids"][1].tolist()[-5:] == [reader.sep_token_id] + [PAD_ID] * 4
    assert tensors["word_ids"][1].tolist() == [-1, 0, 1, 2, 3, -1, 4, 5, 6, -1] + [-1] * 4
    assert tensors["segment_ids"][1].tolist() == [0] * 6 + [1] * 4 + [0] * 4
    assert tensors["next_sentence_label"].tolist() == [1, 0]


def _fixture_pairs(reader):
    instances = list(reader.read(FIXTURE_CORPUS))
    return [(values(i, "input_ids"), values(i, "next_sentence_label")) for i in instances], instances


def test_fixture_corpus_pairs(corpus_tokenizer_dir):
    max_length = 64
    reader = NspCorpusReader(corpus_tokenizer_dir, max_sequence_length=max_length, seed=7)
    pairs, instances = _fixture_pairs(reader)
    labels = [label for _, label in pairs]
    assert 0.4 <= sum(labels) / len(labels) <= 0.6  # about half (forced random: a last one-sentence chunk)
    assert _fixture_pairs(NspCorpusReader(corpus_tokenizer_dir, max_sequence_length=max_length, seed=7))[0] == pairs
    assert _fixture_pairs(NspCorpusReader(corpus_tokenizer_dir, max_sequence_length=max_length, seed=8))[0] != pairs

    tokenizer = reader.tokenizer
    documents = [
        " " + " ".join(map(str, tokenizer(d.text, add_special_tokens=False)["input_ids"])) + " "
        for d in iter_documents(expand_text_paths(FIXTURE_CORPUS))
    ]
    continuation = {tokenizer.convert_tokens_to_ids(t) for t in tokenizer.get_vocab() if t.startswith("##")}
    for (ids, label), instance in zip(pairs, instances):
        assert len(ids) <= max_length
        sep = ids.index(tokenizer.sep_token_id)
        a, b = ids[1:sep], ids[sep + 1 : -1]
        assert a and b and ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
        assert a[0] not in continuation and b[0] not in continuation  # segments start at word starts
        words = values(instance, "word_ids")
        assert [words[0], words[sep], words[-1]] == [-1, -1, -1]
        assert words[1:sep] == sorted(words[1:sep]) and words[sep + 1] == words[sep - 1] + 1
        if label == 0:  # A B is a contiguous piece of one document
            assert any(" " + " ".join(map(str, a + b)) + " " in d for d in documents)
        else:
            assert any(" " + " ".join(map(str, b)) + " " in d for d in documents)


def test_constructed_from_params(hand_tokenizer_dir):
    reader = DatasetReader.from_params(
        Params({"type": "spanbert_nsp_corpus", "model_name": hand_tokenizer_dir, "seed": 3})
    )
    assert isinstance(reader, NspCorpusReader) and reader.seed == 3
