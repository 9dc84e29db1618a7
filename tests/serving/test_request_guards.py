"""
What the server refuses before any route runs, over real HTTP (uvicorn on a free port): requests naming
another host (DNS rebinding), POSTs that are not JSON (cross-site forms), JSON nested too deep; and what
``allennlp serve`` refuses or warns about when it starts.
"""

import argparse
import http.client
import json
import socket

import pytest

from spanbert_lib.serving.app import create_app
from spanbert_lib.serving.masking_preview import MaskingPreview
from spanbert_lib.serving.request_body import MAX_JSON_DEPTH
from spanbert_lib.serving.request_guards import host_of_header, is_json_content_type
from tests.serving.conftest import free_port, running_server

MASK_BODY = json.dumps({"text": "Anna told Ben that she would call him.", "seed": 1})


@pytest.fixture(scope="module")
def server():
    port = free_port()
    app = create_app([], MaskingPreview(tokenizer="fixtures/tiny_bert"), allowed_hosts=["demo.internal"])
    with running_server(app, port):
        yield port


def request(port: int, method: str, path: str, body=None, headers=None):
    """``(status, parsed JSON body)``; ``headers`` may set Host (http.client's own is then left out)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = dict(headers or {})
    connection.putrequest(method, path, skip_host="Host" in headers, skip_accept_encoding=True)
    data = body.encode("utf-8") if isinstance(body, str) else body
    if data is not None:
        headers.setdefault("Content-Length", str(len(data)))
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders(data)
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    assert response.getheader("content-type", "").startswith("application/json"), payload[:200]
    return response.status, json.loads(payload)


@pytest.mark.parametrize(
    "host, status",
    [
        ("127.0.0.1", 200),
        ("127.0.0.1:{port}", 200),
        ("localhost:{port}", 200),
        ("LOCALHOST.", 200),
        ("[::1]:{port}", 200),
        ("demo.internal:{port}", 200),  # allowed_hosts
        ("evil.example", 421),
        ("evil.example:{port}", 421),
        ("127.0.0.1.evil.example", 421),
        ("localhost@evil.example", 400),
        ("127.0.0.1:notaport", 400),
        ("[::1", 400),
    ],
)
def test_the_host_header_must_name_this_server(server, host, status):
    code, body = request(server, "GET", "/health", headers={"Host": host.format(port=server)})
    assert code == status
    assert ("error" in body) == (status != 200)
    if status == 421:
        assert "does not answer for the host" in body["error"]


def test_a_request_without_host_is_400(server):
    # HTTP/1.0 allows leaving Host out (HTTP/1.1 servers refuse that themselves)
    with socket.create_connection(("127.0.0.1", server), timeout=30) as connection:
        connection.sendall(b"GET /health HTTP/1.0\r\n\r\n")
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, payload = answer.partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == b"400"
    assert json.loads(payload) == {"error": "the request has no Host header"}


def test_a_rebound_host_cannot_run_predictions(server):
    code, body = request(
        server, "POST", "/mask", MASK_BODY, {"Host": "attacker.example", "Content-Type": "application/json"}
    )
    assert code == 421


@pytest.mark.parametrize(
    "content_type, status",
    [
        ("application/json", 200),
        ("application/json; charset=utf-8", 200),
        ("Application/JSON", 200),
        ("application/vnd.demo+json", 200),
        ("application/x-www-form-urlencoded", 415),  # what an HTML form on another site sends
        ("multipart/form-data; boundary=x", 415),
        ("text/plain", 415),
        (None, 415),
    ],
)
def test_posts_must_be_declared_json(server, content_type, status):
    headers = {} if content_type is None else {"Content-Type": content_type}
    code, body = request(server, "POST", "/mask", MASK_BODY, headers)
    assert code == status
    if status == 415:
        assert "Content-Type: application/json" in body["error"]
    else:
        assert body["spans"]


@pytest.mark.parametrize(
    "body",
    [
        "[" * 50_000 + "]" * 50_000,  # deeper than Python's JSON parser recurses
        '{"text": ' + "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1) + "}",
    ],
)
def test_json_nested_too_deep_is_400(server, body):
    code, answer = request(server, "POST", "/mask", body, {"Content-Type": "application/json"})
    assert code == 400
    assert f"deeper than {MAX_JSON_DEPTH} levels" in answer["error"]


def test_nesting_within_the_limit_reaches_the_route(server):
    nested = '{"text": "a", "extra": ' + "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1) + "}"
    code, _ = request(server, "POST", "/mask", nested, {"Content-Type": "application/json"})
    assert code == 200


def test_header_parsing():
    assert host_of_header("Example.COM:8000") == "example.com"
    assert host_of_header("[::1]:8000") == "[::1]"
    assert host_of_header("") is None and host_of_header("a b") is None
    assert is_json_content_type("application/problem+json") and not is_json_content_type("text/json-ish")


def _serve_args(extra):
    from allennlp.commands.subcommand import Subcommand

    subparser = Subcommand.by_name("serve")().add_subparser(argparse.ArgumentParser().add_subparsers())
    return subparser.parse_args(["--masking-tokenizer", "fixtures/tiny_bert", *extra])


def test_binding_every_interface_warns_and_prints_the_real_address(monkeypatch, capsys, logger_levels):
    import uvicorn

    from spanbert_lib.commands import serve

    started = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: started.update(app=app, **kwargs))
    serve._serve_from_args(_serve_args(["--host", "0.0.0.0", "--port", "8123"]))
    output = capsys.readouterr()
    assert output.err.startswith("warning: --host 0.0.0.0 serves every network interface")
    address = serve._outward_address()
    assert f"http://{address}:8123/" in output.out and "0.0.0.0" not in output.out
    assert started["host"] == "0.0.0.0"
    names = serve.served_host_names("0.0.0.0")
    assert socket.gethostname() in names and address in names and "0.0.0.0" not in names


def test_loopback_binding_prints_its_address(monkeypatch, capsys, logger_levels):
    import uvicorn

    from spanbert_lib.commands import serve

    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: None)
    serve._serve_from_args(_serve_args(["--port", "8124"]))
    output = capsys.readouterr()
    assert output.out.strip().endswith("http://127.0.0.1:8124/") and "warning" not in output.err


@pytest.mark.parametrize(
    "options, message",
    [
        (["--port", "70000"], "expected a port number from 0 to 65535"),
        (["--max-request-chars", "0"], "expected a positive integer"),
        (["--max-concurrent-predictions", "-1"], "expected a positive integer"),
    ],
)
def test_bad_numeric_options_are_refused(options, message, capsys):
    with pytest.raises(SystemExit) as exit_status:
        _serve_args(options)
    assert exit_status.value.code == 2
    assert message in capsys.readouterr().err


ANY_ADDRESS = ["0", "0.0", "0x0", "000.000.000.000", "0.0.0.0", "", "::", "[::]", "0:0:0:0:0:0:0:0", "::0", "[0:0::0]"]
LOOPBACK = ["127.0.0.1", "127.1", "2130706433", "localhost", "::1", "[::1]", "0:0:0:0:0:0:0:1"]


@pytest.mark.parametrize("host", ANY_ADDRESS)
def test_every_spelling_of_the_any_address_warns(host, capsys):
    from spanbert_lib.commands import serve

    serve._announce(host, 8000, serve.bound_addresses(host))
    output = capsys.readouterr()
    assert output.err.startswith(f"warning: --host {host} serves every network interface")
    assert f"http://{serve._outward_address()}:8000/" in output.out
    names = serve.served_host_names(host)
    assert socket.gethostname() in names and host not in names


@pytest.mark.parametrize("host", LOOPBACK)
def test_loopback_spellings_do_not_warn(host, capsys):
    from spanbert_lib.commands import serve

    serve._announce(host, 8000, serve.bound_addresses(host))
    output = capsys.readouterr()
    assert output.err == "" and output.out.startswith("spanbert_lib demo: http://")
    assert serve.served_host_names(host, ["demo.internal"]) == [host, "demo.internal"]


@pytest.mark.parametrize(
    "host, shown", [("10.1.2.3", "10.1.2.3"), ("017.0.0.1", "15.0.0.1"), ("2001:db8::1", "2001:db8::1")]
)
def test_an_address_other_machines_reach_warns(host, shown, capsys):
    from spanbert_lib.commands import serve

    serve._announce(host, 8000, serve.bound_addresses(host))
    warning = capsys.readouterr().err
    assert warning.startswith(f"warning: --host {host} is not a loopback address: anyone who can reach {shown} ")
    assert "every network interface" not in warning


def test_serve_binds_what_the_host_spells(monkeypatch, capsys, logger_levels):
    import uvicorn

    from spanbert_lib.commands import serve
    from spanbert_lib.common.errors import UserInputError

    started = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: started.update(kwargs))
    serve._serve_from_args(_serve_args(["--host", "0", "--port", "8125"]))
    assert started["host"] == "0" and capsys.readouterr().err.startswith("warning: --host 0 serves every")
    serve._serve_from_args(_serve_args(["--host", "[::1]", "--port", "8125"]))
    assert started["host"] == "::1"  # the socket calls take IPv6 addresses without brackets
    assert capsys.readouterr().out.strip().endswith("http://[::1]:8125/")

    def no_models_for_a_bad_host(args):
        raise AssertionError("loaded the models before checking --host")

    monkeypatch.setattr(serve, "build_app", no_models_for_a_bad_host)
    with pytest.raises(UserInputError, match="--host 127.0.0.1 x: not an address, nor a name"):
        serve._serve_from_args(_serve_args(["--host", "127.0.0.1 x"]))
