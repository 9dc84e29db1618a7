"""Cutting row-wise work into chunks whose intermediate tensors stay under a memory budget."""

from typing import Iterator


def row_chunks(num_rows: int, elements_per_row: int, budget: int) -> Iterator[slice]:
    """
    Consecutive slices covering ``range(num_rows)``, each small enough for the budget.

    # Parameters

    num_rows : `int`
        How many rows the work has.
    elements_per_row : `int`
        Tensor elements one row needs.
    budget : `int`
        Most tensor elements one slice may need.

    # Returns

    `Iterator[slice]`
        Slices of at most ``budget // elements_per_row`` rows each (at least one row per slice,
        so a single huge row still gets processed).
    """
    if num_rows <= 0:
        return
    rows = max(1, budget // max(1, elements_per_row))
    for start in range(0, num_rows, rows):
        yield slice(start, min(start + rows, num_rows))
