"""
``allennlp serve`` at start-up: bad ``--model`` specs, archives and options are refused before the port is bound;
bound to every interface (any spelling of the any-address) it warns.
"""

import json
from typing import Optional

from tests import TINY_BERT_DIR
from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.grading import Case, all_of, says

book = CaseBook()


def without_binding() -> None:
    """In the command's process: uvicorn returns at once instead of serving (the start-up path runs whole)."""
    import uvicorn

    uvicorn.run = lambda *args, **kwargs: None


@book.case("serve_model_path_missing")
def _(d):
    return Case(["serve", "--model", f"qa={d / 'typo_run'}"], names=("typo_run",), child_setup=without_binding)


@book.case("serve_model_truncated_archive")
def _(d):
    truncated = d.damaged.truncated
    return Case(
        ["serve", "--model", f"qa={truncated}"],
        names=(str(truncated),),
        watch=(d.damaged.folder,),
        child_setup=without_binding,
    )


@book.case("serve_model_spec_malformed")
def _(d):
    return Case(["serve", "--model", "a b=model.tar.gz"], names=("--model",), child_setup=without_binding)


@book.case("serve_masker_bad_json")
def _(d):
    return Case(["serve", "--masker", "{bad"], names=("--masker",), child_setup=without_binding)


@book.case("serve_overrides_setting_the_model_does_not_take")
def _(d):
    typo = json.dumps({"model.pair_product_dtpye": "bfloat16"})
    return Case(
        ["serve", "--model", f"coref={d.archives.coref}", "-o", f"coref={typo}"],
        names=("--overrides coref",),
        child_setup=without_binding,
    )


@book.case("serve_overrides_not_json")
def _(d):
    return Case(
        ["serve", "--model", f"coref={d.archives.coref}", "-o", "coref={bad"],
        names=("--overrides coref",),
        child_setup=without_binding,
    )


for option, value in (("--port", "70000"), ("--max-request-chars", "0"), ("--max-concurrent-predictions", "x")):

    def bad_option(d, option=option, value=value):
        return Case(["serve", option, value], names=(option,), child_setup=without_binding)

    book.add(f"serve{option.replace('-', '_')}_{value}", bad_option)

ANY_ADDRESS = {"0": "0", "0.0": "0.0", "ipv6_any": "::", "0x0": "0x0"}
for label, host in ANY_ADDRESS.items():

    def every_interface(d, host=host):
        return Case(
            ["serve", "--host", host, "--port", "8000", "--masking-tokenizer", str(TINY_BERT_DIR)],
            expect="succeed",
            check=all_of(
                says(f"warning: --host {host} serves every network interface"), says("http://127.0.0.1:8000/")
            ),
            child_setup=without_binding,
        )

    book.add(f"serve_host_{label}_warns_of_every_interface", every_interface)


FLOOD = 2000


def flood_then_sigterm(port: int) -> None:
    """
    In the command's process, beside the server: once it listens, opens :data:`FLOOD` idle connections, asks
    ``/health`` while they are open, waits for the server to close them, then sends the process SIGTERM (as docker
    and systemd stop a server). What it saw goes to stderr as ``flood: ...`` lines.
    """
    import os
    import selectors
    import signal
    import socket
    import sys
    import threading
    import time
    import urllib.request

    def health() -> str:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as answer:
                return str(answer.status)
        except OSError as error:
            return f"failed: {error}"

    def run() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and health() != "200":
            time.sleep(0.2)
        idle = []
        for _ in range(FLOOD):
            connection = socket.socket()
            connection.setblocking(False)
            connection.connect_ex(("127.0.0.1", port))
            idle.append(connection)
        time.sleep(1)
        print(f"flood: health while {FLOOD} connections wait: {health()}", file=sys.stderr, flush=True)
        closed, until = 0, time.monotonic() + 30
        with selectors.DefaultSelector() as waiting:
            for connection in idle:
                waiting.register(connection, selectors.EVENT_READ)
            while waiting.get_map() and time.monotonic() < until and closed < FLOOD // 2:
                for key, _ in waiting.select(timeout=1):
                    waiting.unregister(key.fileobj)
                    closed += 1
        print(f"flood: closed by the server: at least {closed >= FLOOD // 2}", file=sys.stderr, flush=True)
        for connection in idle:
            connection.close()
        os.kill(os.getpid(), signal.SIGTERM)

    from allennlp.common.util import install_sigterm_handler

    install_sigterm_handler()  # as the allennlp executable's entry point does before running the command
    threading.Thread(target=run, daemon=True).start()


def _flood_outcome(outcome) -> Optional[str]:
    text = outcome.stdout + outcome.stderr
    if f"flood: health while {FLOOD} connections wait: 200" not in text:
        return "/health did not answer while idle connections filled the server"
    if "flood: closed by the server: at least True" not in text:
        return "the server did not close the idle connections"
    if "Traceback" in text or "out of system resource" in text:
        return "a traceback or accept errors in the log"
    logged = [line for line in text.splitlines() if '"GET /health' not in line and not line.startswith("flood: ")]
    if len(logged) > 40:
        return f"the log grew by {len(logged)} lines"
    return None


@book.case("serve_idle_connection_flood_then_sigterm")
def _(d):
    from tests.serving.conftest import free_port

    port = free_port()
    return Case(
        [
            "serve",
            "--port",
            str(port),
            "--max-connections",
            "50",
            "--header-timeout-s",
            "1",
            "--masking-tokenizer",
            str(TINY_BERT_DIR),
        ],
        expect="succeed",
        check=_flood_outcome,
        timeout=180,
        child_setup=lambda: flood_then_sigterm(port),
    )
