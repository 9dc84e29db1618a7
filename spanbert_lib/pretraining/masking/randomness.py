"""All random draws of the maskers, from one (optional) ``torch.Generator`` for reproducibility."""

from typing import Optional, Sequence

import numpy as np
import torch


def uniforms(shape: Sequence[int], generator: Optional[torch.Generator]) -> np.ndarray:
    """
    Uniform draws in [0, 1).

    # Parameters

    shape : `Sequence[int]`
        Shape of the result.
    generator : `Optional[torch.Generator]`
        Source of the draws (torch's default when None).

    # Returns

    `np.ndarray`
        float64 array of ``shape``.
    """
    device = generator.device if generator is not None else None
    return torch.rand(tuple(shape), generator=generator, dtype=torch.float64, device=device).cpu().numpy()


def random_token_ids(count: int, vocab_size: int, generator: Optional[torch.Generator]) -> np.ndarray:
    """
    Uniform random token ids.

    # Parameters

    count : `int`
        How many ids (`N`).
    vocab_size : `int`
        Ids are drawn from ``[0, vocab_size)``.
    generator : `Optional[torch.Generator]`
        Source of the draws (torch's default when None).

    # Returns

    `np.ndarray`
        `[N]` int64.
    """
    device = generator.device if generator is not None else None
    return torch.randint(0, vocab_size, (count,), generator=generator, device=device).cpu().numpy()
