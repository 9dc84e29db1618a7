"""What kind of JSON value a Python value parsed from JSON is, for error messages."""

from typing import Any


def json_kind(value: Any) -> str:
    """``"a string"``, ``"a number"``, ``"a boolean"``, ``"an array"``, ``"an object"`` or ``"null"``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return {list: "an array", dict: "an object", str: "a string"}.get(type(value), type(value).__name__)
