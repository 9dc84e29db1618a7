"""What kind of JSON value a Python value parsed from JSON is, and what in it is no text, for error messages."""

import re
from typing import Any, Dict, List, Optional, Tuple

_SURROGATE = re.compile("[\ud800-\udfff]")


def json_kind(value: Any) -> str:
    """``"a string"``, ``"a number"``, ``"a boolean"``, ``"an array"``, ``"an object"`` or ``"null"``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    kinds: Dict[type, str] = {list: "an array", dict: "an object", str: "a string"}
    return kinds.get(type(value), type(value).__name__)


def lone_surrogate(value: Any) -> Optional[Tuple[str, str]]:
    """
    ``(key path, code point)`` of the first string of a parsed JSON value (a key or a value) that holds a lone
    UTF-16 surrogate: JSON's ``"\\ud800"`` parses to one; it is no Unicode character and cannot be encoded. The key
    path reads ``"passage"``, ``"sentences[2][0]"`` (``""`` for ``value`` itself); None when every string is text.
    Walks any nesting depth.
    """
    stack: List[Tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found:
                return where, found.group()
        elif isinstance(item, dict):
            children = []
            for key, child in item.items():
                path = f"{where}.{key}" if where else str(key)
                found = _SURROGATE.search(key) if isinstance(key, str) else None
                if found:
                    return path, found.group()
                children.append((path, child))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend((f"{where}[{index}]", child) for index, child in reversed(list(enumerate(item))))
    return None


def lone_surrogate_key(value: Any) -> Optional[str]:
    """The key path of :func:`lone_surrogate`, or None."""
    found = lone_surrogate(value)
    return None if found is None else found[0]
