"""Reading a JSON file that may be missing, half written or of another shape (a run's config or metrics)."""

import json
import os
from typing import Any, Dict, Optional, Union


def read_json_object(path: Union[str, os.PathLike]) -> Optional[Dict[str, Any]]:
    """
    The JSON object in ``path``; None when the file does not exist, cannot be read, is not JSON (a file being
    written) or holds another JSON value than an object.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None
