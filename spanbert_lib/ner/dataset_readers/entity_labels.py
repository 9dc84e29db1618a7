"""
Gold entity labels of the candidate spans of a sentence (every span of 1..``max_span_width``
words, :func:`spanbert_lib.common.candidate_spans.enumerate_sentence_spans`), vectorised with numpy.
"""

from dataclasses import dataclass, field
from typing import List, Sequence, cast

import numpy as np

from spanbert_lib.common.candidate_spans import CandidateSpans
from spanbert_lib.ner.dataset_readers.bio_tags import OUTSIDE, Entity


@dataclass
class EntitySpanLabels:
    labels: List[str]
    """One label per candidate span, ``"O"`` for non-entities."""
    unreachable: List[Entity] = field(default_factory=list)
    """Gold entities that are no candidate (wider than ``max_span_width``)."""


def label_sentence_spans(candidates: CandidateSpans, entities: Sequence[Entity]) -> EntitySpanLabels:
    """
    Gold label of each candidate span of a sentence.

    # Parameters

    candidates : `CandidateSpans`
        The sentence's candidate spans.
    entities : `Sequence[Entity]`
        The sentence's gold entities (unique spans, inclusive word offsets).

    # Returns

    `EntitySpanLabels`
        One label per candidate and the entities no candidate matches.
    """
    labels = np.full(len(candidates), OUTSIDE, dtype=object)
    if not entities:
        return EntitySpanLabels(labels.tolist())
    starts = np.fromiter((entity[0] for entity in entities), dtype=np.int64, count=len(entities))
    ends = np.fromiter((entity[1] for entity in entities), dtype=np.int64, count=len(entities))
    names = np.asarray([entity[2] for entity in entities], dtype=object)
    rows = candidates.lookup(starts, ends)
    found = rows >= 0
    labels[rows[found]] = names[found]
    unreachable = [cast(Entity, tuple(entities[i])) for i in np.flatnonzero(~found).tolist()]
    return EntitySpanLabels(labels.tolist(), unreachable)
