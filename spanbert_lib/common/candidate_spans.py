"""
Candidate spans: every span of 1..``max_span_width`` words that stays inside one sentence
(Lee et al. 2017 for coreference mentions; LUKE's span NER for one sentence), vectorised with
numpy, with a constant-time lookup from ``(start, end)`` to the span's row. The tasks label the
candidates their own way (coreference clusters, entity types).
"""
from dataclasses import dataclass

import numpy as np


@dataclass
class CandidateSpans:
    """
    ``spans`` ``(N, 2)`` int64: inclusive ``(start, end)`` word offsets, ordered by start, then
    end. ``grid`` ``(W * max_span_width,)``: the row of span ``(s, s + k)`` in ``spans`` at
    index ``s * max_span_width + k``, -1 where that span is not a candidate.
    """

    spans: np.ndarray
    grid: np.ndarray
    max_span_width: int

    def __len__(self) -> int:
        return len(self.spans)

    def lookup(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Rows of the spans ``(starts[i], ends[i])``; -1 for spans that are no candidates."""
        starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
        widths = ends - starts
        inside = (widths >= 0) & (widths < self.max_span_width) & (starts >= 0)
        inside &= starts * self.max_span_width + widths < len(self.grid)
        rows = np.full(len(starts), -1, dtype=np.int64)
        rows[inside] = self.grid[starts[inside] * self.max_span_width + widths[inside]]
        return rows


def enumerate_candidate_spans(sentence_ids: np.ndarray, max_span_width: int) -> CandidateSpans:
    """All spans of 1..``max_span_width`` words whose words share one sentence id
    (``sentence_ids`` ``(W,)``, one per word)."""
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
    """All spans of 1..``max_span_width`` words of one sentence of ``num_words`` words."""
    return enumerate_candidate_spans(np.zeros(num_words, dtype=np.int64), max_span_width)
