"""
The most central window of every span of a very long sentence without a spans x windows table:
equal to that table's answer (the old formula, kept here as the reference), in memory linear in
the spans, and the spans grouped by window in one sort.
"""

import tracemalloc

import numpy as np
import pytest

from spanbert_lib.common.candidate_spans import enumerate_sentence_spans
from spanbert_lib.ner.predictors.long_sentence_windows import central_windows, overlapping_windows
from spanbert_lib.ner.predictors.spanbert_span_ner import spans_by_window


def centrality_table(spans: np.ndarray, windows: np.ndarray, num_words: int) -> np.ndarray:
    """`[S, K]` words on the nearer side of each span in each window, -1 where the window does not hold it."""
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    windows = np.asarray(windows, dtype=np.int64).reshape(-1, 2)
    first, last = spans[:, None, 0], spans[:, None, 1]  # [S, 1]
    window_start, window_end = windows[None, :, 0], windows[None, :, 1]  # [1, K]
    inside = (window_start <= first) & (last < window_end)  # [S, K]
    left = np.where(window_start > 0, first - window_start, num_words)
    right = np.where(window_end < num_words, window_end - 1 - last, num_words)
    return np.where(inside, np.minimum(left, right), -1)


def table_central_windows(spans: np.ndarray, windows: np.ndarray, num_words: int) -> np.ndarray:
    """The reference: the old ``[S, K]`` table's first best window of each span (-1: none)."""
    centrality = centrality_table(spans, windows, num_words)
    return np.where((centrality >= 0).any(axis=1), centrality.argmax(axis=1), -1)


def tied(spans: np.ndarray, windows: np.ndarray, num_words: int) -> int:
    """Spans that two windows hold equally centrally (the first must win)."""
    centrality = centrality_table(spans, windows, num_words)
    best = centrality.max(axis=1, initial=-1)[:, None]
    return int((((centrality == best) & (best >= 0)).sum(axis=1) > 1).sum())


def random_case(rng: np.random.Generator):
    """Windows of a random sentence, budget and span width, with all candidate spans and some wider ones."""
    num_words = int(rng.integers(1, 300))
    max_span_width = int(rng.integers(1, 12))
    budget = int(rng.integers(2, 40))
    counts = rng.integers(1, min(budget, int(rng.integers(1, 6))) + 1, size=num_words)
    windows = np.asarray(overlapping_windows(counts, budget, max_span_width))
    spans = enumerate_sentence_spans(num_words, max_span_width).spans
    starts = rng.integers(0, num_words, size=20)
    wide = np.stack((starts, np.minimum(starts + rng.integers(0, 3 * max_span_width + 1, size=20), num_words - 1)), 1)
    return np.concatenate((spans, wide)), windows, num_words


def test_central_windows_equal_the_table_on_random_sentences():
    rng = np.random.default_rng(0)
    ties = unplaced = 0
    for _ in range(400):
        spans, windows, num_words = random_case(rng)
        expected = table_central_windows(spans, windows, num_words)
        assert central_windows(spans, windows, num_words).tolist() == expected.tolist()
        unplaced += int((expected < 0).sum())
        ties += tied(spans, windows, num_words)
    assert ties > 0 and unplaced > 0  # both cases were exercised


def test_central_windows_equal_the_table_on_hand_made_windows():
    cases = [
        # repeated windows, windows sharing a start or an end, a gap (words 11..12 in no window)
        ([(0, 4), (0, 6), (2, 6), (2, 6), (4, 11), (13, 20)], 20),
        # windows of one word, and windows reaching both ends of the sentence (unlimited context)
        ([(0, 1), (1, 2), (1, 3), (2, 3)], 3),
        ([(0, 9)], 9),
        # windows starting later than the sentence's start and ending before its end only
        ([(3, 8), (5, 10), (6, 12), (9, 14)], 30),
    ]
    ties = 0
    for windows, num_words in cases:
        spans = enumerate_sentence_spans(num_words, 5).spans
        expected = table_central_windows(spans, np.asarray(windows), num_words)
        assert central_windows(spans, np.asarray(windows), num_words).tolist() == expected.tolist()
        ties += tied(spans, np.asarray(windows), num_words)
    assert ties > 0


def test_central_windows_of_no_spans_or_no_windows():
    assert central_windows(np.zeros((0, 2), dtype=np.int64), np.array([(0, 4)]), 4).tolist() == []
    assert central_windows(np.array([(0, 1), (2, 2)]), np.zeros((0, 2), dtype=np.int64), 4).tolist() == [-1, -1]


def test_windows_out_of_order_are_refused():
    with pytest.raises(ValueError, match="ordered by start and by end"):
        central_windows(np.array([(0, 0)]), np.array([(0, 10), (2, 5)]), 10)
    with pytest.raises(ValueError, match="ordered by start and by end"):
        central_windows(np.array([(0, 0)]), np.array([(2, 6), (0, 4)]), 10)


def test_central_windows_memory_is_linear_in_the_spans():
    num_words, max_span_width = 100_000, 16
    counts = np.random.default_rng(0).integers(1, 3, size=num_words)  # 1.5 wordpieces a word
    windows = np.asarray(overlapping_windows(counts, 254, max_span_width))
    spans = enumerate_sentence_spans(num_words, max_span_width).spans
    assert len(spans) > 1_500_000 and len(windows) > 1_000
    tracemalloc.start()
    try:
        owner = central_windows(spans, windows, num_words)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (owner >= 0).all()
    # a spans x windows table of int64 alone would take 8 * len(windows) bytes a span
    assert peak < 200 * len(spans) < 8 * len(windows) * len(spans) / 40


def test_spans_grouped_by_window_in_one_sort():
    rng = np.random.default_rng(1)
    for num_windows in (1, 2, 7, 50):
        owner = rng.integers(-1, num_windows, size=1_000)
        groups = spans_by_window(owner, num_windows)
        assert len(groups) == num_windows
        for window, group in enumerate(groups):
            assert group.tolist() == np.flatnonzero(owner == window).tolist()
    assert [group.tolist() for group in spans_by_window(np.array([-1, -1]), 3)] == [[], [], []]
