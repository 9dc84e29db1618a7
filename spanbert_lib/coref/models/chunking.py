"""Cutting row-wise work into chunks whose intermediate tensors stay under a memory budget."""
from typing import Iterator


def row_chunks(num_rows: int, elements_per_row: int, budget: int) -> Iterator[slice]:
    """
    Consecutive slices covering ``range(num_rows)`` with at most ``budget // elements_per_row``
    rows each (at least one row per slice, so a single huge row still gets processed).
    """
    if num_rows <= 0:
        return
    rows = max(1, budget // max(1, elements_per_row))
    for start in range(0, num_rows, rows):
        yield slice(start, min(start + rows, num_rows))
