"""
Weighted sums of table rows through ``embedding_bag``, the one way the coreference model builds them
(head attention, the mention scorer's head share, higher-order antecedent attention): memory linear in
the number of (row, weight) pairs, never a `[N, width, H]` tensor.
"""

from typing import Optional

import torch
import torch.nn.functional as F


def weighted_bag_sum(
    indices: torch.Tensor,
    table: torch.Tensor,
    weights: torch.Tensor,
    offsets: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """
    ``F.embedding_bag(indices, table, offsets, mode="sum", per_sample_weights=weights)`` in ``table``'s
    dtype, also under ``torch.autocast``: autocast would cast the table to float16 / bfloat16 but not
    the weights, and ``embedding_bag`` refuses two dtypes.

    # Parameters

    indices : `torch.LongTensor`
        `[T]` rows of ``table`` (bags given by ``offsets``) or `[N, C]` (one bag per row).
    table : `torch.Tensor`
        `[V, H]` the rows summed.
    weights : `torch.Tensor`
        The weight of each index, shaped as ``indices``.
    offsets : `torch.LongTensor`, optional
        `[N]` where each bag starts in a flat ``indices``.

    # Returns

    `torch.Tensor`
        `[N, H]` in ``table``'s dtype.
    """
    with torch.autocast(table.device.type, enabled=False):
        return F.embedding_bag(
            indices, table, offsets, mode="sum", per_sample_weights=weights.to(table.dtype).contiguous()
        )
