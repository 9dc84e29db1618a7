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

    # Parameters

    spans : `np.ndarray`
        `[S, 2]` inclusive word offsets.
    windows : `np.ndarray`
        `[K, 2]` ``[start, end)`` word windows.
    num_words : `int`
        Words `N` of the sentence.

    # Returns

    `np.ndarray`
        `[S]` window index of each span, -1 for a span that lies whole in no window.
    """
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    windows = np.asarray(windows, dtype=np.int64).reshape(-1, 2)
    first, last = spans[:, None, 0], spans[:, None, 1]  # [S, 1]
    window_start, window_end = windows[None, :, 0], windows[None, :, 1]  # [1, K]
    inside = (window_start <= first) & (last < window_end)  # [S, K]
    left = np.where(window_start > 0, first - window_start, num_words)
    right = np.where(window_end < num_words, window_end - 1 - last, num_words)
    centrality = np.where(inside, np.minimum(left, right), -1)
    return np.where(inside.any(axis=1), centrality.argmax(axis=1), -1)
