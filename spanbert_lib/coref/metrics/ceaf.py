"""
CEAF (Luo, 2005) as in the reference scorer v8.01, with the optimal one-to-one alignment of
key and response chains (Kuhn-Munkres, ``scipy.optimize.linear_sum_assignment``).

* CEAFm (mention-based, phi3): ``phi(K, R) = |K ∩ R|``; recall = sum phi / #key mentions,
  precision = sum phi / #response mentions.
* CEAFe (entity-based, phi4): ``phi(K, R) = 2 |K ∩ R| / (|K| + |R|)``; recall = sum phi /
  #key chains, precision = sum phi / #response chains.

``|K ∩ R|`` counts the positions of K whose id is in R (the scorer's definition).

Shapes: `K` key chains, `R` response chains of one document.
"""

from typing import Dict, Tuple

import numpy
from scipy.optimize import linear_sum_assignment

from spanbert_lib.coref.metrics.mention_alignment import Chains


def overlap_matrix(key: Chains, response: Chains) -> numpy.ndarray:
    """
    How many mentions each key chain shares with each response chain.

    # Parameters

    key : `Chains`
        The key chains, as mention ids (:func:`align_mentions`).
    response : `Chains`
        The response chains, as mention ids.

    # Returns

    `numpy.ndarray`
        `[K, R]` int matrix of ``|K_i ∩ R_j|``.
    """
    chains_with: Dict[int, set] = {}
    for j, chain in enumerate(response):
        for mention in chain:
            chains_with.setdefault(mention, set()).add(j)
    overlap = numpy.zeros((len(key), len(response)), dtype=numpy.int64)
    for i, chain in enumerate(key):
        for mention in chain:
            for j in chains_with.get(mention, ()):
                overlap[i, j] += 1
    return overlap


def _aligned_similarity(similarity: numpy.ndarray) -> float:
    if similarity.size == 0:
        return 0.0
    rows, columns = linear_sum_assignment(similarity, maximize=True)
    return float(similarity[rows, columns].sum())


def ceaf_counts(
    key: Chains, response: Chains
) -> Tuple[Tuple[float, float, float, float], Tuple[float, float, float, float]]:
    """
    CEAFm and CEAFe counts of one document.

    # Parameters

    key : `Chains`
        The key chains, as mention ids (:func:`align_mentions`).
    response : `Chains`
        The response chains, as mention ids.

    # Returns

    `Tuple[Tuple[float, float, float, float], Tuple[float, float, float, float]]`
        ``(ceafm, ceafe)``, each ``(recall_num, recall_den, precision_num, precision_den)``.
    """
    overlap = overlap_matrix(key, response)
    key_sizes = numpy.array([len(chain) for chain in key], dtype=numpy.float64)
    response_sizes = numpy.array([len(chain) for chain in response], dtype=numpy.float64)

    mention_similarity = _aligned_similarity(overlap.astype(numpy.float64))
    entity_similarity = _aligned_similarity(
        2.0 * overlap / (key_sizes[:, None] + response_sizes[None, :])
        if overlap.size
        else overlap.astype(numpy.float64)
    )

    ceafm = (mention_similarity, float(key_sizes.sum()), mention_similarity, float(response_sizes.sum()))
    ceafe = (entity_similarity, float(len(key)), entity_similarity, float(len(response)))
    return ceafm, ceafe
