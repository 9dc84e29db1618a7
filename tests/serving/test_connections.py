"""
What ``allennlp serve`` allows a connection (header timeout, keep-alive timeout, a cap on open connections, the
open-file limit, a quiet event loop), over real TCP against the installed ``allennlp`` command run as a
subprocess, and how it stops on SIGTERM.
"""

import contextlib
import logging
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator, List, NamedTuple, Optional

import pytest

from spanbert_lib.serving import connections
from spanbert_lib.serving.connections import RateLimitedLog, fit_open_file_limit, quiet_event_loop
from tests import REPO_ROOT
from tests.serving.conftest import free_port

ALLENNLP = Path(sys.executable).with_name("allennlp")
HEADER_TIMEOUT_S = 1.0
KEEP_ALIVE_TIMEOUT_S = 2.0
MAX_CONNECTIONS = 50
FLOOD = 2000
HEALTH_REQUEST = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


class Served(NamedTuple):
    process: subprocess.Popen
    port: int
    stdout: Path
    stderr: Path

    def log(self) -> str:
        return self.stdout.read_text() + self.stderr.read_text()


@contextlib.contextmanager
def serve_process(directory: Path, *options: str, open_files: Optional[int] = None) -> Iterator[Served]:
    """
    ``allennlp serve`` (the masking view alone) as a subprocess on a free port, its output in files;
    ``open_files``: its soft and hard limit on open files.
    """
    if not ALLENNLP.exists():
        pytest.skip(f"no allennlp command beside {sys.executable}")
    port = free_port()
    stdout, stderr = directory / "stdout.txt", directory / "stderr.txt"
    command = [str(ALLENNLP), "serve", "--masking-tokenizer", "fixtures/tiny_bert", "--port", str(port), *options]
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    # files, not pipes: a server blocked on a full pipe would look like a server the flood stopped
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        process = subprocess.Popen(
            command, cwd=REPO_ROOT, stdout=out, stderr=err, env=environment, preexec_fn=_limit_open_files(open_files)
        )
    served = Served(process, port, stdout, stderr)
    try:
        _wait_until_up(served)
        yield served
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=60)


def _limit_open_files(open_files: Optional[int]):
    if open_files is None:
        return None
    import resource

    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))


def _wait_until_up(served: Served) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if served.process.poll() is not None:
            raise RuntimeError(f"allennlp serve exited with {served.process.returncode}:\n{served.log()[-3000:]}")
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(f"http://127.0.0.1:{served.port}/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        time.sleep(0.2)
    raise RuntimeError("allennlp serve did not come up")


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Served]:
    options = [
        f"--max-connections={MAX_CONNECTIONS}",
        f"--header-timeout-s={HEADER_TIMEOUT_S}",
        f"--keep-alive-timeout-s={KEEP_ALIVE_TIMEOUT_S}",
    ]
    with serve_process(tmp_path_factory.mktemp("serve"), *options) as served:
        yield served


