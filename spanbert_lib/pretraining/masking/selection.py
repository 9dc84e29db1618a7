"""Choosing non-overlapping units (tokens, words, phrases) in random order up to a token budget."""

from typing import Optional

import numpy as np
import torch

from spanbert_lib.pretraining.masking.randomness import uniforms


def select_up_to_budget(
    unit_tokens: np.ndarray,
    available: np.ndarray,
    budget: np.ndarray,
    generator: Optional[torch.Generator] = None,
) -> np.ndarray:
    """
    Visits the available units of each row in a uniformly random order and takes them while
    the running token count stays within ``budget``. The first unit that would cross the budget
    is taken with probability ``(budget - taken so far) / its tokens`` and the selection stops
    there either way, so the expected number of selected tokens is exactly ``budget`` (when the
    row has enough units) and the overshoot is less than one unit.

    # Parameters

    unit_tokens : `np.ndarray`
        `[B, U]` int64, tokens per unit (`B` rows, `U` units per row).
    available : `np.ndarray`
        `[B, U]` bool, units that may be chosen.
    budget : `np.ndarray`
        `[B]` float64, tokens to select per row.
    generator : `torch.Generator`, optional (default = `None`)
        Source of the random order.

    # Returns

    `np.ndarray`
        `[B, U]` bool, the selected units.
    """
    batch_size, num_units = unit_tokens.shape
    if num_units == 0:
        return available.copy()
    draws = uniforms((batch_size, num_units + 1), generator)
    keys = np.where(available, draws[:, :num_units], 2.0)
    order = np.argsort(keys, axis=1, kind="stable")
    tokens = np.take_along_axis(unit_tokens * available, order, axis=1)
    after = np.cumsum(tokens, axis=1)
    before = after - tokens
    budget = budget[:, None]
    fits = after <= budget
    crossing = (before < budget) & ~fits & (draws[:, num_units:] * tokens < budget - before)
    chosen = np.zeros_like(available)
    np.put_along_axis(chosen, order, np.take_along_axis(available, order, axis=1) & (fits | crossing), axis=1)
    return chosen
