"""
Matrix products with the output width rounded up to a multiple of 16, for inference on the CPU.

MKL's AVX2 single-precision kernels work on 16 output columns at a time; a product whose output
width is not a multiple of 16 (the coreference FFNN's 300 or 3000 units, span embeddings of
``3 * 384 + 20 = 1172``) runs markedly slower than the same product widened to the next multiple of
16 (``benchmarks/coref_inference.py`` times it). Widening a weight with zero rows leaves every real output
column exactly as it was (each column is its own dot products), so the helpers here pad, multiply
and, where the caller needs it, slice the padding off again.

They are used without gradients only (pruning and inference passes); training keeps the plain
``torch.nn.Linear`` calls.

Shapes: `N` inputs, `I` input features, `O` output features, `O'` = :func:`aligned_size` (`O`).
"""

import torch
import torch.nn.functional as F

ALIGNMENT = 16


def aligned_size(size: int) -> int:
    """``size`` rounded up to a multiple of :data:`ALIGNMENT`."""
    return -(-size // ALIGNMENT) * ALIGNMENT


def pad_rows(weight: torch.Tensor, rows: int) -> torch.Tensor:
    """
    ``weight`` `[O, ...]` (a weight matrix or a bias) with zero rows appended up to ``rows``.

    # Parameters

    weight : `torch.Tensor`
        `[O, ...]`.
    rows : `int`
        At least `O`.

    # Returns

    `torch.Tensor`
        `[rows, ...]` (``weight`` itself when it already has ``rows`` rows).
    """
    missing = rows - weight.size(0)
    if missing == 0:
        return weight
    return torch.cat([weight, weight.new_zeros((missing, *weight.shape[1:]))], dim=0)


def aligned_linear(inputs: torch.Tensor, linear: torch.nn.Linear) -> torch.Tensor:
    """
    ``linear(inputs)`` computed with the output width padded to a multiple of 16.

    # Parameters

    inputs : `torch.Tensor`
        `[..., I]`.
    linear : `torch.nn.Linear`
        `I -> O`.

    # Returns

    `torch.Tensor`
        `[..., O]`, the same values as ``linear(inputs)`` (a view into a `[..., O']` result).
    """
    width = aligned_size(linear.out_features)
    if width == linear.out_features:
        return linear(inputs)
    bias = None if linear.bias is None else pad_rows(linear.bias, width)
    return F.linear(inputs, pad_rows(linear.weight, width), bias)[..., : linear.out_features]
