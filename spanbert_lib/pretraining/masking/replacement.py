"""Turning chosen spans into a :class:`MaskingOutput`: per-span [MASK] / random / keep decisions."""

from typing import Optional

import numpy as np
import torch

from spanbert_lib.pretraining.masking.output import (
    IGNORE_INDEX,
    REPLACE_KEEP,
    REPLACE_MASK,
    REPLACE_RANDOM,
    MaskingOutput,
)
from spanbert_lib.pretraining.masking.randomness import random_token_ids, uniforms


def apply_span_replacement(
    input_ids: np.ndarray,
    span_batch: np.ndarray,
    span_first: np.ndarray,
    span_last: np.ndarray,
    span_num_words: np.ndarray,
    *,
    mask_token_id: int,
    vocab_size: int,
    mask_probability: float,
    random_probability: float,
    generator: Optional[torch.Generator] = None,
    device: Optional[torch.device] = None,
) -> MaskingOutput:
    """
    Draws one decision per span (``mask_probability``: every token becomes ``mask_token_id``;
    ``random_probability``: every token becomes its own uniform id in [0, vocab_size); else
    unchanged) and returns the outputs as tensors on ``device``.

    # Parameters

    input_ids : `np.ndarray`
        `[B, L]` int64 wordpiece ids (`B` blocks of length `L`).
    span_batch : `np.ndarray`
        `[S]` int64, the block of each of the `S` spans (any order, non-overlapping).
    span_first : `np.ndarray`
        `[S]` int64, first token position of each span.
    span_last : `np.ndarray`
        `[S]` int64, last token position of each span (inclusive).
    span_num_words : `np.ndarray`
        `[S]` int64, whole words each span covers.
    mask_token_id : `int`
        Id of the [MASK] token.
    vocab_size : `int`
        Random replacements are drawn from ``[0, vocab_size)``.
    mask_probability : `float`
        Chance that a span becomes [MASK] tokens.
    random_probability : `float`
        Chance that a span becomes random tokens.
    generator : `torch.Generator`, optional (default = `None`)
        Source of all randomness.
    device : `torch.device`, optional (default = `None`)
        Where the output tensors go.

    # Returns

    `MaskingOutput`
        The corrupted blocks, labels and spans (sorted by block, then first token).
    """
    shape = input_ids.shape
    order = np.argsort(span_batch * (shape[1] + 1) + span_first, kind="stable")
    batch, first, last = span_batch[order], span_first[order], span_last[order]
    decision = uniforms((order.shape[0],), generator)
    replacement = np.full(order.shape[0], REPLACE_KEEP, dtype=np.int64)
    replacement[decision < mask_probability + random_probability] = REPLACE_RANDOM
    replacement[decision < mask_probability] = REPLACE_MASK

    # Every masked token as (its span, its flat position block * L + position).
    span_sizes = last - first + 1
    span_of_token = np.repeat(np.arange(order.shape[0]), span_sizes)
    offset_in_span = np.arange(span_of_token.shape[0]) - np.repeat(np.cumsum(span_sizes) - span_sizes, span_sizes)
    flat = (batch * shape[1] + first)[span_of_token] + offset_in_span

    original = input_ids.reshape(-1)
    labels = np.full_like(original, IGNORE_INDEX)
    labels[flat] = original[flat]
    span_starts = np.full_like(original, -1)
    span_starts[flat] = first[span_of_token]
    span_ends = np.full_like(original, -1)
    span_ends[flat] = last[span_of_token]
    new_ids = original.copy()
    token_replacement = replacement[span_of_token]
    new_ids[flat[token_replacement == REPLACE_MASK]] = mask_token_id
    randomised = flat[token_replacement == REPLACE_RANDOM]
    new_ids[randomised] = random_token_ids(randomised.shape[0], vocab_size, generator)

    def to_torch(array: np.ndarray, array_shape=None) -> torch.Tensor:
        array = np.ascontiguousarray(array, dtype=np.int64)
        return torch.from_numpy(array if array_shape is None else array.reshape(array_shape)).to(device)

    return MaskingOutput(
        input_ids=to_torch(new_ids, shape),
        labels=to_torch(labels, shape),
        span_starts=to_torch(span_starts, shape),
        span_ends=to_torch(span_ends, shape),
        spans=to_torch(np.stack([batch, first, last], axis=1).reshape(-1, 3)),
        span_replacement=to_torch(replacement),
        span_num_words=to_torch(span_num_words[order]),
    )
