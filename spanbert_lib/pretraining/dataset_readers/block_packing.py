"""
Word-aligned packing of a tokenised document into contiguous blocks (pure numpy, no I/O).

A document is a sequence of ``N`` wordpieces with a non-decreasing word index per piece. A block is
a half-open token range ``[start, end)`` that starts and ends on word boundaries, so that no word is
split between two blocks. The only exception is a single word longer than a whole block: its first
``budget`` pieces form a block of their own and the rest of the word is dropped.

Shapes: `N` wordpieces, `W` words, `L` tokens of a block, `P` phrases in a block.
"""

from typing import List, Tuple

import numpy as np


def piece_word_starts(word_ids: np.ndarray) -> np.ndarray:
    """
    Where each word starts.

    # Parameters

    word_ids : `np.ndarray`
        `[N]` the word index of each wordpiece (pieces of a word are adjacent).

    # Returns

    `np.ndarray`
        `[N]` bool, True at the first piece of each word.
    """
    mask = np.ones(len(word_ids), dtype=bool)
    if len(word_ids) > 1:
        mask[1:] = word_ids[1:] != word_ids[:-1]
    return mask


def word_boundaries(word_starts: np.ndarray) -> np.ndarray:
    """
    The word boundaries as token positions.

    # Parameters

    word_starts : `np.ndarray`
        `[N]` bool from :func:`piece_word_starts`.

    # Returns

    `np.ndarray`
        `[W + 1]` int64: the token position where each of the `W` words starts, followed by `N`.
    """
    return np.append(np.flatnonzero(word_starts), len(word_starts)).astype(np.int64)


def pack_blocks(boundaries: np.ndarray, budget: int) -> Tuple[List[Tuple[int, int]], int]:
    """
    Greedily splits ``[0, N)`` (``N = boundaries[-1]``) into consecutive blocks of at most
    ``budget`` tokens ending on word boundaries.

    # Parameters

    boundaries : `np.ndarray`
        `[W + 1]` word boundaries from :func:`word_boundaries`.
    budget : `int`
        Tokens per block at most.

    # Returns

    `Tuple[List[Tuple[int, int]], int]`
        ``(blocks, truncated_words)``: the ``(start, end)`` token ranges in order, and how many
        words were longer than ``budget`` and were cut to their first ``budget`` pieces (the rest
        of such a word appears in no block).
    """
    if budget < 1:
        raise ValueError(f"A block must hold at least one wordpiece, got budget={budget}")
    num_tokens = int(boundaries[-1])
    blocks: List[Tuple[int, int]] = []
    truncated = 0
    start = 0
    while start < num_tokens:
        end = int(boundaries[np.searchsorted(boundaries, start + budget, side="right") - 1])
        if end > start:
            blocks.append((start, end))
            start = end
        else:  # the word starting at `start` alone is longer than a block
            blocks.append((start, start + budget))
            truncated += 1
            start = int(boundaries[np.searchsorted(boundaries, start, side="right")])
    return blocks, truncated


def last_boundary_at_most(boundaries: np.ndarray, position: int) -> int:
    """The largest word boundary ``<= position`` (``boundaries``: sorted, `[W + 1]`)."""
    return int(boundaries[np.searchsorted(boundaries, position, side="right") - 1])


def first_boundary_at_least(boundaries: np.ndarray, position: int) -> int:
    """The smallest word boundary ``>= position`` (``boundaries``: sorted, `[W + 1]`)."""
    return int(boundaries[np.searchsorted(boundaries, position, side="left")])


def dense_ranks(ids: np.ndarray) -> np.ndarray:
    """
    Renumbers the non-negative entries of ``ids`` to ``0, 1, 2, ...`` in order of first
    appearance; negative entries become -1.

    # Parameters

    ids : `np.ndarray`
        `[L]` ids, the non-negative ones non-decreasing among themselves.

    # Returns

    `np.ndarray`
        `[L]` int64 dense ranks.
    """
    out = np.full(len(ids), -1, dtype=np.int64)
    valid = ids >= 0
    if valid.any():
        _, out[valid] = np.unique(ids[valid], return_inverse=True)
    return out


def phrase_token_spans(phrase_ids: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """
    The phrases present in a block and their token spans.

    # Parameters

    phrase_ids : `np.ndarray`
        `[L]` int phrase index per token, -1 outside; a phrase's tokens are contiguous.

    # Returns

    `Tuple[np.ndarray, np.ndarray, np.ndarray]`
        ``(phrases, first, last)``, each `[P]` int64 in order of appearance: the phrase indices
        and their first / last token positions (inclusive).
    """
    positions = np.flatnonzero(phrase_ids >= 0)
    ids = phrase_ids[positions]
    phrases, first = np.unique(ids, return_index=True)
    _, first_from_end = np.unique(ids[::-1], return_index=True)
    last = len(ids) - 1 - first_from_end
    order = np.argsort(first, kind="stable")
    return phrases[order].astype(np.int64), positions[first[order]], positions[last[order]]
