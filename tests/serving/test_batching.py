"""
Dynamic batching in ``allennlp serve``: concurrent requests to one model over real HTTP get what the unbatched
server (``batch_wait_ms=0``) answers them - the same status, the same answers and errors, every number equal up to
the last float digits (a matrix product over another batch's rows may sum in another order: the QA model's
probabilities differ at ~1e-12) - good inputs and bad ones mixed in one batch; and the batcher's gathering rules on
a stand-in model.
"""

import asyncio
import json
import math
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Tuple

import pytest

from spanbert_lib.serving.app import create_app
from spanbert_lib.serving.batching import RequestBatcher
from spanbert_lib.serving.masking_preview import MaskingPreview
from spanbert_lib.serving.model_spec import ModelSpec
from spanbert_lib.serving.served_model import InvalidModelInput, ServedModel
from tests.serving.conftest import free_port, running_server
from tests.serving.tiny_archives import COREF_TEXT

PASSAGES = [
    "Anna lived in Boston for many years.",
    "The Harbour Bridge opened in March 1932 after eight years of work on the arch and its roads.",
    "Ben wrote three letters to his sister, who lived in a small town near the sea, every winter.",
]
QUESTIONS = ["Where did Anna live?", "When did the bridge open?", "Who wrote letters?", "How many letters?"]
QA_INPUTS: List[Any] = [{"passage": p, "question": q} for p in PASSAGES for q in QUESTIONS]
COREF_INPUTS: List[Any] = [
    {"document": COREF_TEXT},
    {"document": "Ben met Anna. He gave her a book."},
    {"document": "She called him the next day. Anna told Ben that she would call him. He was glad."},
    {"document": [["Anna", "told", "Ben", "."], ["She", "called", "him", "."]]},
    {"document": "   "},  # no words: no clusters
]
# what the predictors refuse, mixed in with the good inputs
QA_BAD: List[Any] = [{"passage": "x"}, {"question": 3, "passage": "y"}, [1, 2]]
COREF_BAD: List[Any] = [{"text": "no document key"}, {"document": 5}, [1, 2]]


def same_answer(batched: Tuple[int, bytes], alone: Tuple[int, bytes]) -> bool:
    """Same status and JSON, strings and integers exactly, floats to a relative 1e-6."""

    def same(a: Any, b: Any) -> bool:
        if isinstance(a, float) or isinstance(b, float):
            return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-6)
        if isinstance(a, dict):
            return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
        if isinstance(a, list):
            return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        return type(a) is type(b) and a == b

    return batched[0] == alone[0] and same(json.loads(batched[1]), json.loads(alone[1]))


def test_answers_compare_floats_to_their_last_digits_only():
    assert same_answer((200, b'{"a": [1, "x", 0.1234567890123]}'), (200, b'{"a": [1, "x", 0.1234567890456]}'))
    assert not same_answer((200, b'{"a": 0.1235}'), (200, b'{"a": 0.1234}'))
    assert not same_answer((200, b'{"a": [1, "x"]}'), (200, b'{"a": [1, "y"]}'))
    assert not same_answer((400, b'{"a": 1}'), (200, b'{"a": 1}'))
    assert not same_answer((200, b'{"a": 1}'), (200, b'{"a": 1, "b": 2}'))


