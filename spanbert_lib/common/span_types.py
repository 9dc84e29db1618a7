"""Type aliases for spans, shared by every task."""

from typing import Tuple

Span = Tuple[int, int]
"""``(start, end)`` token (or word) indices of a span; ``end`` is inclusive unless the user says otherwise."""
