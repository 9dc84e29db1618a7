"""
Fixtures of the serving tests: the tiny archives (trained once per test run), a live server, and the library's
logger levels put back after ``allennlp serve`` changed them.
"""

import contextlib
import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import Dict

import pytest
from filelock import FileLock

from tests.serving.tiny_archives import build_tiny_archives


@pytest.fixture(scope="session")
def tiny_archives(tmp_path_factory) -> Dict[str, Path]:
    """
    ``{name: serialization directory}`` of every tiny model. Built once per test run: pytest-xdist
    workers share the directory (the first one trains under a file lock, the others wait and reuse).
    """
    base = tmp_path_factory.getbasetemp()
    # under xdist each worker's base directory is a child of this run's; without xdist it is this run's
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "serving_tiny_archives"
    shared.mkdir(exist_ok=True)
    done = shared / "done"
    with FileLock(str(shared / "lock")):
        if not done.exists():
            build_tiny_archives(shared)
            done.write_text("ok")
    return {name: shared / name for name in ("coref", "qa", "qa_abstains", "ner", "relation", "semeval", "typing")}


@pytest.fixture
def logger_levels():
    """``_serve_from_args`` quietens library loggers for the server's log; put them back afterwards."""
    names = ("allennlp", "transformers", "spanbert_lib", "spanbert_lib.serving")
    levels = {name: logging.getLogger(name).level for name in names}
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def running_server(app, port: int):
    """Serves ``app`` with uvicorn on 127.0.0.1:``port`` in a thread for the duration of the block."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
