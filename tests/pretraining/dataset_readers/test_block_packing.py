import numpy as np
import pytest

from spanbert_lib.pretraining.dataset_readers.block_packing import (
    dense_ranks,
    pack_blocks,
    piece_word_starts,
    word_boundaries,
)


def test_word_starts_and_boundaries():
    word_ids = np.array([0, 0, 1, 2, 2, 2, 3])
    starts = piece_word_starts(word_ids)
    assert starts.tolist() == [True, False, True, True, False, False, True]
    assert word_boundaries(starts).tolist() == [0, 2, 3, 6, 7]
    assert word_boundaries(piece_word_starts(np.array([], dtype=np.int64))).tolist() == [0]


def test_pack_blocks_greedy_at_word_boundaries():
    # words of 2, 1, 3, 1 pieces: boundaries 0 2 3 6 7
    boundaries = np.array([0, 2, 3, 6, 7])
    assert pack_blocks(boundaries, 3) == ([(0, 3), (3, 6), (6, 7)], 0)
    assert pack_blocks(boundaries, 4) == ([(0, 3), (3, 7)], 0)
    assert pack_blocks(boundaries, 7) == ([(0, 7)], 0)
    assert pack_blocks(np.array([0]), 5) == ([], 0)


def test_pack_blocks_truncates_a_word_longer_than_a_block():
    # words of 1, 5, 1 pieces: the 5-piece word is cut to its first 2 pieces, the rest dropped
    boundaries = np.array([0, 1, 6, 7])
    assert pack_blocks(boundaries, 2) == ([(0, 1), (1, 3), (6, 7)], 1)


def test_pack_blocks_rejects_empty_budget():
    with pytest.raises(ValueError):
        pack_blocks(np.array([0, 1]), 0)


def test_dense_ranks():
    assert dense_ranks(np.array([-1, 4, 4, -1, 6, 9, 9])).tolist() == [-1, 0, 0, -1, 1, 2, 2]
    assert dense_ranks(np.array([-1, -1])).tolist() == [-1, -1]


def test_phrase_token_spans():
    from spanbert_lib.pretraining.dataset_readers.block_packing import phrase_token_spans

    phrases, first, last = phrase_token_spans(np.array([-1, 4, 4, -1, 2, -1, 7, 7, 7]))
    assert phrases.tolist() == [4, 2, 7] and first.tolist() == [1, 4, 6] and last.tolist() == [2, 4, 8]
    phrases, first, last = phrase_token_spans(np.array([-1, -1]))
    assert len(phrases) == len(first) == len(last) == 0
