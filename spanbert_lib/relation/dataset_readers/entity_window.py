"""
Truncating a wordpiece sequence around the two entities instead of at its end.

Shapes: `P` wordpieces of the sequence.
"""

from typing import Tuple

import numpy as np


def window_around(word_ids: np.ndarray, keep: Tuple[int, int], budget: int) -> Tuple[int, int]:
    """
    The wordpieces to keep from a sequence that may be longer than ``budget``.

    Context is cut from the far ends: the pieces before and after ``keep`` are trimmed from the
    side that still has more of them until the window fits, so the shorter side is kept whole
    when possible and otherwise both sides keep about half of the spare room. The window is
    then narrowed to whole words (a word cut at a window edge is dropped).

    # Parameters

    word_ids : `np.ndarray`
        `[P]` non-decreasing word index of every wordpiece.
    keep : `Tuple[int, int]`
        ``(first, last)`` wordpiece positions (inclusive) that must stay - the region from the
        first entity to the second; it must begin and end on word boundaries and hold at most
        ``budget`` pieces.
    budget : `int`
        Wordpieces the window may hold.

    # Returns

    `Tuple[int, int]`
        The kept wordpieces ``[start, end)``.
    """
    num_pieces = len(word_ids)
    first, last = keep
    if last - first + 1 > budget:
        raise ValueError(f"the kept region of {last - first + 1} wordpieces exceeds the budget of {budget}")
    if num_pieces <= budget:
        return 0, num_pieces
    left, right = first, num_pieces - 1 - last
    spare = budget - (last - first + 1)
    keep_left = min(left, max(spare - right, spare // 2))
    keep_right = min(right, spare - keep_left)
    start, end = first - keep_left, last + 1 + keep_right
    if start > 0 and word_ids[start] == word_ids[start - 1]:
        start = int(np.searchsorted(word_ids, word_ids[start], side="right"))
    if end < num_pieces and word_ids[end] == word_ids[end - 1]:
        end = int(np.searchsorted(word_ids, word_ids[end - 1], side="left"))
    return start, end
