"""
Gold cluster labels of the candidate mention spans of a document (every span of at most
``max_span_width`` words inside one sentence, Lee et al. 2017; enumerated by
:mod:`spanbert_lib.common.candidate_spans`), vectorised with numpy.
"""

from dataclasses import dataclass, field
from typing import List, Sequence

import numpy as np

from spanbert_lib.common.candidate_spans import CandidateSpans
from spanbert_lib.common.span_types import Span


@dataclass
class MentionClusterLabels:
    """
    Gold cluster labels of the ``N`` candidate spans of a document.

    # Parameters

    labels : `np.ndarray`
        `[N]` int64: the index of the gold cluster of each candidate span, -1 for spans that
        are no gold mention. A span listed in several clusters gets the first.
    num_mentions : `int`, optional (default = `0`)
        Gold mentions of the document.
    """

    labels: np.ndarray
    num_mentions: int = 0
    too_wide: List[Span] = field(default_factory=list)
    """Gold mentions longer than ``max_span_width`` words (no candidate can match them)."""
    crossing_sentences: List[Span] = field(default_factory=list)
    """Gold mentions whose words lie in more than one sentence."""
    in_several_clusters: List[Span] = field(default_factory=list)
    """Spans that are mentions of more than one cluster (labelled with the first)."""

    @property
    def unreachable(self) -> List[Span]:
        return sorted(set(self.too_wide) | set(self.crossing_sentences))


def label_candidate_spans(
    candidates: CandidateSpans, sentence_ids: np.ndarray, clusters: Sequence[Sequence[Span]]
) -> MentionClusterLabels:
    """
    Gold cluster index per candidate, and the gold mentions no candidate can represent.

    # Parameters

    candidates : `CandidateSpans`
        The document's ``N`` candidate spans.
    sentence_ids : `np.ndarray`
        `[W]` sentence of each of the document's ``W`` words.
    clusters : `Sequence[Sequence[Span]]`
        Gold clusters of inclusive word spans.

    # Returns

    `MentionClusterLabels`
        The labels and the gold mentions no candidate matches.
    """
    labels = np.full(len(candidates), -1, dtype=np.int64)
    mentions = [(start, end, index) for index, cluster in enumerate(clusters) for start, end in cluster]
    if not mentions:
        return MentionClusterLabels(labels)
    table = np.asarray(mentions, dtype=np.int64).reshape(-1, 3)
    starts, ends, cluster_index = table[:, 0], table[:, 1], table[:, 2]
    rows = candidates.lookup(starts, ends)
    sentence_ids = np.asarray(sentence_ids, dtype=np.int64)
    wide = ends - starts + 1 > candidates.max_span_width
    crossing = sentence_ids[starts] != sentence_ids[ends]

    reachable = np.flatnonzero(rows >= 0)
    # first mention of each candidate row (mentions are in cluster order)
    unique_rows, first = np.unique(rows[reachable], return_index=True)
    labels[unique_rows] = cluster_index[reachable[first]]

    several: List[Span] = []
    if len(unique_rows) < len(reachable):
        pairs = np.unique(np.stack((rows[reachable], cluster_index[reachable]), axis=1), axis=0)
        rows_in_clusters, counts = np.unique(pairs[:, 0], return_counts=True)
        several = [(int(start), int(end)) for start, end in candidates.spans[rows_in_clusters[counts > 1]]]

    def as_spans(selected: np.ndarray) -> List[Span]:
        return [(int(s), int(e)) for s, e in zip(starts[selected], ends[selected])]

    return MentionClusterLabels(
        labels,
        num_mentions=len(mentions),
        too_wide=as_spans(wide),
        crossing_sentences=as_spans(crossing),
        in_several_clusters=several,
    )
