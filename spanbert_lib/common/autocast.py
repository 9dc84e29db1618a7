"""``autocast_dtype``: the one way options name the dtype that ``torch.autocast`` runs a module in."""

from typing import Optional

import torch


def autocast_dtype_of(name: Optional[str], option: str = "autocast_dtype") -> Optional[torch.dtype]:
    """The torch dtype an ``autocast_dtype`` option (or another ``option`` naming a compute dtype) names
    (``"bfloat16"`` -> ``torch.bfloat16``); None for None. Raises ``ValueError`` when ``name`` is not a floating
    point torch dtype."""
    if name is None:
        return None
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"{option} must name a floating point torch dtype, got {name!r}")
    return dtype
