"""
Candidate spans: every span of 1..``max_span_width`` words that stays inside one sentence
(Lee et al. 2017 for coreference mentions; LUKE's span NER for one sentence), vectorised with
numpy, with a constant-time lookup from ``(start, end)`` to the span's row. The tasks label the
candidates their own way (coreference clusters, entity types).

Shapes: `W` words, `N` candidate spans, `K` = ``max_span_width``, `Q` spans looked up.
"""

from dataclasses import dataclass

import numpy as np


@dataclass
class CandidateSpans:
    """
    The candidate spans of a text and a lookup table from ``(start, end)`` to their rows.

    # Parameters

    spans : `np.ndarray`
        `[N, 2]` int64 inclusive ``(start, end)`` word offsets, ordered by start, then end.
    grid : `np.ndarray`
        `[W * K]` the row of span ``(s, s + k)`` in ``spans`` at index ``s * K + k``, -1 where
        that span is not a candidate.
    max_span_width : `int`
        `K`, the widest span in words.
    """

    spans: np.ndarray
    grid: np.ndarray
    max_span_width: int

    def __len__(self) -> int:
        return len(self.spans)

    def lookup(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """
        The rows of some spans in ``spans``.

        # Parameters

        starts : `np.ndarray`
            `[Q]` first words of the spans.
        ends : `np.ndarray`
            `[Q]` last words (inclusive).

        # Returns

        `np.ndarray`
            `[Q]` int64 rows of the spans ``(starts[i], ends[i])``; -1 for spans that are no
            candidates.
        """
        starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
        widths = ends - starts
        inside = (widths >= 0) & (widths < self.max_span_width) & (starts >= 0)
        inside &= starts * self.max_span_width + widths < len(self.grid)
        rows = np.full(len(starts), -1, dtype=np.int64)
        rows[inside] = self.grid[starts[inside] * self.max_span_width + widths[inside]]
        return rows


def enumerate_candidate_spans(sentence_ids: np.ndarray, max_span_width: int) -> CandidateSpans:
    """
    All spans of 1..``max_span_width`` words whose words share one sentence id.

    # Parameters

    sentence_ids : `np.ndarray`
        `[W]` sentence id of each word.
    max_span_width : `int`
        `K`, the widest span in words.

    # Returns

    `CandidateSpans`
        The spans and their lookup grid.
    """
    if max_span_width < 1:
        raise ValueError(f"max_span_width must be positive, got {max_span_width}")
    sentence_ids = np.asarray(sentence_ids, dtype=np.int64)
    num_words = len(sentence_ids)
    starts = np.repeat(np.arange(num_words, dtype=np.int64), max_span_width)
    ends = starts + np.tile(np.arange(max_span_width, dtype=np.int64), num_words)
    valid = ends < num_words
    valid[valid] = sentence_ids[ends[valid]] == sentence_ids[starts[valid]]
    grid = np.where(valid, np.cumsum(valid) - 1, -1)
    return CandidateSpans(np.stack((starts[valid], ends[valid]), axis=1), grid, max_span_width)


def enumerate_sentence_spans(num_words: int, max_span_width: int) -> CandidateSpans:
    """
    All spans of 1..``max_span_width`` words of one sentence.

    # Parameters

    num_words : `int`
        `W`, the words of the sentence.
    max_span_width : `int`
        `K`, the widest span in words.

    # Returns

    `CandidateSpans`
        The spans and their lookup grid.
    """
    return enumerate_candidate_spans(np.zeros(num_words, dtype=np.int64), max_span_width)
