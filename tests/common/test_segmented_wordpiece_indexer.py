"""
Segmentation into independent transformer segments (``segment_document``) and the
``segmented_wordpiece`` token indexer. Expected values come from the definitions: the
tokenizer run word by word, sentence/word boundaries computed here, greedy maximality.
"""

from typing import List

import numpy as np
import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, Instance, Token, Vocabulary
from allennlp.data.fields import TextField
from allennlp.data.token_indexers import TokenIndexer
from transformers import AutoTokenizer

from spanbert_lib.common.token_indexers import (
    SegmentedWordpieceIndexer,
    SentenceToken,
    segment_document,
    segment_words,
    sentence_tokens,
)
from spanbert_lib.coref.dataset_readers.conll_format import read_conll_documents
from tests import REPO_ROOT, TINY_BERT_DIR, require_external_data

FIXTURE = REPO_ROOT / "fixtures" / "coref" / "segmented_document.gold_conll"
SEGMENT_LENGTHS = [5, 8, 16, 24, 40, 128, 512]


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(str(TINY_BERT_DIR))


def word_pieces(tokenizer, word: str) -> List[int]:
    return tokenizer([word], is_split_into_words=True, add_special_tokens=False)["input_ids"]


def check_segmentation(document, sentences: List[List[str]], tokenizer, max_segment_len: int):
    """Every invariant of a segmentation, checked against the tokenizer word by word."""
    words = [word for sentence in sentences for word in sentence]
    budget = max_segment_len - 2
    pieces_per_word = [word_pieces(tokenizer, word) for word in words]
    expected_pieces = [piece for pieces in pieces_per_word for piece in pieces]
    lengths = [len(pieces) for pieces in pieces_per_word]
    word_end_set = set(np.cumsum(lengths).tolist())
    sentence_pieces, first_word = [], 0
    for sentence in sentences:
        sentence_pieces.append(sum(lengths[first_word : first_word + len(sentence)]))
        first_word += len(sentence)
    sentence_ends = set(np.cumsum(sentence_pieces).tolist())

    # 1. the maps point at the right pieces, word by word
    assert document.num_words == len(words)
    assert document.piece_ids.tolist() == expected_pieces
    for index, pieces in enumerate(pieces_per_word):
        start, end = document.word_starts[index], document.word_ends[index]
        assert document.piece_ids[start : end + 1].tolist() == pieces, words[index]
        assert (document.piece_word_ids[start : end + 1] == index).all()
    # sentence of each piece
    word_sentence = np.repeat(np.arange(len(sentences)), [len(s) for s in sentences])
    assert document.piece_sentence_ids.tolist() == word_sentence[document.piece_word_ids].tolist()

    # 2. segments: contiguous, cover the document, none longer than the budget
    starts, ends = document.segment_starts.tolist(), document.segment_ends.tolist()
    assert starts[0] == 0 and ends[-1] == len(expected_pieces)
    assert starts[1:] == ends[:-1]
    assert all(0 < end - start <= budget for start, end in zip(starts, ends))
    assert document.piece_segment_ids.tolist() == [s for s, (a, b) in enumerate(zip(starts, ends)) for _ in range(a, b)]

    # 3. greedy maximality: a segment ends at the last sentence end that fits; else at the last
    # word end that fits; else (one word longer than a segment) exactly after `budget` pieces
    for start, end in zip(starts, ends):
        fitting_sentence_ends = [e for e in sentence_ends if start < e <= start + budget]
        fitting_word_ends = [e for e in word_end_set if start < e <= start + budget]
        if fitting_sentence_ends:
            assert end == max(fitting_sentence_ends)
        elif fitting_word_ends:
            assert end == max(fitting_word_ends)
        else:
            assert end == start + budget

    # 4. a word is split over segments iff it has more pieces than a segment holds
    split = document.piece_segment_ids[document.word_starts] != document.piece_segment_ids[document.word_ends]
    assert split.tolist() == [length > budget for length in lengths]
    assert document.num_cut_words == sum(length > budget for length in lengths)

    # 5. padded segments: [CLS] pieces [SEP] [PAD]...; removing specials/padding gives the pieces
    input_ids, mask = document.segment_input_ids(max_segment_len)
    assert input_ids.shape == mask.shape == (len(starts), max_segment_len)
    recovered = []
    for row, (start, end) in enumerate(zip(starts, ends)):
        n = end - start
        assert input_ids[row, 0] == tokenizer.cls_token_id
        assert input_ids[row, n + 1] == tokenizer.sep_token_id
        assert (input_ids[row, n + 2 :] == tokenizer.pad_token_id).all()
        assert mask[row].tolist() == [True] * (n + 2) + [False] * (max_segment_len - n - 2)
        recovered.extend(input_ids[row, 1 : n + 1].tolist())
    assert recovered == expected_pieces
    # piece_positions address the same pieces in the flat layout
    flat = input_ids.reshape(-1)
    assert flat[document.piece_positions(max_segment_len)].tolist() == expected_pieces


