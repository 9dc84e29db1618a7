"""
Predicting the entities of a sentence too long for one instance: overlapping windows of whole
words, each small enough for ``max_seq_length``, and for every candidate span the window in which
it is most central (the most context on its nearer side, as BERT's max-context rule for QA).

For a sentence of ``n`` words with ``m`` words in a window, consecutive windows overlap by about
``m / 2`` words and never by fewer than ``max_span_width - 1`` (when a window has that many words),
so every candidate span lies whole in at least one window.

Shapes: `N` words of the sentence, `S` candidate spans, `K` windows.
"""

from typing import List, Tuple

import numpy as np

Window = Tuple[int, int]

SPAN_BLOCK = 1 << 16
"""Spans :func:`central_windows` compares at once (bounds its working memory)."""


def overlapping_windows(piece_counts: np.ndarray, budget: int, max_span_width: int) -> List[Window]:
    """
    Word windows covering a sentence, each holding at most ``budget`` pieces.

    # Parameters

    piece_counts : `np.ndarray`
        `[N]` wordpieces of each word, each 1..``budget``.
    budget : `int`
        Most wordpieces in a window.
    max_span_width : `int`
        Longest candidate span, in words: consecutive windows overlap by at least
        ``max_span_width - 1`` words when they can.

    # Returns

    `List[Window]`
        ``[start, end)`` word windows; ``[(0, N)]`` when the whole sentence fits.
    """
    counts = np.asarray(piece_counts, dtype=np.int64)
    if counts.size and (counts.min() < 1 or counts.max() > budget):
        raise ValueError(
            f"every word needs 1 to {budget} wordpieces to fit a window, got {counts.min()} to {counts.max()}"
        )
    num_words = len(counts)
    if num_words == 0:
        return []
    cumulative = np.concatenate(([0], np.cumsum(counts)))
    windows: List[Window] = []
    start = 0
    while True:
        end = max(int(np.searchsorted(cumulative, cumulative[start] + budget, side="right")) - 1, start + 1)
        windows.append((start, end))
        if end >= num_words:
            return windows
        next_start = min(start + (end - start) // 2, end - (max_span_width - 1))
        start = max(start + 1, next_start)


def central_windows(spans: np.ndarray, windows: np.ndarray, num_words: int) -> np.ndarray:
    """
    The window in which each span has the most words on its nearer side (the sentence's own ends
    count as unlimited context; ties: the first such window).

    Windows ordered by start and by end (as :func:`overlapping_windows` gives them) hold each span
    in a contiguous range of window indices, found by binary search; the windows are compared one
    offset into that range at a time, for a block of spans together. Memory and time grow with `S`
    (times the most windows holding one span), never with `S * K`. Windows out of that order are refused
    (``ValueError``).

    # Parameters

    spans : `np.ndarray`
        `[S, 2]` inclusive word offsets.
    windows : `np.ndarray`
        `[K, 2]` ``[start, end)`` word windows, starts and ends each non-decreasing.
    num_words : `int`
        Words `N` of the sentence.

    # Returns

    `np.ndarray`
        `[S]` window index of each span, -1 for a span that lies whole in no window.
    """
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    windows = np.asarray(windows, dtype=np.int64).reshape(-1, 2)
    if (np.diff(windows[:, 0]) < 0).any() or (np.diff(windows[:, 1]) < 0).any():
        raise ValueError("central_windows needs windows ordered by start and by end, as overlapping_windows gives")
    best = np.empty(len(spans), dtype=np.int64)  # [S]
    for block in range(0, len(spans), SPAN_BLOCK):
        best[block : block + SPAN_BLOCK] = _block_central_windows(spans[block : block + SPAN_BLOCK], windows, num_words)
    return best


def _block_central_windows(spans: np.ndarray, windows: np.ndarray, num_words: int) -> np.ndarray:
    """
    :func:`central_windows` of a block of `B` spans (windows ordered by start and by end).

    # Parameters

    spans : `np.ndarray`
        `[B, 2]` inclusive word offsets.
    windows : `np.ndarray`
        `[K, 2]` ``[start, end)`` word windows, starts and ends each non-decreasing.
    num_words : `int`
        Words `N` of the sentence.

    # Returns

    `np.ndarray`
        `[B]` window index of each span, -1 for a span that lies whole in no window.
    """
    first, last = spans[:, 0], spans[:, 1]  # [B]
    window_start, window_end = windows[:, 0], windows[:, 1]  # [K]
    lowest = np.searchsorted(window_end, last, side="right")  # [B] the first window ending after the span
    holding = np.searchsorted(window_start, first, side="right") - lowest  # [B] windows holding the span
    best = np.full(len(spans), -1, dtype=np.int64)  # [B]
    best_room = np.full(len(spans), -1, dtype=np.int64)  # [B]
    for offset in range(int(holding.max(initial=0))):
        rows = np.flatnonzero(holding > offset)  # [R] spans held by a window at this offset
        window = lowest[rows] + offset  # [R]
        room = _room(first[rows], last[rows], window_start[window], window_end[window], num_words)
        better = room > best_room[rows]  # strict: on ties the earlier window stays
        best[rows[better]] = window[better]
        best_room[rows[better]] = room[better]
    return best


def _room(first: np.ndarray, last: np.ndarray, start: np.ndarray, end: np.ndarray, num_words: int) -> np.ndarray:
    """
    Words on the nearer side of spans in windows that hold them (`num_words` at a sentence end).

    # Parameters

    first, last : `np.ndarray`
        `[R]` inclusive word offsets of the spans.
    start, end : `np.ndarray`
        `[R]` ``[start, end)`` of a window holding each span.
    num_words : `int`
        Words `N` of the sentence.

    # Returns

    `np.ndarray`
        `[R]` the smaller of the words left and right of each span in its window.
    """
    left = np.where(start > 0, first - start, num_words)
    right = np.where(end < num_words, end - 1 - last, num_words)
    return np.minimum(left, right)
