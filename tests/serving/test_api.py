"""
The JSON API of ``allennlp serve`` in-process: every endpoint on tiny trained archives, every
error status, predictions off the event loop, and the subcommand's arguments.
"""

import argparse
import json
import threading
import time
import urllib.request
import warnings

import pytest
import torch

from spanbert_lib.serving.app import create_app
from spanbert_lib.serving.masking_preview import MaskingPreview
from spanbert_lib.serving.model_spec import ModelSpec
from spanbert_lib.serving.served_model import ServedModel
from tests.serving.conftest import free_port, running_server
from tests.serving.tiny_archives import COREF_TEXT, NER_TEXT

with warnings.catch_warnings():
    # starlette >= 1.x suggests the httpx2 package for its test client; httpx works the same
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

TINY_TOKENIZER = "fixtures/tiny_bert"
LOCAL = "http://127.0.0.1"  # the test client's default host name, "testserver", is not one the app answers for
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def served(tiny_archives):
    return {name: ServedModel(ModelSpec(name, str(path))) for name, path in tiny_archives.items()}


@pytest.fixture(scope="module")
def masking():
    return MaskingPreview(tokenizer=TINY_TOKENIZER)


@pytest.fixture(scope="module")
def client(served, masking):
    app = create_app(served.values(), masking, max_request_chars=2000)
    with TestClient(app, base_url=LOCAL) as test_client:
        yield test_client


def test_health_and_models_describe_every_archive(client, tiny_archives):
    assert client.get("/health").json() == {"status": "ok", "models_ready": list(tiny_archives), "models_training": []}
    from allennlp.predictors import Predictor

    from spanbert_lib.coref.predictors import SpanBertCorefPredictor
    from spanbert_lib.entity_typing.predictors.spanbert_entity_typing import SpanBertEntityTypingPredictor
    from spanbert_lib.ner.predictors.spanbert_span_ner import SpanBertSpanNerPredictor
    from spanbert_lib.qa.predictors import SpanBertQAPredictor
    from spanbert_lib.relation.predictors.spanbert_relation_classifier import SpanBertRelationClassifierPredictor
    from spanbert_lib.relation.predictors.spanbert_semeval2010_task8 import SpanBertSemEval2010Task8Predictor

    models = {m["name"]: m for m in client.get("/models").json()}
    expected = {
        "coref": ("coreference", SpanBertCorefPredictor),
        "qa": ("qa", SpanBertQAPredictor),
        "qa_abstains": ("qa", SpanBertQAPredictor),
        "ner": ("span_ner", SpanBertSpanNerPredictor),
        "relation": ("relation", SpanBertRelationClassifierPredictor),
        "semeval": ("relation", SpanBertSemEval2010Task8Predictor),
        "typing": ("entity_typing", SpanBertEntityTypingPredictor),
    }
    assert {name: (m["task"], Predictor.by_name(m["predictor"])) for name, m in models.items()} == expected
    assert (
        all(m["predictor"].startswith("spanbert_") for m in models.values())
        or "spanbert_span_ner" not in Predictor.list_available()
    )  # the prefixed names, once registered
    for name, model in models.items():
        assert model["status"] == "ready" and model["encoder"] == "tiny_bert"
        metrics = json.loads((tiny_archives[name] / "metrics.json").read_text())
        assert model["best_epoch"] == metrics["best_epoch"]
        assert model["validation_metrics"] == {
            k[len("best_validation_") :]: v for k, v in metrics.items() if k.startswith("best_validation_")
        }
        assert model["validation_metrics"]  # every tiny run validates
    assert models["coref"]["validation_metrics"]["conll_f1"] > 0
    assert set(models["qa"]["example"]) == {"passage", "question"}


def test_every_example_input_predicts(client):
    """The prefilled example of every view is valid input for its model."""
    for model in client.get("/models").json():
        response = client.post(f"/predict/{model['name']}", json=model["example"])
        assert response.status_code == 200, (model["name"], response.json())
    example = {m["name"]: m["example"] for m in client.get("/models").json()}["relation"]
    relation = client.post("/predict/relation", json=example).json()
    assert relation["label"] in relation["class_probabilities"]
    assert sum(relation["class_probabilities"].values()) == pytest.approx(1.0, abs=1e-5)