def test_hand_computed_segmentation(tokenizer):
    # every word below is one piece of the tiny vocabulary; budget = 5 - 2 = 3 pieces
    sentences = [["the", "man"], ["a", "b", "c", "d"], ["x"]]
    assert all(len(word_pieces(tokenizer, w)) == 1 for s in sentences for w in s)
    document = segment_document(sentences, tokenizer, max_segment_len=5)
    # [the man] ends at a sentence end; [a b c d] does not fit -> cut at the word end after
    # "c"; then "d" + the sentence "x" fit
    assert list(zip(document.segment_starts, document.segment_ends)) == [(0, 2), (2, 5), (5, 7)]
    assert document.piece_segment_ids.tolist() == [0, 0, 1, 1, 1, 2, 2]
    assert document.piece_sentence_ids.tolist() == [0, 0, 1, 1, 1, 1, 2]
    assert document.word_starts.tolist() == document.word_ends.tolist() == list(range(7))
    input_ids, mask = document.segment_input_ids()
    ids = [tokenizer.convert_tokens_to_ids(t) for t in ["the", "man", "a", "b", "c", "d", "x"]]
    cls, sep, pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
    assert input_ids.tolist() == [
        [cls, ids[0], ids[1], sep, pad],
        [cls, ids[2], ids[3], ids[4], sep],
        [cls, ids[5], ids[6], sep, pad],
    ]
    assert document.piece_positions(5).tolist() == [1, 2, 6, 7, 8, 11, 12]
    # window of segments 1..2 = words whose first piece is in pieces 2..6
    assert document.window_words(1, 2) == (2, 7)
    assert document.window_words(0, 1) == (0, 2)
    starts, ends = document.window_word_ranges(2)
    assert starts.tolist() == [0, 2] and ends.tolist() == [5, 7]


def test_multi_piece_words_and_sentence_preference(tokenizer):
    # "Anna" is 4 pieces, "told" 3, "Ben" 3 (see the fixture); budget 8
    sentences = [["Anna", "told"], ["Ben", "Ben"], ["Anna"]]
    document = segment_document(sentences, tokenizer, max_segment_len=10)
    # [Anna told] (7) + Ben would make 10 > 8 -> segment 0 ends at the sentence end;
    # [Ben Ben] (6) + Anna (4) = 10 > 8 -> segment 1 ends at the sentence end
    assert document.segment_ends.tolist() == [7, 13, 17]
    check_segmentation(document, sentences, tokenizer, 10)


def test_word_longer_than_a_segment_is_cut_and_counted(tokenizer):
    long_word = "Supercalifragilisticexpialidocious"  # 33 pieces of the tiny vocabulary
    sentences = [["Mary", "said", long_word, "twice", "."]]
    document = segment_document(sentences, tokenizer, max_segment_len=12)  # budget 10
    assert document.num_cut_words == 1
    assert document.segment_ends.tolist() == [2, 12, 22, 32, 41]
    check_segmentation(document, sentences, tokenizer, 12)
    # windows hold whole words only: segments 1-2 lie inside the long word
    assert document.window_words(0, 2) == (0, 2)
    assert document.window_words(1, 2) == (2, 2)
    assert document.window_words(3, 2) == (3, 5)


