"""
Sliding windows over a tokenised passage and the character <-> wordpiece bookkeeping around
them. Pure numpy, no tokenizer.

Shapes: `W` windows, `C` window capacity (passage tokens per window), `N` passage tokens.

Stride semantics. ``doc_stride`` is, as in the original BERT ``run_squad.py`` that SpanBERT's
fine-tuning code follows (and the paper's "document stride of 128"), the STEP between the
first passage tokens of consecutive windows: windows start at passage tokens 0, s, 2s, ...
until one reaches the end of the passage. Hugging Face tokenizers (``stride=``) and the
``question-answering`` pipeline (``doc_stride=``) call the OVERLAP between consecutive windows
the stride; ``stride_mode="overlap"`` gives those semantics (step = window capacity - overlap).
"""

from typing import List, Optional, Tuple

import numpy as np


def window_starts(num_tokens: int, capacity: int, step: int) -> List[int]:
    """
    First passage token of each window: ``0, step, 2*step, ...`` up to the first window that
    reaches the end of the passage. One window when the passage fits.

    # Parameters

    num_tokens : `int`
        Passage tokens `N`.
    capacity : `int`
        Passage tokens a window holds at most.
    step : `int`
        Passage tokens between the starts of consecutive windows (at most ``capacity`` is used).

    # Returns

    `List[int]`
        The `W` window starts.
    """
    if capacity <= 0 or step <= 0:
        raise ValueError(f"window capacity ({capacity}) and step ({step}) must be positive")
    starts = [0]
    while starts[-1] + capacity < num_tokens:
        starts.append(starts[-1] + min(step, capacity))
    return starts


def max_context_mask(starts: List[int], capacity: int, num_tokens: int) -> np.ndarray:
    """
    Which positions of each window hold a passage token in its "max-context" window, the one
    where ``min(tokens left of it, tokens right of it) + 0.01 * window length`` is largest (the
    first such window on a tie), as in BERT's ``_check_is_max_context``.

    Memory and time are linear in the passage: scores live on window positions (`[W, C]`, each
    token in about ``C / step`` windows) and the best window so far of each token (`[N]`) is
    updated window by window, never a windows x passage table.

    # Parameters

    starts : `List[int]`
        The `W` window starts (see :func:`window_starts`), increasing.
    capacity : `int`
        Passage tokens `C` a window holds at most.
    num_tokens : `int`
        Passage tokens `N`.

    # Returns

    `np.ndarray`
        `[W, C]` bool: whether passage position ``i`` of window ``w`` (passage token
        ``starts[w] + i``) is max-context there. Every passage token is max-context in exactly
        one window; positions past a window's end are False.
    """
    best_score = np.full(num_tokens, -np.inf)
    best_window = np.zeros(num_tokens, dtype=np.int64)
    lengths = []
    for w, start in enumerate(starts):
        length = max(0, min(capacity, num_tokens - start))
        lengths.append(length)
        positions = np.arange(length)
        score = np.minimum(positions, length - 1 - positions) + 0.01 * length
        region = slice(start, start + length)
        better = score > best_score[region]  # strictly: on a tie the earlier window keeps the token
        best_score[region] = np.where(better, score, best_score[region])
        best_window[region] = np.where(better, w, best_window[region])
    mask = np.zeros((len(starts), capacity), dtype=bool)
    for w, (start, length) in enumerate(zip(starts, lengths)):
        mask[w, :length] = best_window[start : start + length] == w
    return mask


def char_span_to_token_span(offsets: np.ndarray, start: int, end: int) -> Optional[Tuple[int, int]]:
    """
    The tokens overlapping the characters ``[start, end)``. A span starting or ending inside a
    token takes the whole token.

    # Parameters

    offsets : `np.ndarray`
        `[N, 2]` character ``[start, end)`` of each token, non-decreasing as a fast tokenizer
        returns them.
    start : `int`
        First character of the span.
    end : `int`
        One past its last character.

    # Returns

    `Optional[Tuple[int, int]]`
        The inclusive token span ``(first, last)``; None when no token overlaps (e.g. a span of
        whitespace).
    """
    first = int(np.searchsorted(offsets[:, 1], start, side="right"))
    last = int(np.searchsorted(offsets[:, 0], end, side="left")) - 1
    if first > last:
        return None
    return first, last
