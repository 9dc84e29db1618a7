"""What kind of JSON value a Python value parsed from JSON is, and what in it is no text, for error messages."""

import re
from typing import Any, List, Optional, Tuple

_SURROGATE = re.compile("[\ud800-\udfff]")


def json_kind(value: Any) -> str:
    """``"a string"``, ``"a number"``, ``"a boolean"``, ``"an array"``, ``"an object"`` or ``"null"``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return {list: "an array", dict: "an object", str: "a string"}.get(type(value), type(value).__name__)


def lone_surrogate_key(value: Any) -> Optional[str]:
    """
    The key path (``"passage"``, ``"sentences[2][0]"``) of the first string of a parsed JSON value that holds a
    lone UTF-16 surrogate (JSON's ``"\\ud800"`` parses to one; it is no Unicode character and cannot be encoded),
    ``""`` when ``value`` itself is such a string, None when there is none. Walks any nesting depth.
    """
    stack: List[Tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return where
        elif isinstance(item, dict):
            stack.extend((f"{where}.{key}" if where else str(key), child) for key, child in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((f"{where}[{index}]", child) for index, child in reversed(list(enumerate(item))))
    return None