def test_words_without_pieces_get_an_unknown_piece(tokenizer):
    sentences = [["Hello", "\u200b", "world"], ["\x00"]]
    document = segment_document(sentences, tokenizer, max_segment_len=8)
    assert document.num_empty_words == 2
    hello = word_pieces(tokenizer, "Hello")
    assert document.piece_ids.tolist() == hello + [tokenizer.unk_token_id] + word_pieces(tokenizer, "world") + [
        tokenizer.unk_token_id
    ]
    assert document.word_starts.tolist() == [0, len(hello), len(hello) + 1, len(hello) + 2]
    assert (document.word_ends >= document.word_starts).all()


def test_sentence_ids_need_not_be_consecutive(tokenizer):
    words = ["the", "man", "a", "b"]
    by_ids = segment_words(words, [7, 7, 3, 3], tokenizer, max_segment_len=5)
    by_sentences = segment_document([["the", "man"], ["a", "b"]], tokenizer, max_segment_len=5)
    assert by_ids.piece_sentence_ids.tolist() == [0, 0, 1, 1]
    assert by_ids.segment_ends.tolist() == by_sentences.segment_ends.tolist() == [2, 4]


def test_invalid_arguments(tokenizer):
    with pytest.raises(ValueError, match="max_segment_len must be at least 3"):
        segment_document([["a"]], tokenizer, max_segment_len=2)
    with pytest.raises(ValueError, match="2 sentence ids for 3 words"):
        segment_words(["a", "b", "c"], [0, 0], tokenizer, max_segment_len=8)
    empty = segment_document([], tokenizer, max_segment_len=8)
    assert empty.num_segments == empty.num_pieces == empty.num_words == 0
    assert empty.segment_input_ids()[0].shape == (0, 0)


@pytest.mark.parametrize("max_segment_len", SEGMENT_LENGTHS)
def test_invariants_on_the_fixture(tokenizer, max_segment_len):
    for conll in read_conll_documents(FIXTURE):
        document = segment_document(conll.sentences, tokenizer, max_segment_len)
        check_segmentation(document, conll.sentences, tokenizer, max_segment_len)


def test_fixture_has_a_sentence_longer_than_a_segment(tokenizer):
    conll = read_conll_documents(FIXTURE)[0]
    document = segment_document(conll.sentences, tokenizer, max_segment_len=24)
    # the third sentence (38 pieces) is cut at word ends inside it
    third = np.flatnonzero(document.piece_sentence_ids == 2)
    assert len(third) == 38
    inside = [end for end in document.segment_ends.tolist() if third[0] < end <= third[-1]]
    assert len(inside) >= 1
    assert document.num_cut_words == 0


@pytest.mark.external_data
@pytest.mark.parametrize("max_segment_len", [16, 128, 384])
def test_invariants_on_real_documents(tokenizer, max_segment_len):
    ontonotes = require_external_data("coref", "ontonotes_sample", "coref.gold_conll")
    litbank = require_external_data("coref", "litbank", "1023_bleak_house_brat.conll")
    documents = read_conll_documents(ontonotes) + read_conll_documents(litbank)[:1]
    for conll in documents:
        document = segment_document(conll.sentences, tokenizer, max_segment_len)
        check_segmentation(document, conll.sentences, tokenizer, max_segment_len)


# ------------------------------------------------------------------------------- indexer


@pytest.fixture(scope="module")
def indexer():
    return SegmentedWordpieceIndexer(str(TINY_BERT_DIR), max_segment_len=16)


def text_instance(sentences, indexer) -> Instance:
    return Instance({"text": TextField(sentence_tokens(sentences), {"tokens": indexer})})


def test_registered_and_built_from_params():
    indexer = TokenIndexer.from_params(
        Params({"type": "segmented_wordpiece", "model_name": str(TINY_BERT_DIR), "max_segment_len": 128})
    )
    assert isinstance(indexer, SegmentedWordpieceIndexer)
    assert indexer.max_segment_len == 128
    with pytest.raises(ConfigurationError, match="max_segment_len"):
        SegmentedWordpieceIndexer(str(TINY_BERT_DIR), max_segment_len=513)  # tiny_bert: 512


def test_sentence_tokens_carry_sentence_ids():
    tokens = sentence_tokens([["a", "b"], ["c"]])
    assert [t.text for t in tokens] == ["a", "b", "c"]
    assert [t.sentence_id for t in tokens] == [0, 0, 1]
    assert isinstance(tokens[0], Token)


