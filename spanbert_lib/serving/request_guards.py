"""
Requests the server refuses before any route runs, answered as JSON ``{"error": message}``.

* **Host header** (DNS rebinding): a web page on another site can make a browser send requests to
  ``127.0.0.1`` under its own host name. A request whose ``Host`` is not one of the served names
  (``127.0.0.1``, ``localhost``, ``[::1]``, the address the server is bound to and any name given with
  ``--allowed-host``; with or without a port) gets 421; a missing or malformed ``Host`` gets 400.
* **Content type** (cross-site form posts): a ``POST`` whose ``Content-Type`` is not JSON
  (``application/json`` or ``application/*+json``) gets 415, so an HTML form on another site, which can
  only send ``application/x-www-form-urlencoded``, ``multipart/form-data`` or ``text/plain``, cannot run
  predictions.

:class:`RequestGuard` is a plain ASGI middleware (no per-request task or body buffering).
"""

import re
from typing import Dict, Iterable, Optional, Set, Tuple

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
_PORT = re.compile(r"^\d{1,5}$")
_JSON_MEDIA_TYPE = re.compile(r"^application/([a-z0-9.+-]+\+)?json$")


def normalize_host(name: str) -> str:
    """
    A host name as :class:`RequestGuard` compares it: lower case, no trailing dot, IPv6 literals in brackets.

    # Parameters

    name : `str`
        A host name or address (``::1`` or ``[::1]``).

    # Returns

    `str`
        The normalised name.
    """
    name = name.strip().lower().rstrip(".")
    if ":" in name and not name.startswith("["):
        name = f"[{name}]"
    return name


def host_of_header(value: str) -> Optional[str]:
    """
    The host name of a ``Host`` header (``name``, ``name:port``, ``[v6]``, ``[v6]:port``), normalised;
    None when it is malformed.

    # Parameters

    value : `str`
        The header's value.

    # Returns

    `Optional[str]`
        The host without its port.
    """
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[: end + 1], value[end + 1 :]
    else:
        host, colon, port = value.partition(":")
        rest = colon + port
    if rest and not (rest.startswith(":") and _PORT.match(rest[1:])):
        return None
    if not host or any(character in host for character in " /\\@?#"):
        return None
    return normalize_host(host)


def is_json_content_type(value: Optional[str]) -> bool:
    """Whether a ``Content-Type`` header names JSON (parameters such as ``charset`` allowed)."""
    if not value:
        return False
    return bool(_JSON_MEDIA_TYPE.match(value.split(";", 1)[0].strip().lower()))


class RequestGuard:
    """
    ASGI middleware refusing requests with an unknown ``Host`` or a non-JSON ``POST`` (module docstring).

    # Parameters

    app : `ASGIApp`
        The application it guards.
    allowed_hosts : `Iterable[str]`, optional (default = `LOOPBACK_HOSTS`)
        Host names requests may name, besides the loopback names (always allowed).
    """

    def __init__(self, app, allowed_hosts: Iterable[str] = LOOPBACK_HOSTS) -> None:
        self.app = app
        self.allowed_hosts: Set[str] = {normalize_host(host) for host in (*LOOPBACK_HOSTS, *allowed_hosts)}

    def refusal(self, method: str, headers: dict) -> Optional[Tuple[int, str]]:
        """
        ``(status, message)`` for a request to refuse, None for one to serve.

        # Parameters

        method : `str`
            The HTTP method.
        headers : `dict`
            Lower-case header names to their (latin-1 decoded) values.

        # Returns

        `Optional[Tuple[int, str]]`
            The refusal, if any.
        """
        header = headers.get("host")
        if header is None:
            return 400, "the request has no Host header"
        host = host_of_header(header)
        if host is None:
            return 400, f"malformed Host header {header!r}"
        if host not in self.allowed_hosts:
            served = ", ".join(sorted(self.allowed_hosts))
            return 421, (
                f"this server does not answer for the host {host!r} (it answers for {served}; "
                "start it with --allowed-host NAME to add a name)"
            )
        if method == "POST" and not is_json_content_type(headers.get("content-type")):
            given = headers.get("content-type") or "none"
            return 415, f"send the request body as JSON with 'Content-Type: application/json' (got {given!r})"
        return None

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: Dict[str, str] = {}
        for name, value in scope.get("headers", []):
            headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
        refused = self.refusal(scope.get("method", "GET"), headers)
        if refused is None:
            await self.app(scope, receive, send)
            return
        from starlette.responses import JSONResponse

        status, message = refused
        await JSONResponse({"error": message}, status_code=status)(scope, receive, send)
