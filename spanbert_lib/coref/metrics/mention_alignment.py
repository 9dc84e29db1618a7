"""
Turning key and response clusters of one document into chains of mention ids, exactly as the
reference scorer v8.01 (``CorScorer.pm``, ``IdentifMentions``) does before scoring.

* Mentions are exact ``(start, end)`` spans; a response mention gets the id of the key mention
  with the same span, a response mention not in the key (a *twinless* mention) a new id.
* A key span written twice keeps the id of its last occurrence; both occurrences carry it.
* A response span already matched to a key mention is dropped when it comes again (a *repeated
  mention*; the scorer refuses files with more than 10 of them, see ``scorer.py``); repeated
  twinless spans are not detected and share one id. Response chains left empty are removed.

All metrics of the scorer v8 are then computed on these chains: singletons count, twinless
response mentions count against precision and key mentions missing from the response
against recall (no Cai & Strube 2010 adjustment).
"""

from dataclasses import dataclass
from typing import Dict, List, Sequence

from spanbert_lib.common.span_types import Span

Chains = List[List[int]]


@dataclass
class AlignedChains:
    key: Chains
    """Key clusters as mention ids, one list per key cluster (the scorer's kChainsOrig)."""
    response: Chains
    """Response clusters as mention ids, repeats dropped, empty ones removed (rChainsOrig)."""
    key_mentions: int
    """Distinct key spans."""
    response_mentions: int
    """Distinct response spans (after dropping repeats)."""
    matched_mentions: int
    """Response spans equal to a key span."""
    repeated_mentions: int
    """Response mentions dropped because their span (matched to the key) came again."""


def _span(mention) -> Span:
    return int(mention[0]), int(mention[1])


def align_mentions(
    key_clusters: Sequence[Sequence[Span]], response_clusters: Sequence[Sequence[Span]]
) -> AlignedChains:
    key_spans = [[_span(m) for m in cluster] for cluster in key_clusters]
    key_id: Dict[Span, int] = {}
    next_id = 0
    for cluster in key_spans:
        for span in cluster:
            key_id[span] = next_id
            next_id += 1

    response_id: Dict[Span, int] = {}
    matched = repeated = 0
    response_spans: List[List[Span]] = []
    for response_cluster in response_clusters:
        kept = []
        for span in map(_span, response_cluster):
            if span in response_id:
                repeated += 1
                continue
            if span in key_id:
                response_id[span] = key_id[span]
                matched += 1
            kept.append(span)
        if kept:
            response_spans.append(kept)
    for cluster in response_spans:
        for span in cluster:
            if span not in response_id:
                response_id[span] = next_id
                next_id += 1

    return AlignedChains(
        key=[[key_id[span] for span in cluster] for cluster in key_spans],
        response=[[response_id[span] for span in cluster] for cluster in response_spans],
        key_mentions=len(key_id),
        response_mentions=len(response_id),
        matched_mentions=matched,
        repeated_mentions=repeated,
    )


def chain_index(chains: Chains) -> Dict[int, int]:
    """mention id -> index of the LAST chain holding it (the scorer's ``Indexa``)."""
    return {mention: index for index, chain in enumerate(chains) for mention in chain}


def has_repeated_ids(chains: Chains) -> bool:
    """Whether some id occurs more than once over all chains (only possible through repeated
    key spans or repeated twinless response spans)."""
    seen = set()
    for chain in chains:
        for mention in chain:
            if mention in seen:
                return True
            seen.add(mention)
    return False
