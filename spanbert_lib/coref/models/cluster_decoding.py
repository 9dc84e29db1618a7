"""
From antecedent scores to clusters: each kept span links to its best-scoring antecedent (or to
none when the dummy wins); clusters are the connected groups of linked spans. Antecedents
always come earlier, so the links form a forest whose roots are found by pointer jumping
(``O(K log K)`` tensor work, no loop over spans).

Shapes: `K` kept spans of one document, `C` antecedent slots per kept span.
"""

from typing import List, Optional, Tuple

import torch

from spanbert_lib.common.span_types import Span


def predicted_antecedents(
    scores_with_dummy: torch.Tensor, antecedents: torch.Tensor
) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    Each kept span's best-scoring antecedent. Ties go to the dummy.

    # Parameters

    scores_with_dummy : `torch.Tensor`
        `[K, C + 1]` antecedent scores, the dummy's in column 0.
    antecedents : `torch.LongTensor`
        `[K, C]` each kept span's antecedents, as indices into the kept spans.

    # Returns

    `Tuple[torch.LongTensor, torch.LongTensor]`
        ``(slots, spans)``, both `[K]`: the chosen slot (index into ``antecedents[i]``, -1 for
        the dummy) and the chosen kept span (-1 for the dummy).
    """
    best = scores_with_dummy.argmax(dim=1) - 1
    chosen = antecedents.gather(1, best.clamp(min=0).unsqueeze(1)).squeeze(1)
    return best, torch.where(best >= 0, chosen, torch.full_like(chosen, -1))


def cluster_roots(antecedent_spans: torch.Tensor) -> torch.Tensor:
    """
    The first span of each kept span's antecedent chain.

    # Parameters

    antecedent_spans : `torch.LongTensor`
        `[K]` each kept span's antecedent (an index below its own), or -1 for none.

    # Returns

    `torch.LongTensor`
        `[K]` the first span of each span's chain (itself when it has no antecedent).
    """
    positions = torch.arange(antecedent_spans.numel(), device=antecedent_spans.device)
    parents = torch.where(antecedent_spans >= 0, antecedent_spans, positions)
    if bool((parents > positions).any()):
        raise ValueError("an antecedent must come before its span")
    while True:
        grandparents = parents[parents]
        if torch.equal(grandparents, parents):
            return parents
        parents = grandparents


def clusters_from_antecedents(
    spans: torch.Tensor, antecedent_spans: torch.Tensor, singletons: Optional[torch.Tensor] = None
) -> List[List[Span]]:
    """
    The clusters the antecedent links form, and optionally single-mention clusters.

    # Parameters

    spans : `torch.LongTensor`
        `[K, 2]` inclusive word offsets of the kept spans.
    antecedent_spans : `torch.LongTensor`
        `[K]` each kept span's antecedent, as :func:`cluster_roots` takes it.
    singletons : `torch.BoolTensor`, optional (default = `None`)
        `[K]` kept spans predicted to be mentions; those that link to nothing and that nothing links
        to become clusters of one span (LitBank annotates singletons). None: no singletons.

    # Returns

    `List[List[Span]]`
        Clusters of at least two spans (and the singletons), each in span order, ordered by their
        first span.
    """
    if antecedent_spans.numel() == 0:
        return []
    roots = cluster_roots(antecedent_spans)
    linked = antecedent_spans >= 0
    in_cluster = linked.clone()
    in_cluster[antecedent_spans[linked]] = True
    if singletons is not None:
        in_cluster |= singletons  # an unlinked mention is its own root
    members = torch.nonzero(in_cluster).squeeze(1)
    # group members by root (stable: members are in span order within a root)
    members = members[torch.argsort(roots[members], stable=True)]
    member_roots = roots[members].tolist()
    member_spans = spans[members].tolist()
    clusters: List[List[Span]] = []
    previous_root = None
    for root, (start, end) in zip(member_roots, member_spans):
        if root != previous_root:
            clusters.append([])
            previous_root = root
        clusters[-1].append((int(start), int(end)))
    return clusters
