"""
Maskable units of packed blocks: whole words (from ``word_ids``) and phrases (from
``phrase_ids``), located as runs of equal non-negative labels, all sequences at once (numpy).

Shapes: `B` sequences, `L` sequence length, `U` the largest number of runs in a row.
"""

from dataclasses import dataclass

import numpy as np


@dataclass
class Runs:
    """
    Maximal runs of equal non-negative labels in each row of a `[B, L]` array, left-aligned and
    padded to `U` slots.

    # Parameters

    starts : `np.ndarray`
        `[B, U]` int64, first token position of the k-th run of each row; 0 in padding slots.
    ends : `np.ndarray`
        `[B, U]` int64, last (inclusive) token position of the k-th run of each row; -1 in
        padding slots (so ``num_tokens`` is 0 there).
    valid : `np.ndarray`
        `[B, U]` bool, False in padding slots.
    counts : `np.ndarray`
        `[B]` int64, number of runs per row.
    """

    starts: np.ndarray
    ends: np.ndarray
    valid: np.ndarray
    counts: np.ndarray

    @property
    def num_tokens(self) -> np.ndarray:
        """`[B, U]` int64: tokens per run, 0 in padding slots."""
        return self.ends - self.starts + 1


def run_boundaries(labels: np.ndarray):
    """
    Where the runs of equal labels >= 0 start and end.

    # Parameters

    labels : `np.ndarray`
        `[B, L]` int64.

    # Returns

    `Tuple[np.ndarray, np.ndarray]`
        ``(is_start, is_end)``, both `[B, L]` bool.
    """
    inside = labels >= 0
    changes = labels[:, 1:] != labels[:, :-1]
    is_start = inside.copy()
    is_start[:, 1:] &= changes
    is_end = inside.copy()
    is_end[:, :-1] &= changes
    return is_start, is_end


def find_runs(labels: np.ndarray) -> Runs:
    """
    The runs of each row: maximal stretches of consecutive positions sharing one label >= 0
    (negative labels belong to no run).

    # Parameters

    labels : `np.ndarray`
        `[B, L]` int64.

    # Returns

    `Runs`
        The runs, `U` slots per row.
    """
    batch_size = labels.shape[0]
    is_start, is_end = run_boundaries(labels)
    counts = is_start.sum(axis=1)
    num_slots = int(counts.max()) if counts.size else 0
    starts = np.zeros((batch_size, num_slots), dtype=np.int64)
    ends = np.full((batch_size, num_slots), -1, dtype=np.int64)
    valid = np.arange(num_slots) < counts[:, None]
    # Row-major order: the k-th start (and the k-th end) of a row belongs to its k-th run.
    length = labels.shape[1]
    starts[valid] = np.flatnonzero(is_start) % length
    ends[valid] = np.flatnonzero(is_end) % length
    return Runs(starts=starts, ends=ends, valid=valid, counts=counts)


def word_runs(word_ids: np.ndarray) -> Runs:
    """
    The whole words of each sequence.

    # Parameters

    word_ids : `np.ndarray`
        `[B, L]` int64 word index of each piece, -1 = not maskable.

    # Returns

    `Runs`
        One run per whole word.
    """
    return find_runs(np.maximum(word_ids, -1))


def batch_word_starts(word_ids: np.ndarray) -> np.ndarray:
    """
    Where the whole words start.

    # Parameters

    word_ids : `np.ndarray`
        `[B, L]` int64 word index of each piece, -1 = not maskable.

    # Returns

    `np.ndarray`
        `[B, L]` bool: True at the first piece of each whole word.
    """
    return run_boundaries(np.maximum(word_ids, -1))[0]


def coverage(runs: Runs, selected: np.ndarray, length: int) -> np.ndarray:
    """
    The positions the selected runs cover.

    # Parameters

    runs : `Runs`
        The runs of each row.
    selected : `np.ndarray`
        `[B, U]` bool, the chosen runs, which must not overlap.
    length : `int`
        `L`.

    # Returns

    `np.ndarray`
        `[B, L]` bool: positions inside the selected runs.
    """
    batch_size = runs.starts.shape[0]
    delta = np.zeros((batch_size, length + 1), dtype=np.int64)
    rows = np.nonzero(selected)[0]
    np.add.at(delta, (rows, runs.starts[selected]), 1)
    np.add.at(delta, (rows, runs.ends[selected] + 1), -1)
    return np.cumsum(delta, axis=1)[:, :length] > 0
