"""JSON responses for predictor outputs, which may hold infinite scores (e.g. a QA span score of -inf)."""

import json
import math
from typing import Any


def finite_json(value: Any) -> Any:
    """
    A JSON-like value with every NaN / infinite float replaced by None (JSON has no such numbers).

    # Parameters

    value : `Any`
        Nested dicts, lists, tuples and scalars.

    # Returns

    `Any`
        The same structure (tuples become lists) with non-finite floats as None.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(item) for item in value]
    return value


def json_response(content: Any, status_code: int = 200):
    """
    A Starlette response with the content serialised once by ``json.dumps`` (no model validation
    or re-encoding of the, possibly large, output); non-finite floats become null.

    # Parameters

    content : `Any`
        The JSON-serialisable content.
    status_code : `int`, optional (default = `200`)
        The HTTP status.

    # Returns

    `starlette.responses.Response`
        An ``application/json`` response.
    """
    from starlette.responses import Response

    try:
        body = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:  # only when there is a NaN or an infinity somewhere: walk it once
        body = json.dumps(finite_json(content), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return Response(body.encode("utf-8"), status_code=status_code, media_type="application/json")
