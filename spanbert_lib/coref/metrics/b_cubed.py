"""
B-cubed (Bagga & Baldwin, 1998) as in the reference scorer v8.01.

For each response mention m (in response chain R) that is a key mention (in key chain K):
``c = |R ∩ K|``; precision numerator += ``c / |R|``, recall numerator += ``c / |K|``.
Twinless response mentions add 0 to both numerators but count in the precision denominator
(all response mentions); key mentions missing from the response add 0 to recall, whose
denominator is all key mentions. Singletons count like any other chain.
"""

from typing import Dict, Tuple

from spanbert_lib.coref.metrics.mention_alignment import Chains, chain_index


def b_cubed_counts(key: Chains, response: Chains) -> Tuple[float, float, float, float]:
    """
    B-cubed counts of one document.

    # Parameters

    key : `Chains`
        The key chains, as mention ids (:func:`align_mentions`).
    response : `Chains`
        The response chains, as mention ids.

    # Returns

    `Tuple[float, float, float, float]`
        ``(recall_num, recall_den, precision_num, precision_den)``.
    """
    key_of = chain_index(key)
    key_sets = [set(chain) for chain in key]
    recall_num = precision_num = 0.0
    for chain in response:
        # |R ∩ K| counted over R's positions, per key chain met in R
        overlap: Dict[int, int] = {}
        for mention in chain:
            if mention in key_of:
                k = key_of[mention]
                if k not in overlap:
                    overlap[k] = sum(1 for other in chain if other in key_sets[k])
        for mention in chain:
            if mention in key_of:
                k = key_of[mention]
                precision_num += overlap[k] / len(chain)
                recall_num += overlap[k] / len(key[k])
    key_mentions = sum(len(chain) for chain in key)
    response_mentions = sum(len(chain) for chain in response)
    return recall_num, key_mentions, precision_num, response_mentions
