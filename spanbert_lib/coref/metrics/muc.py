"""
MUC (Vilain et al., 1995) as in the reference scorer v8.01: links within chains.

Recall numerator = precision numerator = number of response mentions that have a LATER mention
in the same response chain belonging to the same key chain (= sum over key chains K of
``|K| - |partition of K by the response|`` with missing mentions as their own parts);
recall denominator = sum over key chains of ``|K| - 1``, precision denominator = sum over
response chains of ``|R| - 1``. Singletons contribute no links.
"""

from collections import Counter
from typing import Tuple

from spanbert_lib.coref.metrics.mention_alignment import Chains, chain_index


def muc_counts(key: Chains, response: Chains) -> Tuple[float, float, float, float]:
    """
    MUC counts of one document.

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
    correct = 0
    for chain in response:
        groups = Counter(key_of[m] for m in chain if m in key_of)
        correct += sum(size - 1 for size in groups.values())
    key_links = sum(len(chain) - 1 for chain in key if chain)
    response_links = sum(len(chain) - 1 for chain in response if chain)
    return correct, key_links, correct, response_links
