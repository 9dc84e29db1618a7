"""Truncation around the entities; every window is worked out by hand from the rule in the docstring."""

import numpy as np
import pytest

from spanbert_lib.relation.dataset_readers.entity_window import window_around


def test_short_sequence_is_kept_whole():
    assert window_around(np.array([0, 1, 1, 2]), (1, 2), budget=4) == (0, 4)


def test_both_sides_trimmed_evenly():
    # 20 one-piece words, keep 9..10, budget 6 -> spare 4: two pieces on each side
    assert window_around(np.arange(20), (9, 10), budget=6) == (7, 13)


def test_short_side_kept_whole_and_long_side_gets_the_rest():
    # left context 1 piece, right 17; spare 6 -> left keeps its 1, right gets 5
    assert window_around(np.arange(20), (1, 2), budget=8) == (0, 8)
    # mirror image: keep 17..18 of 20 -> right context 1, left gets 5
    assert window_around(np.arange(20), (17, 18), budget=8) == (12, 20)


def test_odd_spare_gives_the_extra_piece_to_the_right():
    # spare 5, both sides long: left 5 // 2 = 2, right 3
    assert window_around(np.arange(30), (10, 10), budget=6) == (8, 14)


def test_cut_words_are_dropped_at_both_edges():
    # words: 0 = pieces 0-2, 1 = piece 3, 2 = pieces 4-5, 3 = pieces 6-8
    word_ids = np.array([0, 0, 0, 1, 2, 2, 3, 3, 3])
    # keep word 1 (piece 3), budget 5: spare 4 -> 2 left (pieces 1-2, inside word 0), 2 right (pieces 4-5)
    # the left edge cuts word 0 -> start moves to 3; the right edge falls between words 2 and 3 -> kept
    assert window_around(word_ids, (3, 3), budget=5) == (3, 6)
    # budget 4: spare 3 -> 1 left (piece 2, inside word 0 -> dropped), 2 right (pieces 4-5, word 2 whole)
    assert window_around(word_ids, (3, 3), budget=4) == (3, 6)
    # keep word 2 (pieces 4-5), budget 4: spare 2 -> 1 left (word 1), 1 right (piece 6, inside word 3 -> dropped)
    assert window_around(word_ids, (4, 5), budget=4) == (3, 6)


def test_region_longer_than_budget_is_refused():
    with pytest.raises(ValueError, match="kept region of 5 wordpieces exceeds the budget of 4"):
        window_around(np.arange(10), (2, 6), budget=4)
