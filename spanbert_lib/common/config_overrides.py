"""Config overrides given as text (``allennlp predict -o``'s form): one JSON object of settings."""

import json
from typing import Any, Dict


def overrides_object(text: str) -> Dict[str, Any]:
    """The settings ``text`` holds (``{}`` for an empty string). Raises ``json.JSONDecodeError`` when it is not JSON
    and ``TypeError`` when it is JSON but not an object; each caller words the error for its user."""
    parsed = json.loads(text) if text else {}
    if not isinstance(parsed, dict):
        raise TypeError(f"expected a JSON object of settings, got {text!r}")
    return parsed