def test_predictions_match_the_predictor_called_directly(client, served):
    coref = client.post("/predict/coref", json={"document": COREF_TEXT}).json()
    assert coref == served["coref"].predictor.predict_json({"document": COREF_TEXT})
    assert any(len(cluster) >= 2 for cluster in coref["clusters"])  # the tiny model learnt its document
    entities = {
        (e["text"], e["label"]) for e in client.post("/predict/ner", json={"text": NER_TEXT}).json()["entities"]
    }
    assert {("his", "PER"), ("his family", "PER")} <= entities  # nested
    question = {"passage": "Anna lived in Boston for many years.", "question": "Where did Anna live?"}
    answered = client.post("/predict/qa", json=question).json()
    assert answered["best_span_str"] == question["passage"][slice(*answered["best_span"])] != ""
    abstained = client.post("/predict/qa_abstains", json=question).json()
    assert abstained["best_span_str"] == "" and abstained["best_non_null_span_str"]


def test_masking_preview(client):
    settings = client.get("/masking").json()
    assert settings["masker"]["type"] == "geometric_span" and settings["tokenizer"] == "tiny_bert"
    assert sum(settings["sampling_pmf"].values()) == pytest.approx(1.0)
    text = settings["example"]
    result = client.post("/mask", json={"text": text, "seed": 3}).json()
    assert result["spans"] and result["draws"] > 1
    for span in result["spans"]:
        assert text[span["char_start"] : span["char_end"]] == span["text"]
        # whole words: no span starts or ends inside a word
        for outside, inside in ((span["char_start"] - 1, span["char_start"]), (span["char_end"], span["char_end"] - 1)):
            if 0 <= outside < len(text):
                assert not (text[outside].isalnum() and text[inside].isalnum()), span
        assert span["replacement"] in ("mask", "random", "keep")
        if span["replacement"] == "mask":
            assert set(span["output"]) == {"[MASK]"}
        if span["replacement"] == "keep":
            assert span["output"] == span["original"]
    statistics = result["statistics"]
    assert statistics["masked_fraction"] == pytest.approx(0.15, abs=0.03)
    assert sum(statistics["span_length_histogram"].values()) == statistics["num_spans"]
    assert max(map(int, statistics["span_length_histogram"])) <= 10
    assert client.post("/mask", json={"text": text, "seed": 3}).json() == result  # seeded
    assert client.post("/mask", json={"text": text, "seed": 4}).json()["spans"] != result["spans"]
    empty = client.post("/mask", json={"text": "  "}).json()
    assert empty["spans"] == [] and empty["statistics"] is None


@pytest.mark.parametrize(
    "path, body, status, message",
    [
        ("/predict/coref", "{not json", 400, "not valid JSON"),
        ("/predict/coref", "", 400, "empty"),
        ("/predict/coref", "[1, 2]", 400, "must be a JSON object, got an array"),
        ("/predict/coref", '{"text": "x"}', 400, "needs a 'document'"),
        ("/predict/qa", '{"passage": "x"}', 400, "needs 'question' and 'passage'"),
        ("/predict/relation", '{"sentence": "Ann met Bob."}', 400, "lacks 'subj_type'"),
        ("/predict/typing", '{"sentence": "Ann met Bob."}', 400, "lacks start, end"),
        ("/predict/nobody", "{}", 404, "no model named 'nobody'"),
        ("/predict/%ED%A0%80%00", "{}", 404, "no model named"),  # a surrogate's UTF-8 bytes and a NUL in the path
        ("/nowhere", None, 404, "Not Found"),
        ("/mask", '{"seed": 1}', 400, "needs 'text'"),
        ("/mask", '{"text": "a", "seed": -1}', 400, "'seed' must be a non-negative integer"),
        ("/predict/coref", json.dumps({"document": "word " * 500}), 413, "limit of 2000 characters"),
        ("/mask", json.dumps({"text": "é" * 2001}, ensure_ascii=False), 413, "limit of 2000 characters"),
    ],
)
def test_errors_are_json_with_a_status(client, path, body, status, message):
    response = client.get(path) if body is None else client.post(path, content=body.encode("utf-8"), headers=JSON)
    assert response.status_code == status
    assert message in response.json()["error"]
    assert "Traceback" not in response.text


