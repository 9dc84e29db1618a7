"""All random draws of the maskers, from one (optional) ``torch.Generator`` for reproducibility."""
from typing import Optional, Sequence

import numpy as np
import torch


def uniforms(shape: Sequence[int], generator: Optional[torch.Generator]) -> np.ndarray:
    """float64 array of ``shape``, uniform in [0, 1), drawn from ``generator`` (torch's default when None)."""
    device = generator.device if generator is not None else None
    return torch.rand(tuple(shape), generator=generator, dtype=torch.float64, device=device).cpu().numpy()


def random_token_ids(count: int, vocab_size: int, generator: Optional[torch.Generator]) -> np.ndarray:
    """int64[count] uniform in [0, vocab_size), drawn from ``generator``."""
    device = generator.device if generator is not None else None
    return torch.randint(0, vocab_size, (count,), generator=generator, device=device).cpu().numpy()
