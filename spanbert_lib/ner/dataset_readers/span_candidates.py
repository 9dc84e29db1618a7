"""
Candidate spans of a sentence (every span of 1..``max_span_width`` words) and their gold labels,
vectorised with numpy.
"""
from dataclasses import dataclass, field
from typing import List, Sequence

import numpy as np

from spanbert_lib.ner.dataset_readers.bio_tags import OUTSIDE, Entity


@dataclass
class SentenceSpans:
    """
    ``spans`` ``(N, 2)`` int64: inclusive ``(start, end)`` word offsets ordered by start, then
    end; ``grid`` ``(num_words * max_span_width,)``: the row of span ``(s, s + k)`` at index
    ``s * max_span_width + k``, -1 where ``s + k`` is past the sentence.
    """

    spans: np.ndarray
    grid: np.ndarray
    max_span_width: int

    def __len__(self) -> int:
        return len(self.spans)

    def rows(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Row of each span ``(starts[i], ends[i])``, -1 if it is no candidate (too wide, outside)."""
        starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
        widths = ends - starts
        index = starts * self.max_span_width + widths
        ok = (starts >= 0) & (widths >= 0) & (widths < self.max_span_width) & (index < len(self.grid))
        rows = np.full(len(starts), -1, dtype=np.int64)
        rows[ok] = self.grid[index[ok]]
        return rows


def enumerate_sentence_spans(num_words: int, max_span_width: int) -> SentenceSpans:
    """All spans of 1..``max_span_width`` words of a sentence of ``num_words`` words."""
    if max_span_width < 1:
        raise ValueError(f"max_span_width must be positive, got {max_span_width}")
    starts = np.repeat(np.arange(num_words, dtype=np.int64), max_span_width)
    ends = starts + np.tile(np.arange(max_span_width, dtype=np.int64), num_words)
    valid = ends < num_words
    grid = np.where(valid, np.cumsum(valid) - 1, -1)
    return SentenceSpans(np.stack((starts[valid], ends[valid]), axis=1), grid, max_span_width)


@dataclass
class SpanLabels:
    labels: List[str]
    """One label per candidate span, ``"O"`` for non-entities."""
    unreachable: List[Entity] = field(default_factory=list)
    """Gold entities that are no candidate (wider than ``max_span_width``)."""


def label_sentence_spans(candidates: SentenceSpans, entities: Sequence[Entity]) -> SpanLabels:
    """Gold label of each candidate from the sentence's entities (unique spans, word offsets)."""
    labels = np.full(len(candidates), OUTSIDE, dtype=object)
    if not entities:
        return SpanLabels(labels.tolist())
    starts = np.fromiter((entity[0] for entity in entities), dtype=np.int64, count=len(entities))
    ends = np.fromiter((entity[1] for entity in entities), dtype=np.int64, count=len(entities))
    names = np.asarray([entity[2] for entity in entities], dtype=object)
    rows = candidates.rows(starts, ends)
    found = rows >= 0
    labels[rows[found]] = names[found]
    unreachable = [tuple(entities[i]) for i in np.flatnonzero(~found).tolist()]
    return SpanLabels(labels.tolist(), unreachable)  # type: ignore[arg-type]