def post(url: str, name: str, body: Any) -> Tuple[int, bytes]:
    request = urllib.request.Request(
        f"{url}/predict/{name}",
        data=json.dumps(body).encode("utf-8"),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


class GatedModel:
    """A served model whose first prediction waits for :attr:`release`, so that the others queue behind it."""

    def __init__(self, model: ServedModel) -> None:
        self.model, self.name = model, model.name
        self.started, self.release = threading.Event(), threading.Event()
        self.batches: List[int] = []

    def describe(self) -> Dict[str, Any]:
        return self.model.describe()

    def predict(self, inputs: Any) -> Any:
        self.batches.append(1)
        if not self.started.is_set():
            self.started.set()
            assert self.release.wait(timeout=60)
        return self.model.predict(inputs)

    def predict_batch(self, inputs: List[Any]) -> List[Any]:
        self.batches.append(len(inputs))
        return self.model.predict_batch(inputs)


@pytest.fixture(scope="module")
def served(tiny_archives):
    return {name: ServedModel(ModelSpec(name, str(tiny_archives[name]))) for name in ("qa", "coref")}


@pytest.fixture(scope="module")
def masking():
    return MaskingPreview(tokenizer="fixtures/tiny_bert")


@pytest.fixture(scope="module")
def unbatched(served, masking):
    """``{(model, input as JSON): (status, body)}`` of the server without batching, one request at a time."""
    answers = {}
    with running_server(create_app(served.values(), masking, batch_wait_ms=0), free_port()) as url:
        for name, inputs in (("qa", QA_INPUTS + QA_BAD), ("coref", COREF_INPUTS + COREF_BAD)):
            for body in inputs:
                answers[name, json.dumps(body)] = post(url, name, body)
    return answers


def test_the_unbatched_answers_are_real_predictions_and_errors(unbatched):
    for (name, body), (status, answer) in unbatched.items():
        bad = json.loads(body) in QA_BAD + COREF_BAD
        assert status == (400 if bad else 200), (name, body, answer)
        assert ("error" in json.loads(answer)) == bad
    assert any(json.loads(a)["clusters"] for (n, _), (s, a) in unbatched.items() if n == "coref" and s == 200)


@pytest.mark.parametrize("name", ["qa", "coref"])
def test_one_batch_of_queued_requests_answers_each_as_alone(served, masking, unbatched, name):
    """The first request holds the model; the others (good and bad mixed) queue and are predicted as one batch."""
    inputs = (QA_INPUTS + QA_BAD) if name == "qa" else (COREF_INPUTS + COREF_BAD)
    gated = GatedModel(served[name])
    app = create_app([gated], masking, batch_wait_ms=5, max_batch_size=64)
    with running_server(app, free_port()) as url, ThreadPoolExecutor(len(inputs)) as pool:
        first = pool.submit(post, url, name, inputs[0])
        assert gated.started.wait(timeout=60)
        rest = [pool.submit(post, url, name, body) for body in inputs[1:]]
        batcher = app.state.registry.batchers[name]
        deadline = time.monotonic() + 60
        queued = sum(isinstance(body, dict) for body in inputs[1:])  # the route refuses the others first
        while len(batcher._pending) < queued and time.monotonic() < deadline:
            time.sleep(0.01)
        gated.release.set()
        answers = [first.result()] + [future.result() for future in rest]
    assert gated.batches[:2] == [1, queued]  # the first alone, then all the others in one batch
    for body, answer in zip(inputs, answers):
        assert same_answer(answer, unbatched[name, json.dumps(body)]), (body, answer)


@pytest.mark.parametrize("name", ["qa", "coref"])
def test_sixteen_concurrent_clients_get_the_unbatched_answers(served, masking, unbatched, name):
    inputs = QA_INPUTS if name == "qa" else COREF_INPUTS * 3
    app = create_app(served.values(), masking, batch_wait_ms=20, max_batch_size=16)
    with running_server(app, free_port()) as url, ThreadPoolExecutor(16) as pool:
        for _ in range(2):
            answers = list(pool.map(lambda body: post(url, name, body), inputs))
            for body, answer in zip(inputs, answers):
                assert same_answer(answer, unbatched[name, json.dumps(body)]), (body, answer)
    assert max(app.state.registry.batchers[name].batch_sizes) > 1


def test_host_and_content_type_checks_hold_with_batching(served, masking):
    app = create_app(served.values(), masking, batch_wait_ms=5)
    with running_server(app, free_port()) as url:
        body = json.dumps(QA_INPUTS[0]).encode("utf-8")
        refused = urllib.request.Request(
            f"{url}/predict/qa", data=body, method="POST", headers={"Host": "evil.example"}
        )
        refused.add_header("Content-Type", "application/json")
        with pytest.raises(urllib.error.HTTPError) as host_error:
            urllib.request.urlopen(refused, timeout=30)
        assert host_error.value.code == 421
        form = urllib.request.Request(f"{url}/predict/qa", data=body, method="POST")
        form.add_header("Content-Type", "text/plain")
        with pytest.raises(urllib.error.HTTPError) as type_error:
            urllib.request.urlopen(form, timeout=30)
        assert type_error.value.code == 415 and "error" in json.loads(type_error.value.read())


class EchoModel:
    """A stand-in model recording its batches; inputs ``{"bad": ...}`` are refused."""

    name = "echo"

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds, self.batches = seconds, []

    def predict(self, inputs):
        self.batches.append([inputs])
        return self._answer(inputs)

    def predict_batch(self, inputs):
        self.batches.append(list(inputs))
        time.sleep(self.seconds)
        return [self._answer(item) if "bad" not in item else InvalidModelInput(f"bad {item['bad']}") for item in inputs]

    def _answer(self, inputs):
        if "bad" in inputs:
            raise InvalidModelInput(f"bad {inputs['bad']}")
        return {"echo": inputs}


async def _in_thread(function, *args):
    return await asyncio.to_thread(function, *args)


def test_batcher_gathers_only_after_concurrency_and_keeps_answers_apart():
    async def scenario():
        model = EchoModel(seconds=0.05)
        # an idle model whose last batch was one request does not open a gathering window: with an hour's window
        # the request would not be answered within the 30 s this allows
        batcher = RequestBatcher(model, wait_seconds=3600, max_batch_size=3, run_in_thread=_in_thread)
        assert await asyncio.wait_for(batcher.predict({"i": 0}), timeout=30) == {"echo": {"i": 0}}
        batcher.wait_seconds = 0.2
        # five at once, the model idle after a batch of one: no wait, batches of at most 3
        results = await asyncio.gather(
            *(batcher.predict({"i": i} if i != 3 else {"bad": i}) for i in range(1, 6)), return_exceptions=True
        )
        assert results[:2] + results[3:] == [{"echo": {"i": i}} for i in (1, 2, 4, 5)]
        assert isinstance(results[2], InvalidModelInput) and str(results[2]) == "bad 3"
        assert [len(batch) for batch in model.batches] == [1, 3, 2]
        # the last batch held one request: the next idle arrival runs at once again; after a batch of
        # three, two requests a little apart are gathered into one
        model.batches.clear()
        batcher.previous_batch_size = 3

        async def later(i, delay):
            await asyncio.sleep(delay)
            return await batcher.predict({"i": i})

        assert await asyncio.gather(later(6, 0), later(7, 0.05)) == [{"echo": {"i": 6}}, {"echo": {"i": 7}}]
        assert [len(batch) for batch in model.batches] == [2]

    asyncio.run(scenario())


def test_serve_options(tiny_archives):
    from allennlp.commands.subcommand import Subcommand

    from spanbert_lib.commands.serve import build_app

    subparser = Subcommand.by_name("serve")().add_subparser(__import__("argparse").ArgumentParser().add_subparsers())
    defaults = subparser.parse_args([])
    assert (defaults.batch_wait_ms, defaults.max_batch_size) == (5.0, 16)
    args = subparser.parse_args(
        ["--batch-wait-ms", "0", "--max-batch-size", "4", "--masking-tokenizer", "fixtures/tiny_bert"]
    )
    app = build_app(args)
    assert (app.state.batch_wait_ms, app.state.max_batch_size) == (0.0, 4)
    for bad in (["--batch-wait-ms", "-1"], ["--batch-wait-ms", "nan"], ["--max-batch-size", "0"]):
        with pytest.raises(SystemExit):
            subparser.parse_args(bad)
