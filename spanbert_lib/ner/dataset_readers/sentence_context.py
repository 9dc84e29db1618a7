"""
Choosing the context words around a sentence so that context + sentence fit a wordpiece
budget: whole words, nearest first, the budget split evenly between the two sides (a side that
needs less leaves the rest to the other).
"""

from typing import NamedTuple, Optional

import numpy as np


class SentenceContext(NamedTuple):
    """
    The words of the document that go into one instance.

    # Parameters

    first : `int`
        First word of the instance (document offset).
    last : `int`
        Word after the instance's last.
    sentence_start : `int`
        First word of the sentence (document offset), within ``[first, last)``.
    sentence_end : `int`
        Word after the sentence's last.
    context_cut : `bool`
        Fewer context words than asked for because of the budget.
    """

    first: int
    last: int
    sentence_start: int
    sentence_end: int
    context_cut: bool
    """Fewer context words than asked for because of the budget."""


def _words_within(cumulative: np.ndarray, allowance: int) -> int:
    """Most words k with ``cumulative[k] <= allowance`` (``cumulative`` non-decreasing, [0] = 0)."""
    return int(np.searchsorted(cumulative, allowance, side="right")) - 1


def sentence_window(
    piece_offsets: np.ndarray, sentence_start: int, sentence_end: int, left_words: int, right_words: int, budget: int
) -> Optional[SentenceContext]:
    """
    The sentence and as many context words on each side as fit ``budget`` wordpieces (context
    dropped first, farthest words first).

    # Parameters

    piece_offsets : `np.ndarray`
        `[W + 1]` first wordpiece of each of the document's ``W`` words, then the total.
    sentence_start : `int`
        First word of the sentence.
    sentence_end : `int`
        Word after the sentence's last.
    left_words : `int`
        Most context words to take before the sentence.
    right_words : `int`
        Most context words to take after it.
    budget : `int`
        Most wordpieces of the sentence and its context together.

    # Returns

    `Optional[SentenceContext]`
        The window, or None if the sentence alone needs more than ``budget`` pieces.
    """
    num_words = len(piece_offsets) - 1
    sentence_pieces = int(piece_offsets[sentence_end] - piece_offsets[sentence_start])
    if sentence_pieces > budget:
        return None
    left_words = min(max(left_words, 0), sentence_start)
    right_words = min(max(right_words, 0), num_words - sentence_end)
    # pieces of the nearest k context words, k = 0..left_words (resp. right_words)
    left = piece_offsets[sentence_start] - piece_offsets[sentence_start - left_words : sentence_start + 1][::-1]
    right = piece_offsets[sentence_end : sentence_end + right_words + 1] - piece_offsets[sentence_end]
    remaining = budget - sentence_pieces
    left_need, right_need = int(left[-1]), int(right[-1])
    if left_need + right_need <= remaining:
        left_allow, right_allow = left_need, right_need
    elif left_need <= remaining // 2:
        left_allow, right_allow = left_need, remaining - left_need
    elif right_need <= remaining - remaining // 2:
        left_allow, right_allow = remaining - right_need, right_need
    else:
        left_allow, right_allow = remaining // 2, remaining - remaining // 2
    take_left, take_right = _words_within(left, left_allow), _words_within(right, right_allow)
    return SentenceContext(
        sentence_start - take_left,
        sentence_end + take_right,
        sentence_start,
        sentence_end,
        take_left < left_words or take_right < right_words,
    )