def closed_by_server(connection: socket.socket, within_s: float) -> bool:
    """Whether the server closes ``connection`` (end of stream or reset) within ``within_s`` seconds."""
    connection.settimeout(within_s)
    try:
        return connection.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def open_files_for(sockets: int) -> int:
    """Raises this process's soft limit on open files to fit ``sockets`` more; the sockets that fit."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = sockets + 256
    if soft != resource.RLIM_INFINITY and soft < wanted:
        soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return sockets if soft == resource.RLIM_INFINITY else min(sockets, soft - 256)


def health(port: int, timeout_s: float = 10) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=timeout_s) as answer:
        return answer.status


def connect_all(connections: List[socket.socket], port: int, count: int) -> None:
    """
    Opens ``count`` connections in parallel, appending them to ``connections`` (opened one after another, a
    handshake that a full listen queue drops would hold up the rest for a second or more).
    """
    with selectors.DefaultSelector() as pending:
        for _ in range(count):
            connection = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            connections.append(connection)
            connection.setblocking(False)
            connection.connect_ex(("127.0.0.1", port))
            pending.register(connection, selectors.EVENT_WRITE)
        deadline = time.monotonic() + 60
        while pending.get_map() and time.monotonic() < deadline:
            for key, _ in pending.select(timeout=1):
                pending.unregister(key.fileobj)
        assert not pending.get_map(), f"{len(pending.get_map())} connections not made"
    assert all(c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0 for c in connections)


def count_closed_by_server(connections: List[socket.socket], within_s: float, enough: Optional[int] = None) -> int:
    """
    How many of ``connections`` (non-blocking) the server closes within ``within_s`` seconds (stopping early once
    ``enough`` have been closed).
    """
    closed = 0
    deadline = time.monotonic() + within_s
    with selectors.DefaultSelector() as waiting:
        for connection in connections:
            waiting.register(connection, selectors.EVENT_READ)
        while waiting.get_map() and time.monotonic() < deadline and (enough is None or closed < enough):
            for key, _ in waiting.select(timeout=max(0.0, deadline - time.monotonic())):
                waiting.unregister(key.fileobj)
                try:
                    closed += key.fileobj.recv(1) == b""
                except ConnectionResetError:
                    closed += 1
    return closed


class Flood(NamedTuple):
    connections: int
    closed_by_server: int
    log: str
    """What the server logged meanwhile."""


def flood(served: Served, wait_s: float, enough: Optional[int] = None) -> Flood:
    """
    Opens :data:`FLOOD` idle connections, checks that ``/health`` answers while they are open, and waits up to
    ``wait_s`` seconds for the server to close them (or ``enough`` of them).
    """
    log_before = served.log()
    idle: List[socket.socket] = []
    try:
        connect_all(idle, served.port, open_files_for(FLOOD))
        assert health(served.port) == 200  # while every one of them is still open on this side
        closed = count_closed_by_server(idle, wait_s, enough)
    finally:
        for connection in idle:
            connection.close()
    assert health(served.port) == 200
    added = served.log()[len(log_before) :]
    assert "Traceback" not in added and "out of system resource" not in added and "Errno" not in added
    return Flood(len(idle), closed, added)


def test_a_flood_of_idle_connections_neither_stops_health_nor_floods_the_log(server):
    # over the cap the longest idle connections are closed at once; the rest after the header timeout
    flooded = flood(server, HEADER_TIMEOUT_S + 30)
    assert flooded.closed_by_server == flooded.connections
    # the health answers, and at most a few rate-limited warnings about the cap
    assert len(flooded.log.splitlines()) <= 10 and len(flooded.log) <= 2000, flooded.log


def test_the_connections_fit_a_low_limit_on_open_files(tmp_path):
    """
    The default cap of 1000 connections under ``ulimit -n 400``: lowered to fit; more connections than the
    process may open files come and go, in waves, without accept errors.
    """
    # together more than the 400 files the server may open; a wave fits the listen queue the server lowers with
    # the limit (a handshake the kernel drops from a full queue never reaches the server, which cannot close it)
    waves, per_wave = 15, 30
    with serve_process(tmp_path, "--header-timeout-s=1", open_files=400) as served:
        assert "--max-connections 1000 lowered to" in served.stderr.read_text()
        before = {path: len(path.read_text()) for path in (served.stdout, served.stderr)}
        closed = 0
        for _ in range(waves):
            idle: List[socket.socket] = []
            try:
                connect_all(idle, served.port, per_wave)
                closed += count_closed_by_server(idle, 30)
            finally:
                for connection in idle:
                    connection.close()
            assert health(served.port) == 200
        added = "".join(path.read_text()[offset:] for path, offset in before.items())
    assert closed == waves * per_wave
    assert "Traceback" not in added and "out of system resource" not in added and "Errno" not in added
    logged = [line for line in added.splitlines() if '"GET /health' not in line]
    assert len(logged) <= 10 and len("".join(logged)) <= 2000, added


def test_a_request_head_sent_too_slowly_is_closed(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        for byte in HEALTH_REQUEST[:-2]:  # one byte every 0.2 s: ~8 s of a head that is never complete
            with contextlib.suppress(OSError):
                connection.sendall(bytes([byte]))
            if closed_by_server(connection, 0.2):
                break
        else:
            pytest.fail("the server kept a connection open that trickled its request head")


def read_response(connection: socket.socket) -> bytes:
    """One HTTP response (headers with Content-Length) read off a kept-alive connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    lengths = [line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    length = int(lengths[0])
    while len(body) < length:
        body += connection.recv(65536)
    return head.split(b"\r\n")[0]


def test_a_kept_alive_connection_serves_requests_then_closes_when_idle(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        for _ in range(3):
            connection.sendall(HEALTH_REQUEST)
            assert read_response(connection) == b"HTTP/1.1 200 OK"
        assert closed_by_server(connection, KEEP_ALIVE_TIMEOUT_S + 20)
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        connection.sendall(HEALTH_REQUEST)
        assert read_response(connection) == b"HTTP/1.1 200 OK"
        connection.sendall(HEALTH_REQUEST[:10])  # the next request's head begins and stalls
        assert closed_by_server(connection, HEADER_TIMEOUT_S + 20)


def test_a_connection_idle_after_a_body_answered_early_is_closed(server):
    """A body over the size limit is answered 413 before it is all sent; the connection idles after the rest."""
    size = 500_000  # over the 4 bytes per character of the default 100000 characters
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        connection.sendall(
            b"POST /mask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % size
        )
        assert read_response(connection) == b"HTTP/1.1 413 Request Entity Too Large"
        connection.sendall(b" " * size)
        assert closed_by_server(connection, HEADER_TIMEOUT_S + 20)


def test_sigterm_stops_the_server_cleanly(tmp_path):
    with serve_process(tmp_path) as served:
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=60) == 0
    err = served.stderr.read_text()
    assert "Traceback" not in err and "SigTermReceived" not in err
    assert "Finished server process" in err


def test_rate_limited_log_counts_what_it_left_out():
    now = [0.0]
    log = RateLimitedLog(interval_s=10, clock=lambda: now[0])
    assert log.admit("accept failed") == "accept failed"
    assert [log.admit("accept failed") for _ in range(1000)] == [None] * 1000
    assert log.admit("another message") == "another message"
    now[0] = 10.0
    assert log.admit("accept failed") == "accept failed (1000 more since it was last logged)"
    assert log.admit("accept failed") is None
    for number in range(2000):  # messages that differ, such as ones naming a connection
        log.admit(f"connection {number} failed")
    now[0] = 30.0
    log.admit("one more")
    assert len(log._last_logged) <= 1001  # what was logged long ago is forgotten


def test_the_event_loop_logs_a_repeated_error_once(caplog):
    loop = quiet_event_loop()
    try:
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            for _ in range(500):
                loop.call_exception_handler(
                    {"message": "socket.accept() out of system resource", "exception": OSError(24, "Too many")}
                )
    finally:
        loop.close()
    assert [r.getMessage() for r in caplog.records] == ["socket.accept() out of system resource"]


class FakeLimits:
    """``resource`` stand-in: a soft and a hard limit on open files."""

    RLIMIT_NOFILE = 7
    RLIM_INFINITY = -1

    def __init__(self, soft: int, hard: int) -> None:
        self.limits = (soft, hard)

    def getrlimit(self, _):
        return self.limits

    def setrlimit(self, _, limits):
        soft, hard = limits
        if hard != self.RLIM_INFINITY and soft > hard:
            raise ValueError("not allowed to raise the soft limit above the hard one")
        self.limits = limits


@pytest.mark.parametrize(
    "soft, hard, raised_to, lowered",
    [
        (1024, 1_048_576, "wanted", False),  # raised as far as needed
        (1024, FakeLimits.RLIM_INFINITY, "wanted", False),
        (100_000, 100_000, 100_000, False),  # already enough: left alone
        (1024, 4096, 4096, True),  # the hard limit is too low: the connections and the backlog fit under it
        (1024, 1024, 1024, True),
        (300, 300, 300, True),
    ],
)
def test_the_open_file_limit_fits_the_connections(monkeypatch, soft, hard, raised_to, lowered):
    fake = FakeLimits(soft, hard)
    monkeypatch.setitem(sys.modules, "resource", fake)
    budget = fit_open_file_limit(1000)
    wanted = 1000 + connections.ACCEPT_BURSTS * connections.DEFAULT_BACKLOG + connections.RESERVED_FILES
    assert fake.limits == (wanted if raised_to == "wanted" else raised_to, hard)
    assert budget.open_files == fake.limits[0]
    assert (budget.max_connections < 1000 or budget.backlog < connections.DEFAULT_BACKLOG) == lowered
    used = budget.max_connections + connections.ACCEPT_BURSTS * budget.backlog + connections.RESERVED_FILES
    assert used <= budget.open_files and budget.max_connections >= 1 and budget.backlog >= 1


def test_connection_limits_are_checked():
    with pytest.raises(ValueError, match="must be positive"):
        connections.ConnectionLimits(0, 1.0)
    with pytest.raises(ValueError, match="must be positive"):
        connections.ConnectionLimits(10, float("nan"))


def test_serve_passes_the_limits_to_uvicorn(monkeypatch, logger_levels):
    import argparse

    import uvicorn
    from allennlp.commands.subcommand import Subcommand
    from uvicorn.importer import import_from_string
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from spanbert_lib.commands import serve

    subparser = Subcommand.by_name("serve")().add_subparser(argparse.ArgumentParser().add_subparsers())
    defaults = subparser.parse_args([])
    assert (defaults.max_connections, defaults.header_timeout_s, defaults.keep_alive_timeout_s) == (1000, 10.0, 5.0)
    for option in ("--header-timeout-s=0", "--keep-alive-timeout-s=-1", "--header-timeout-s=inf"):
        with pytest.raises(SystemExit):
            subparser.parse_args([option])
    args = subparser.parse_args(
        ["--masking-tokenizer", "fixtures/tiny_bert", "--max-connections=7", "--header-timeout-s=2.5"]
    )
    started = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: started.update(kwargs))
    monkeypatch.setattr(serve, "build_app", lambda args: None)
    serve._serve_from_args(args)
    assert issubclass(started["http"], H11Protocol) and started["timeout_keep_alive"] == 5.0
    limits = started["http"].connection_limits
    assert (limits.max_connections, limits.header_timeout_s) == (7, 2.5)
    assert import_from_string(started["loop"]) is quiet_event_loop
