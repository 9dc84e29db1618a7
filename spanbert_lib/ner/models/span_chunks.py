"""
Splitting the candidate spans of a batch into encoder passes (LUKE's way of bounding the entity
sequence): every span becomes one entity, and the spans of an instance are spread over
``ceil(n / max_per_pass)`` passes of nearly equal size, each pass with its own copy of the
instance's words.

For an instance with ``n`` real spans and ``M = max_per_pass``:

    passes = ceil(n / M),  size = ceil(n / passes),
    span r (r-th real span, 0-based) -> pass r // size, slot r % size.

E.g. ``n = 10, M = 4``: 3 passes of sizes 4, 4, 2. The split depends only on the instance's own
real spans, never on the padding or on the other instances of the batch, so an instance gets the
same passes (and, in eval mode, the same logits) alone or in any batch. Passes of all instances
are stacked into ``R`` rows of ``P = max(size)`` slots; rows are never empty (an instance without
spans has no row). Everything is index arithmetic on tensors, no Python loop over spans.
"""

import torch


class SpanChunkLayout:
    """
    The row/slot of every real span of a batch.

    # Parameters

    span_mask : `torch.BoolTensor` ``[B, S]``
        True at real spans (anywhere along ``S``; their order is kept).
    max_per_pass : `int`
        ``M``, the most spans (entities) in one pass.

    # Attributes

    num_rows : ``R``, the passes of the whole batch.
    num_slots : ``P <= M``, spans per row (rows of instances with fewer spans are padded).
    row_instance : LongTensor ``[R]``: the instance of each row (to repeat its words).
    flat_index : LongTensor ``[B, S]``: ``row * P + slot`` of each real span (0 at padding).
    """

    def __init__(self, span_mask: torch.Tensor, max_per_pass: int) -> None:
        if max_per_pass < 1:
            raise ValueError(f"max_per_pass must be positive, got {max_per_pass}")
        self.span_mask = span_mask.bool()
        counts = self.span_mask.sum(dim=1)  # [B]
        passes = torch.div(counts + max_per_pass - 1, max_per_pass, rounding_mode="floor")
        sizes = torch.div(counts + passes - 1, passes.clamp(min=1), rounding_mode="floor").clamp(min=0)
        rank = self.span_mask.long().cumsum(dim=1) - 1  # [B, S]
        safe_sizes = sizes.clamp(min=1).unsqueeze(1)
        first_row = passes.cumsum(dim=0) - passes  # [B]
        rows = first_row.unsqueeze(1) + torch.div(rank, safe_sizes, rounding_mode="floor")
        self.num_rows = int(passes.sum())
        self.num_slots = max(int(sizes.max()), 1) if sizes.numel() else 1
        slots = rank.remainder(safe_sizes)
        self.flat_index = torch.where(self.span_mask, rows * self.num_slots + slots, torch.zeros_like(rank))
        self.row_instance = torch.repeat_interleave(torch.arange(len(counts), device=counts.device), passes)
        self.passes = passes
        self.sizes = sizes

    def pack(self, values: torch.Tensor, fill: float = 0) -> torch.Tensor:
        """``values`` ``[B, S, *rest]`` -> ``[R, P, *rest]``, ``fill`` at empty slots."""
        rest = values.shape[2:]
        grid = values.new_full((self.num_rows * self.num_slots, *rest), fill)
        grid[self.flat_index[self.span_mask]] = values[self.span_mask]
        return grid.view(self.num_rows, self.num_slots, *rest)

    def slot_mask(self) -> torch.Tensor:
        """BoolTensor ``[R, P]``: True at slots that hold a real span."""
        return self.pack(self.span_mask, False)

    def unpack(self, values: torch.Tensor) -> torch.Tensor:
        """``values`` ``[R, P, *rest]`` -> ``[B, S, *rest]``, zeros at padded spans."""
        rest = values.shape[2:]
        out = values.new_zeros((*self.span_mask.shape, *rest))
        out[self.span_mask] = values.reshape(self.num_rows * self.num_slots, *rest)[self.flat_index[self.span_mask]]
        return out
