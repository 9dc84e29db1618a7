"""
BLANC (Recasens & Hovy, 2011) generalised to predicted mentions (Luo et al., 2014; Pradhan
et al., 2014), as in the reference scorer v8.01.

Per document, on mention-id chains: coreference links = unordered pairs of mentions in one
chain, non-coreference links = pairs of mentions in different chains, each a SET of pairs for
the key and for the response. The counts ``|C_k ∩ C_r|, |C_k|, |C_r|`` and
``|N_k ∩ N_r|, |N_k|, |N_r|`` are summed over documents, then (``blanc_scores``):

    R_c = |C_k ∩ C_r| / |C_k|  (-1 when |C_k| = 0)     P_c = ... / |C_r|  (0 when |C_r| = 0)
    R_n = |N_k ∩ N_r| / |N_k|  (-1 when |N_k| = 0)     P_n = ... / |N_r|  (0 when |N_r| = 0)
    F_c, F_n = harmonic means (0 when P + R = 0)
    BLANC = averages of the two (R, P, F); when the key has no coreference links only the
    non-coreference values are used, when it has no non-coreference links only the
    coreference ones, and 0 when it has neither.
"""

from collections import Counter
from itertools import combinations
from typing import Iterable, Set, Tuple

from spanbert_lib.coref.metrics.mention_alignment import Chains, has_repeated_ids

BlancCounts = Tuple[int, int, int, int, int, int, int, int]
"""(|C_k ∩ C_r|, |C_k|, |C_k ∩ C_r|, |C_r|, |N_k ∩ N_r|, |N_k|, |N_k ∩ N_r|, |N_r|):
recall and precision numerators and denominators for coreference, then non-coreference links."""


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def _links(chains: Chains) -> Tuple[Set[Tuple[int, int]], Set[Tuple[int, int]]]:
    coreference = {(min(a, b), max(a, b)) for chain in chains for a, b in combinations(chain, 2)}
    non_coreference = {
        (min(a, b), max(a, b)) for first, second in combinations(chains, 2) for a in first for b in second
    }
    return coreference, non_coreference


def _counts_from_link_sets(key: Chains, response: Chains) -> BlancCounts:
    key_c, key_n = _links(key)
    response_c, response_n = _links(response)
    both_c, both_n = len(key_c & response_c), len(key_n & response_n)
    return both_c, len(key_c), both_c, len(response_c), both_n, len(key_n), both_n, len(response_n)


def _counts_closed_form(key: Chains, response: Chains) -> BlancCounts:
    """Same counts without enumerating pairs; valid when no id occurs twice in key or response."""
    key_c = sum(_pairs(len(chain)) for chain in key)
    response_c = sum(_pairs(len(chain)) for chain in response)
    key_n = _pairs(sum(len(chain) for chain in key)) - key_c
    response_n = _pairs(sum(len(chain) for chain in response)) - response_c

    key_of = {mention: i for i, chain in enumerate(key) for mention in chain}
    cells: Counter = Counter()  # (key chain, response chain) -> common mentions
    for j, chain in enumerate(response):
        for mention in chain:
            if mention in key_of:
                cells[key_of[mention], j] += 1
    per_key: Counter = Counter()
    per_response: Counter = Counter()
    for (i, j), n in cells.items():
        per_key[i] += n
        per_response[j] += n
    both_c = sum(_pairs(n) for n in cells.values())
    common = sum(cells.values())
    # pairs of common mentions split in both key and response, by inclusion-exclusion
    both_n = (
        _pairs(common)
        - sum(_pairs(n) for n in per_key.values())
        - sum(_pairs(n) for n in per_response.values())
        + both_c
    )
    return both_c, key_c, both_c, response_c, both_n, key_n, both_n, response_n


def blanc_counts(key: Chains, response: Chains) -> BlancCounts:
    """
    BLANC link counts of one document.

    # Parameters

    key : `Chains`
        The key chains, as mention ids (:func:`align_mentions`).
    response : `Chains`
        The response chains, as mention ids.

    # Returns

    `BlancCounts`
        The eight link counts (see ``BlancCounts``).
    """
    if has_repeated_ids(key) or has_repeated_ids(response):
        return _counts_from_link_sets(key, response)
    return _counts_closed_form(key, response)


def blanc_scores(counts: Iterable[float]) -> Tuple[float, float, float]:
    """
    BLANC scores, with the scorer's special cases for keys without coreference or without
    non-coreference links.

    # Parameters

    counts : `Iterable[float]`
        ``BlancCounts``, summed over documents.

    # Returns

    `Tuple[float, float, float]`
        ``(recall, precision, f1)``.
    """
    nrc, drc, npc, dpc, nrn, drn, npn, dpn = counts
    recall_c = nrc / drc if drc else -1.0
    recall_n = nrn / drn if drn else -1.0
    precision_c = npc / dpc if dpc else 0.0
    precision_n = npn / dpn if dpn else 0.0
    f_c = 2 * precision_c * recall_c / (precision_c + recall_c) if precision_c + recall_c else 0.0
    f_n = 2 * precision_n * recall_n / (precision_n + recall_n) if precision_n + recall_n else 0.0
    if recall_c == -1 and recall_n == -1:
        return 0.0, 0.0, 0.0
    if recall_c == -1:
        return recall_n, precision_n, f_n
    if recall_n == -1:
        return recall_c, precision_c, f_c
    return (recall_c + recall_n) / 2, (precision_c + precision_n) / 2, (f_c + f_n) / 2
