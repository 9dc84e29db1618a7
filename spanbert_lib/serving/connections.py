"""
What ``allennlp serve`` allows a connection, so that a flood of idle connections neither stops the
server from answering nor floods its log.

* **Header timeout**: a connection that has not sent a complete request head within
  ``header_timeout_s`` of opening (or, on a kept-alive connection, of the first byte of its next
  request) is closed. uvicorn's own keep-alive timeout closes a connection that sends nothing at all
  after a response.
* **Cap on open connections**: over ``max_connections``, a new connection closes the connection that
  has waited longest for its next request head, or, when every connection is busy with a request, is
  closed itself. A client that sends its request at once (``/health``, the page) is therefore served
  even while idle connections fill the server.
* **Open files**: the process's soft limit on open files is raised so that the connections, the
  connections asyncio accepts in bursts of up to the listen backlog, and the files of the models fit
  under it (the cap and the backlog are lowered where the hard limit is too low). A process that runs
  out of file descriptors has asyncio log an accept error with its traceback for every connection it
  tries to accept: the loop's error messages are logged at most once per :data:`LOG_INTERVAL_S` per
  message.

uvicorn is imported when a protocol class is made, not with this module (``--include-package
spanbert_lib`` imports every module of the library on every ``allennlp`` command).
"""

import asyncio
import contextlib
import logging
import time
from typing import Any, Callable, Dict, NamedTuple, Optional

logger = logging.getLogger(__name__)

DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_KEEP_ALIVE_TIMEOUT_S = 5.0
DEFAULT_MAX_CONNECTIONS = 1000
DEFAULT_BACKLOG = 2048
LOG_INTERVAL_S = 10.0
_MAX_MESSAGES_REMEMBERED = 1000
RESERVED_FILES = 128
"""Open files kept for everything but connections: models, tokenizers, the log, pipes."""
ACCEPT_BURSTS = 4
"""Bursts of accepted connections that may hold a file at once: a connection is accepted on one turn of the
loop, gets its protocol on a later one, and a refused one frees its socket on the turn after that."""