def test_tokens_without_sentence_ids_form_one_sentence(indexer, tokenizer):
    words = ["the", "man", "a", "b", "c"]
    document = indexer.segment_tokens([Token(w) for w in words])
    assert document.piece_sentence_ids.tolist() == [0] * 5
    with pytest.raises(ValueError, match="1 of 2 tokens have no sentence_id"):
        indexer.segment_tokens([SentenceToken("a", 0), Token("b")])


def test_single_document_tensors(indexer, tokenizer):
    conll = read_conll_documents(FIXTURE)[0]
    instance = text_instance(conll.sentences, indexer)
    batch = Batch([instance])
    batch.index_instances(Vocabulary())
    tensors = batch.as_tensor_dict()["text"]["tokens"]
    document = indexer.segment(conll.sentences)
    S, L = document.num_segments, document.longest_segment
    P, W = document.num_pieces, document.num_words
    assert L <= 16
    assert tensors["input_ids"].shape == tensors["segment_mask"].shape == (1, S, L)
    input_ids, mask = document.segment_input_ids(L)
    assert tensors["input_ids"][0].tolist() == input_ids.tolist()
    assert tensors["segment_mask"][0].tolist() == mask.tolist()
    for key, expected in [
        ("piece_word_ids", document.piece_word_ids),
        ("piece_sentence_ids", document.piece_sentence_ids),
        ("piece_segment_ids", document.piece_segment_ids),
        ("word_starts", document.word_starts),
        ("word_ends", document.word_ends),
        ("piece_positions", document.piece_positions(L)),
    ]:
        assert tensors[key][0].tolist() == expected.tolist(), key
    assert tensors["mask"].shape == (1, P) and tensors["mask"].all()
    assert tensors["word_mask"].shape == (1, W) and tensors["word_mask"].all()
    flat = tensors["input_ids"].view(1, -1)
    assert flat[0, tensors["piece_positions"][0]].tolist() == document.piece_ids.tolist()


def test_batch_of_documents_pads_every_dimension(indexer):
    documents = read_conll_documents(FIXTURE)
    instances = [text_instance(d.sentences, indexer) for d in documents]
    batch = Batch(instances)
    batch.index_instances(Vocabulary())
    tensors = batch.as_tensor_dict()["text"]["tokens"]
    segmented = [indexer.segment(d.sentences) for d in documents]
    S = max(d.num_segments for d in segmented)
    L = max(d.longest_segment for d in segmented)
    P = max(d.num_pieces for d in segmented)
    W = max(d.num_words for d in segmented)
    assert tensors["input_ids"].shape == (3, S, L)
    assert tensors["piece_positions"].shape == tensors["mask"].shape == (3, P)
    assert tensors["word_starts"].shape == tensors["word_mask"].shape == (3, W)
    for row, document in enumerate(segmented):
        n, p, w = document.num_segments, document.num_pieces, document.num_words
        input_ids, mask = document.segment_input_ids(L, S)
        assert tensors["input_ids"][row].tolist() == input_ids.tolist()
        assert tensors["segment_mask"][row].tolist() == mask.tolist()
        assert not tensors["segment_mask"][row, n:].any()
        assert tensors["mask"][row].tolist() == [True] * p + [False] * (P - p)
        assert tensors["word_mask"][row].tolist() == [True] * w + [False] * (W - w)
        assert tensors["piece_segment_ids"][row, p:].eq(-1).all()
        assert tensors["word_starts"][row, :w].tolist() == document.word_starts.tolist()
        # positions index the batch's padded (S, L) layout of this row
        flat = tensors["input_ids"][row].reshape(-1)
        assert flat[tensors["piece_positions"][row, :p]].tolist() == document.piece_ids.tolist()


def test_empty_text_field_pads_to_nothing(indexer):
    field = TextField([], {"tokens": indexer})
    field.index(Vocabulary())
    lengths = field.get_padding_lengths()
    assert lengths == {
        "tokens___num_segments": 0,
        "tokens___segment_length": 0,
        "tokens___num_pieces": 0,
        "tokens___num_words": 0,
    }
    tensors = field.as_tensor(
        {**lengths, "tokens___num_segments": 2, "tokens___segment_length": 4, "tokens___num_pieces": 3}
    )["tokens"]
    assert tensors["input_ids"].shape == (2, 4) and not tensors["segment_mask"].any()
    assert not tensors["mask"].any()
