"""Windows of a sentence too long for one instance, and the window where each span is most central."""

import numpy as np
import pytest

from spanbert_lib.common.candidate_spans import enumerate_sentence_spans
from spanbert_lib.ner.predictors.long_sentence_windows import central_windows, overlapping_windows


def test_a_sentence_that_fits_is_one_window():
    assert overlapping_windows(np.array([1, 2, 1]), budget=4, max_span_width=2) == [(0, 3)]
    assert overlapping_windows(np.array([], dtype=np.int64), budget=4, max_span_width=2) == []


def test_windows_by_hand():
    # one piece per word, 4 per window: each next window starts half-way into the previous one
    assert overlapping_windows(np.ones(10, dtype=np.int64), budget=4, max_span_width=2) == [
        (0, 4),
        (2, 6),
        (4, 8),
        (6, 10),
    ]
    # pieces 1 3 1 1 2 1: windows of at most 4 pieces sharing at least max_span_width - 1 = 2 words
    # where a window has that many; the start always moves on by at least one word
    assert overlapping_windows(np.array([1, 3, 1, 1, 2, 1]), budget=4, max_span_width=3) == [
        (0, 2),
        (1, 3),
        (2, 5),
        (3, 6),
    ]


def test_a_word_longer_than_the_budget_is_refused():
    with pytest.raises(ValueError, match="1 to 4 wordpieces"):
        overlapping_windows(np.array([1, 5, 1]), budget=4, max_span_width=2)


def test_every_candidate_span_lies_in_a_window_of_at_most_budget_pieces():
    counts = np.random.default_rng(0).integers(1, 4, size=300)
    windows = overlapping_windows(counts, budget=12, max_span_width=4)
    cumulative = np.concatenate(([0], np.cumsum(counts)))
    assert windows[0][0] == 0 and windows[-1][1] == 300
    assert all(cumulative[end] - cumulative[start] <= 12 for start, end in windows)
    assert all(b[0] > a[0] and b[0] <= a[1] - 3 for a, b in zip(windows, windows[1:]))
    spans = enumerate_sentence_spans(300, 4).spans
    assert (central_windows(spans, np.array(windows), 300) >= 0).all()


def test_central_windows_by_hand():
    windows = np.array([(0, 4), (2, 6), (4, 8), (6, 10)])
    spans = np.array([(0, 0), (3, 3), (5, 5), (4, 5), (8, 9), (3, 6)])
    # (0, 0): only in window 0. (3, 3): 0 words on its right in window 0, 1 on each side in window 1.
    # (5, 5): window 2 (1 left, 2 right) beats window 1 (0 right). (4, 5): 0 words on one side in
    # windows 1 and 2, the first wins. (8, 9): window 3, whose right end is the sentence's end.
    # (3, 6): in no window.
    assert central_windows(spans, windows, num_words=10).tolist() == [0, 1, 2, 1, 3, -1]
