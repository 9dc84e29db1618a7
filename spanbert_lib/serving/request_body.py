"""Reading a JSON request body under a size limit, with errors the API answers as JSON."""

import json
from typing import Any

from spanbert_lib.common.json_kinds import json_kind, lone_surrogate


class ApiError(Exception):
    """
    An error answered as ``{"error": message}`` with an HTTP status.

    # Parameters

    status_code : `int`
        The HTTP status.
    message : `str`
        The message.
    """

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message


_MAX_UTF8_BYTES_PER_CHAR = 4
# no predictor input nests deeper than a few levels; deeper bodies are refused before anything walks them
MAX_JSON_DEPTH = 32


async def read_json_body(request, max_chars: int) -> Any:
    """
    The parsed JSON body of a request.

    # Parameters

    request : `starlette.requests.Request`
        The request.
    max_chars : `int`
        Characters the body may hold.

    # Returns

    `Any`
        The parsed JSON. :class:`ApiError` 413 when the body holds more than ``max_chars``
        characters (refused from ``Content-Length`` or while streaming, before it is all read,
        when even pure 4-byte characters could not fit); 400 when it is empty, not UTF-8, not
        JSON, nests arrays and objects deeper than :data:`MAX_JSON_DEPTH` levels, or holds a string
        (a key or a value) with a lone surrogate escape (``"\\ud800"``), which is not text.
    """
    max_bytes = _MAX_UTF8_BYTES_PER_CHAR * max_chars
    too_large = ApiError(413, f"the request body is larger than the limit of {max_chars} characters")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise too_large
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise too_large
        chunks.append(chunk)
    try:
        text = b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as error:
        raise ApiError(400, f"the request body is not UTF-8: {error}") from error
    if len(text) > max_chars:
        raise too_large
    if not text.strip():
        raise ApiError(400, "the request body is empty; send a JSON object")
    try:
        body = json.loads(text)
    except ValueError as error:
        raise ApiError(400, f"the request body is not valid JSON: {error}") from error
    except RecursionError:
        body = None
        depth = MAX_JSON_DEPTH + 1
    else:
        depth = json_depth(body, MAX_JSON_DEPTH + 1)
    if depth > MAX_JSON_DEPTH:
        raise ApiError(400, f"the request body nests arrays and objects deeper than {MAX_JSON_DEPTH} levels")
    surrogate = lone_surrogate(body)
    if surrogate is not None:
        where, code_point = surrogate
        raise ApiError(
            400,
            f"the request body is not valid Unicode text: {where or 'the body'!r} holds the lone surrogate "
            f"\\u{ord(code_point):04x} (a character above U+FFFF is escaped as a pair)",
        )
    return body


def json_depth(value: Any, stop_at: int) -> int:
    """
    How deeply arrays and objects nest in a parsed JSON value (a scalar: 0), counted without recursion.

    # Parameters

    value : `Any`
        The parsed JSON.
    stop_at : `int`
        Stop counting once this depth is reached (it is returned).

    # Returns

    `int`
        The depth, at most ``stop_at``.
    """
    deepest = 0
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if deepest >= stop_at:
                return stop_at
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def require_object(body: Any) -> dict:
    """
    Checks that a request body is a JSON object.

    # Parameters

    body : `Any`
        The parsed body.

    # Returns

    `dict`
        ``body`` itself; :class:`ApiError` 400 if it is not an object.
    """
    if not isinstance(body, dict):
        raise ApiError(400, f"the request body must be a JSON object, got {json_kind(body)}")
    return body