def post_routes(client) -> dict:
    """``{path: a valid body}`` of every route that takes a body: the masking view and each model's example."""
    routes = {"/mask": {"text": "Anna met Ben.", "seed": 1}}
    for model in client.get("/models").json():
        routes[f"/predict/{model['name']}"] = model["example"]
    return routes


def with_strings_replaced(body: dict, replace) -> dict:
    return {key: replace(value) if isinstance(value, str) else value for key, value in body.items()}


@pytest.mark.parametrize("surrogate", ["\ud800", "\udfff", "\udc00\ud800"])  # high, low, a pair the wrong way round
def test_a_lone_surrogate_is_400_on_every_route(client, surrogate):
    for path, example in post_routes(client).items():
        bodies = [
            with_strings_replaced(example, lambda text: text + surrogate),
            {**example, surrogate: "an unknown key"},
            {**example, "extra": {"nested": ["ok", surrogate]}},
        ]
        for body in bodies:
            raw = json.dumps(body)  # escapes the surrogate as JSON does: "\\ud800"
            assert "\\ud" in raw
            response = client.post(path, content=raw.encode("ascii"), headers=JSON)
            assert response.status_code == 400, (path, body, response.text)
            assert "lone surrogate \\ud" in response.json()["error"], response.text


def test_a_surrogate_pair_is_a_character(client):
    raw = json.dumps({"text": "Anna \U0001f600 met Ben."})  # "\\ud83d\\ude00"
    assert "\\ud83d\\ude00" in raw
    assert client.post("/mask", content=raw.encode("ascii"), headers=JSON).status_code == 200


@pytest.mark.parametrize(
    "odd",
    [
        "\u0000",
        "a\u0000b",
        "",
        " \n\t",
        "\x01\x1b\u200b\ufeff\uffff",
        "\u0301" * 20,
        5,
        10**30,
        1.5,
        None,
        True,
        ["a"],
        {"a": "b"},
    ],
)
def test_odd_values_are_answered_or_refused_never_500(client, odd):
    for path, example in post_routes(client).items():
        response = client.post(path, json=with_strings_replaced(example, lambda text: odd))
        assert response.status_code in (200, 400), (path, odd, response.text)
        assert response.headers["content-type"] == "application/json"
        if response.status_code == 400:
            assert response.json()["error"]


def test_the_limit_counts_characters_not_bytes(client):
    body = json.dumps({"text": "é" * 1980}, ensure_ascii=False)  # 1,992 characters, 3,972 bytes
    assert client.post("/mask", content=body.encode("utf-8"), headers=JSON).status_code == 200


def test_an_exception_inside_the_model_is_a_short_500(tiny_archives, masking, monkeypatch):
    from spanbert_lib.relation.models.spanbert_relation_classifier import SpanBertRelationClassifier

    def failing_forward(self, *args, **kwargs):
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(SpanBertRelationClassifier, "forward", failing_forward)
    served = ServedModel(ModelSpec("relation", str(tiny_archives["relation"])))
    with TestClient(create_app([served], masking), base_url=LOCAL) as client:
        response = client.post(
            "/predict/relation",
            json={
                "sentence": "Ann met Bob.",
                "subj_char_span": [0, 3],
                "obj_char_span": [8, 11],
                "subj_type": "PERSON",
                "obj_type": "PERSON",
            },
        )
    assert response.status_code == 500
    assert response.json() == {
        "error": "the model 'relation' failed on this input (SpanBertRelationClassifier.forward failed: RuntimeError)"
    }


class SlowModel:
    """A served-model stand-in whose predictions block until released."""

    name = "slow"

    def __init__(self):
        self.started, self.release = threading.Event(), threading.Event()

    def describe(self):
        return {"name": self.name, "status": "ready", "task": "generic"}

    def predict(self, inputs):
        self.started.set()
        self.release.wait(timeout=30)
        return {"echo": inputs}