class RateLimitedLog:
    """
    Decides which messages to log when the same one may come thousands of times a second.

    # Parameters

    interval_s : `float`, optional (default = `LOG_INTERVAL_S`)
        Each message is logged at most once per this many seconds.
    clock : `Callable[[], float]`, optional (default = `time.monotonic`)
        The clock, in seconds.
    """

    def __init__(self, interval_s: float = LOG_INTERVAL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = interval_s
        self._clock = clock
        self._last_logged: Dict[str, float] = {}
        self._left_out: Dict[str, int] = {}

    def admit(self, message: str) -> Optional[str]:
        """
        Whether to log a message now.

        # Parameters

        message : `str`
            The message (messages are counted by their text).

        # Returns

        `Optional[str]`
            None to leave it out; else the message to log, with how many times it was left out since it
            was last logged.
        """
        now = self._clock()
        if len(self._last_logged) > _MAX_MESSAGES_REMEMBERED:
            self._forget_before(now - self.interval_s)
        last = self._last_logged.get(message)
        if last is not None and now - last < self.interval_s:
            self._left_out[message] = self._left_out.get(message, 0) + 1
            return None
        self._last_logged[message] = now
        left_out = self._left_out.pop(message, 0)
        return f"{message} ({left_out} more since it was last logged)" if left_out else message

    def _forget_before(self, time_s: float) -> None:
        for message in [m for m, logged in self._last_logged.items() if logged < time_s]:
            del self._last_logged[message]
            self._left_out.pop(message, None)

    def warning(self, log: logging.Logger, message: str) -> None:
        """Logs ``message`` as a warning on ``log`` unless it was logged less than ``interval_s`` ago."""
        admitted = self.admit(message)
        if admitted is not None:
            log.warning(admitted)


class ConnectionLimits:
    """
    The limits of one server's connections and the connections it may close to make room.

    # Parameters

    max_connections : `int`
        Connections open at once.
    header_timeout_s : `float`
        Seconds a connection has to send a complete request head.
    """

    def __init__(self, max_connections: int, header_timeout_s: float) -> None:
        if max_connections < 1 or not header_timeout_s > 0:
            raise ValueError("max_connections and header_timeout_s must be positive")
        self.max_connections = max_connections
        self.header_timeout_s = header_timeout_s
        # connections waiting for a request head, longest waiting first (a dict keeps insertion order)
        self.waiting: Dict[Any, None] = {}
        self._log = RateLimitedLog()

    def admit(self, open_connections: int) -> bool:
        """
        Whether a new connection may stay open; over the cap, closes the connection that has waited
        longest for a request head to make room.

        # Parameters

        open_connections : `int`
            Connections open, the new one included.

        # Returns

        `bool`
            False when the new connection is to be closed: over the cap with no idle connection to close.
        """
        if open_connections <= self.max_connections:
            return True
        if self.waiting:
            next(iter(self.waiting)).close_idle()
            self._log.warning(logger, f"over {self.max_connections} connections: closing the longest idle ones")
            return True
        self._log.warning(logger, f"{self.max_connections} connections busy with requests: refusing new ones")
        return False


def limited_h11_protocol(limits: ConnectionLimits) -> type:
    """
    uvicorn's h11 protocol with a header timeout and a cap on open connections.

    # Parameters

    limits : `ConnectionLimits`
        The limits, shared by all connections of one server.

    # Returns

    `type`
        A subclass of ``uvicorn.protocols.http.h11_impl.H11Protocol`` (uvicorn's ``http`` setting), with
        ``limits`` as its ``connection_limits``.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class LimitedH11Protocol(H11Protocol):
        connection_limits = limits
        _head_timer: Optional[asyncio.TimerHandle] = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            if not self.connection_limits.admit(len(self.connections)):
                transport.close()
                return
            self.connection_limits.waiting[self] = None
            self._start_head_timer()

        def data_received(self, data: bytes) -> None:
            if self._head_timer is None and self.conn.their_state is h11.IDLE:
                self._start_head_timer()  # the first bytes of a kept-alive connection's next request
            super().data_received(data)

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE:  # a request head is complete (or the connection failed)
                self._stop_waiting()
            elif not self.transport.is_closing():  # between requests
                self.connection_limits.waiting.setdefault(self, None)
                if self._head_timer is None and self.timeout_keep_alive_task is None:
                    # the rest of a body came after its early answer (a 413) and stopped uvicorn's keep-alive timer
                    self._start_head_timer()

        def connection_lost(self, exc: Optional[Exception]) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

        def close_idle(self) -> None:
            """Closes a connection that is waiting for a request head."""
            self._stop_waiting()
            if not self.transport.is_closing():
                self.transport.close()

        def _start_head_timer(self) -> None:
            self._head_timer = self.loop.call_later(self.connection_limits.header_timeout_s, self.close_idle)

        def _stop_waiting(self) -> None:
            self.connection_limits.waiting.pop(self, None)
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

    return LimitedH11Protocol


class FileBudget(NamedTuple):
    """What fits under the process's limit on open files (:func:`fit_open_file_limit`)."""

    max_connections: int
    backlog: int
    open_files: Optional[int]
    """The soft limit on open files; None when there is none."""


def fit_open_file_limit(max_connections: int, backlog: int = DEFAULT_BACKLOG) -> FileBudget:
    """
    Raises the soft limit on open files (``RLIMIT_NOFILE``) toward the hard limit so that
    ``max_connections`` connections, :data:`ACCEPT_BURSTS` bursts of ``backlog`` accepted connections and
    :data:`RESERVED_FILES` other files fit under it; where they cannot, the connections and the backlog
    are lowered to what fits.

    # Parameters

    max_connections : `int`
        The connections wanted open at once.
    backlog : `int`, optional (default = `DEFAULT_BACKLOG`)
        The listen backlog wanted (asyncio also accepts up to this many connections per turn of its loop).

    # Returns

    `FileBudget`
        The connections and backlog that fit, and the soft limit.
    """
    try:
        import resource
    except ImportError:  # Windows: no such limit to raise
        return FileBudget(max_connections, backlog, None)
    wanted = max_connections + ACCEPT_BURSTS * backlog + RESERVED_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return FileBudget(max_connections, backlog, None if soft == resource.RLIM_INFINITY else soft)
    spare = max(soft - RESERVED_FILES, 2 * ACCEPT_BURSTS)
    backlog = max(1, min(backlog, spare // (2 * ACCEPT_BURSTS)))
    return FileBudget(max(1, min(max_connections, spare - ACCEPT_BURSTS * backlog)), backlog, soft)


def quiet_event_loop() -> asyncio.AbstractEventLoop:
    """
    A new asyncio event loop whose error messages (such as accept errors) are logged at most once per
    :data:`LOG_INTERVAL_S` per message (uvicorn's ``loop`` setting, as the import string
    :data:`QUIET_EVENT_LOOP`).

    # Returns

    `asyncio.AbstractEventLoop`
        The loop.
    """
    loop = asyncio.new_event_loop()
    log = RateLimitedLog()

    def handle_error(loop: asyncio.AbstractEventLoop, context: Dict[str, Any]) -> None:
        message = log.admit(str(context.get("message", "unhandled exception in the event loop")))
        if message is not None:
            loop.default_exception_handler({**context, "message": message})

    loop.set_exception_handler(handle_error)
    return loop


QUIET_EVENT_LOOP = f"{__name__}:{quiet_event_loop.__name__}"


def uvicorn_settings(budget: FileBudget, header_timeout_s: float, keep_alive_timeout_s: float) -> Dict[str, Any]:
    """
    The keyword arguments of ``uvicorn.run`` (or ``uvicorn.Config``) that apply these limits.

    # Parameters

    budget : `FileBudget`
        The connections and backlog (:func:`fit_open_file_limit`).
    header_timeout_s : `float`
        Seconds a connection has to send a complete request head.
    keep_alive_timeout_s : `float`
        Seconds a connection may stay open without sending a byte after a response.

    # Returns

    `Dict[str, Any]`
        ``http``, ``backlog``, ``timeout_keep_alive`` and ``loop``.
    """
    return {
        "http": limited_h11_protocol(ConnectionLimits(budget.max_connections, header_timeout_s)),
        "backlog": budget.backlog,
        "timeout_keep_alive": keep_alive_timeout_s,
        "loop": QUIET_EVENT_LOOP,
    }
