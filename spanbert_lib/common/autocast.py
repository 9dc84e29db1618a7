"""``autocast_dtype``: the one way options name the dtype that ``torch.autocast`` runs a module in."""

from typing import Optional

import torch


def autocast_dtype_of(name: Optional[str]) -> Optional[torch.dtype]:
    """The torch dtype an ``autocast_dtype`` option names (``"bfloat16"`` -> ``torch.bfloat16``); None for None.
    Raises ``ValueError`` when ``name`` is not a torch dtype."""
    if name is None:
        return None
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"autocast_dtype must name a torch dtype, got {name!r}")
    return dtype