def test_a_long_prediction_does_not_block_the_server(masking):
    slow = SlowModel()
    port = free_port()
    with running_server(create_app([slow], masking), port) as url:
        answer = {}
        request = urllib.request.Request(
            f"{url}/predict/slow", data=b'{"a": 1}', method="POST", headers={"Content-Type": "application/json"}
        )
        worker = threading.Thread(target=lambda: answer.update(json.load(urllib.request.urlopen(request, timeout=30))))
        worker.start()
        assert slow.started.wait(timeout=10)
        began = time.monotonic()
        with urllib.request.urlopen(f"{url}/health", timeout=5) as health:
            assert json.load(health)["models_ready"] == ["slow"]
        with urllib.request.urlopen(f"{url}/", timeout=5) as page:
            assert b"/static/js/main.js" in page.read()
        assert time.monotonic() - began < 5.0  # answered while the prediction is still running
        assert worker.is_alive()
        slow.release.set()
        worker.join(timeout=10)
    assert answer == {"echo": {"a": 1}}


def test_serve_subcommand_arguments_and_app(tiny_archives):
    from allennlp.commands.subcommand import Subcommand

    from spanbert_lib.commands.serve import build_app

    parser = argparse.ArgumentParser().add_subparsers()
    subparser = Subcommand.by_name("serve")().add_subparser(parser)
    defaults = subparser.parse_args([])
    assert (defaults.host, defaults.port, defaults.max_request_chars, defaults.model) == (
        "127.0.0.1",
        8000,
        100_000,
        [],
    )
    args = subparser.parse_args(
        [
            "--model",
            f"ner={tiny_archives['ner']}/model.tar.gz:spanbert_span_ner",
            "--model",
            f"typing={tiny_archives['typing']}",
            "--masking-tokenizer",
            TINY_TOKENIZER,
            "--masker",
            '{"type": "whole_word"}',
            "--max-request-chars",
            "50",
        ]
    )
    with TestClient(build_app(subparser.parse_args(["--masking-tokenizer", TINY_TOKENIZER])), base_url=LOCAL) as client:
        # no --model: the masking view alone
        assert client.get("/models").json() == [] and client.get("/health").json()["models_ready"] == []
        assert client.post("/mask", json={"text": "Only the masking view is served."}).status_code == 200
    with TestClient(build_app(args), base_url=LOCAL) as client:
        assert [m["name"] for m in client.get("/models").json()] == ["ner", "typing"]
        assert client.get("/masking").json()["masker"]["type"] == "whole_word"
        assert client.post("/mask", json={"text": "x" * 60}).status_code == 413
        page = client.get("/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        for asset in ("/static/app.css", "/static/js/main.js", "/static/js/views/coreference.js"):
            assert client.get(asset).status_code == 200, asset
        assert "/predict/{name}" in client.get("/api/openapi.json").json()["paths"]
        assert client.get("/api/docs").status_code == 404  # its page would load scripts from a CDN


@pytest.mark.parametrize(
    "text, expected",
    [
        ("coref=runs/coref/model.tar.gz", ModelSpec("coref", "runs/coref/model.tar.gz")),
        ("qa=runs/qa/model.tar.gz:spanbert_qa", ModelSpec("qa", "runs/qa/model.tar.gz", "spanbert_qa")),
        ("runs/litbank_minilm/model.tar.gz", ModelSpec("litbank_minilm", "runs/litbank_minilm/model.tar.gz")),
        ("ner=outputs/demo/ner", ModelSpec("ner", "outputs/demo/ner")),
    ],
)
def test_model_spec_parsing(text, expected):
    assert ModelSpec.parse(text) == expected


def test_model_spec_errors():
    from spanbert_lib.serving.model_spec import parse_model_specs

    with pytest.raises(ValueError, match="given twice"):
        parse_model_specs(["a=x.tar.gz", "a=y.tar.gz"])
    with pytest.raises(ValueError, match="may hold only"):
        ModelSpec.parse("a b=x.tar.gz")


def test_overrides_attach_to_their_model_and_bad_ones_are_user_errors():
    from spanbert_lib.common.errors import UserInputError
    from spanbert_lib.serving.model_spec import parse_model_specs

    setting = '{"model.pair_product_dtype": "bfloat16"}'
    specs = parse_model_specs(["coref=c.tar.gz", "qa=q.tar.gz"], [f"coref={setting}"])
    assert specs == [ModelSpec("coref", "c.tar.gz", overrides=setting), ModelSpec("qa", "q.tar.gz")]
    for overrides, message in [
        ([f"ner={setting}"], r"NAME one of the --model names \(coref\)"),
        ([setting], "expected NAME=JSON"),
        (["coref={model: 1}"], "--overrides coref: not JSON"),
        (['coref=["x"]'], "expected a JSON object"),
        ([f"coref={setting}", "coref={}"], "given overrides twice"),
    ]:
        with pytest.raises(UserInputError, match=message):
            parse_model_specs(["coref=c.tar.gz"], overrides)


def test_the_served_model_loads_with_its_overrides(tiny_archives):
    from allennlp.commands.subcommand import Subcommand

    from spanbert_lib.commands.serve import build_app
    from spanbert_lib.common.errors import UserInputError

    subparser = Subcommand.by_name("serve")().add_subparser(argparse.ArgumentParser().add_subparsers())
    fast = '{"model.encoder.token_embedders.tokens.autocast_dtype": "bfloat16", "model.pair_product_dtype": "bfloat16"}'
    model = f"coref={tiny_archives['coref']}"
    args = subparser.parse_args(["--model", model, "-o", f"coref={fast}", "--masking-tokenizer", TINY_TOKENIZER])
    with TestClient(build_app(args), base_url=LOCAL) as client:
        answer = client.post("/predict/coref", json={"document": COREF_TEXT})
        assert answer.status_code == 200 and "clusters" in answer.json()
    loaded = ServedModel(ModelSpec("coref", str(tiny_archives["coref"]), overrides=fast))
    assert loaded.predictor._model._pairwise_scorer.product_dtype is torch.bfloat16
    assert loaded.predictor._model.encoder.token_embedder_tokens.autocast_dtype == "bfloat16"
    typo = '{"model.pair_product_dtpye": "bfloat16"}'
    args = subparser.parse_args(["--model", model, "-o", f"coref={typo}", "--masking-tokenizer", TINY_TOKENIZER])
    with pytest.raises(
        UserInputError,
        match=r"--overrides coref: model.pair_product_dtpye: not a setting .* did you mean .pair_product_dtype.\?",
    ):
        build_app(args)


def test_a_missing_archive_is_one_user_error(tmp_path):
    from allennlp.commands.subcommand import Subcommand

    from spanbert_lib.commands.serve import build_app
    from spanbert_lib.common.errors import UserInputError

    subparser = Subcommand.by_name("serve")().add_subparser(argparse.ArgumentParser().add_subparsers())
    missing = tmp_path / "model.tar.gz"
    args = subparser.parse_args(["--model", f"qa={missing}", "--masking-tokenizer", TINY_TOKENIZER])
    with pytest.raises(UserInputError, match="--model qa: no such archive") as error:
        build_app(args)
    assert str(error.value).startswith(f"{missing}: ")
    # a serialization directory that does not exist either: no "training" page that waits forever
    args = subparser.parse_args(["--model", f"qa={tmp_path / 'typo'}", "--masking-tokenizer", TINY_TOKENIZER])
    with pytest.raises(UserInputError, match="no such archive or serialization directory"):
        build_app(args)


def test_non_finite_scores_become_null():
    from spanbert_lib.serving.responses import json_response

    assert json_response(
        {"a": float("-inf"), "b": [float("nan"), 1.5], "c": "é"}
    ).body == '{"a":null,"b":[null,1.5],"c":"é"}'.encode("utf-8")
    assert json_response({"score": 2.0}).body == b'{"score":2.0}'
