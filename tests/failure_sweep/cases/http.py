"""
Requests to ``allennlp serve``'s application: foreign and malformed ``Host`` headers, bodies that are not JSON or not
UTF-8, too large or too deep, missing keys, text no tokenizer can encode, unknown routes and methods.
"""

import json
from typing import List

from tests.failure_sweep.cases.inputs import QUESTION
from tests.failure_sweep.grading import HttpCase

JSON_HEADERS = {"Content-Type": "application/json"}
# "\ud800" escaped in the JSON: valid UTF-8 on the wire, a lone surrogate once parsed
LONE_SURROGATE = "The bridge \\ud800 opened in March."


def _no_cors(status, headers, body):
    return "answers with CORS headers" if any(k.lower().startswith("access-control") for k in headers) else None


def _lone_surrogate_cases() -> List[HttpCase]:
    bodies = {
        "mask": ("/mask", '{"text": "%s"}' % LONE_SURROGATE),
        "predict_qa": ("/predict/qa", '{"question": "Who?", "passage": "%s"}' % LONE_SURROGATE),
        "predict_qa_question": ("/predict/qa", '{"question": "%s", "passage": "The bridge."}' % LONE_SURROGATE),
        "predict_coref": ("/predict/coref", '{"document": "%s"}' % LONE_SURROGATE),
    }
    return [
        HttpCase(f"http_{label}_lone_surrogate", "POST", path, body.encode("ascii"), JSON_HEADERS, (400,))
        for label, (path, body) in bodies.items()
    ]


def http_cases() -> List[HttpCase]:
    question = json.dumps(QUESTION).encode()
    return [
        HttpCase("http_predict_ok", "POST", "/predict/qa", question, JSON_HEADERS, (200,)),
        HttpCase("http_host_evil", "GET", "/health", headers={"Host": "evil.example"}, statuses=(421,)),
        HttpCase(
            "http_host_rebinding_predict",
            "POST",
            "/predict/qa",
            question,
            {**JSON_HEADERS, "Host": "attacker.example:8000"},
            (421,),
        ),
        HttpCase(
            "http_host_suffix_trick", "GET", "/models", headers={"Host": "127.0.0.1.evil.example"}, statuses=(421,)
        ),
        HttpCase(
            "http_host_userinfo_trick",
            "GET",
            "/models",
            headers={"Host": "localhost@evil.example"},
            statuses=(400, 421),
        ),
        HttpCase("http_host_bad_port", "GET", "/health", headers={"Host": "127.0.0.1:x"}, statuses=(400,)),
        HttpCase("http_host_missing", "GET", "/health", raw=b"GET /health HTTP/1.0\r\n\r\n", statuses=(400,)),
        HttpCase(
            "http_form_post",
            "POST",
            "/predict/qa",
            b"question=Who&passage=Ann",
            {"Content-Type": "application/x-www-form-urlencoded"},
            (415,),
        ),
        HttpCase(
            "http_multipart_post",
            "POST",
            "/mask",
            b"--x\r\n\r\n--x--",
            {"Content-Type": "multipart/form-data; boundary=x"},
            (415,),
        ),
        HttpCase("http_text_plain_post", "POST", "/predict/qa", question, {"Content-Type": "text/plain"}, (415,)),
        HttpCase("http_no_content_type", "POST", "/predict/qa", question, {}, (415,)),
        HttpCase("http_nested_too_deep", "POST", "/predict/qa", b"[" * 50_000 + b"]" * 50_000, JSON_HEADERS, (400,)),
        HttpCase("http_nested_object_deep", "POST", "/mask", b'{"a":' * 40 + b"1" + b"}" * 40, JSON_HEADERS, (400,)),
        HttpCase(
            "http_body_over_limit",
            "POST",
            "/predict/qa",
            json.dumps({"question": "Who?", "passage": "word " * 30_000}).encode(),
            JSON_HEADERS,
            (413,),
        ),
        HttpCase(
            "http_declared_length_over_limit",
            "POST",
            "/mask",
            b"{}",
            {**JSON_HEADERS, "Content-Length": "999999999"},
            (413, 400),
        ),
        HttpCase("http_not_json", "POST", "/predict/qa", b"{not json", JSON_HEADERS, (400,)),
        HttpCase("http_bad_utf8", "POST", "/predict/qa", b'{"question": "\xff"}', JSON_HEADERS, (400,)),
        HttpCase("http_empty_body", "POST", "/predict/qa", b"", JSON_HEADERS, (400,)),
        HttpCase("http_array_body", "POST", "/predict/qa", b"[1, 2]", JSON_HEADERS, (400,)),
        HttpCase("http_missing_keys", "POST", "/predict/qa", b'{"passage": "x"}', JSON_HEADERS, (400,)),
        HttpCase(
            "http_passage_wrong_type", "POST", "/predict/qa", b'{"question": "a", "passage": 5}', JSON_HEADERS, (400,)
        ),
        HttpCase(
            "http_empty_passage", "POST", "/predict/qa", b'{"question": "a", "passage": "  "}', JSON_HEADERS, (400,)
        ),
        HttpCase("http_coref_empty_document", "POST", "/predict/coref", b'{"document": ""}', JSON_HEADERS, (200, 400)),
        HttpCase("http_unknown_model", "POST", "/predict/nobody", b"{}", JSON_HEADERS, (404,)),
        HttpCase("http_get_on_predict", "GET", "/predict/qa", statuses=(405,)),
        HttpCase("http_static_traversal", "GET", "/static/../../../../etc/passwd", statuses=(404,)),
        HttpCase("http_static_encoded_traversal", "GET", "/static/%2e%2e/app.py", statuses=(404,)),
        HttpCase("http_mask_bad_seed", "POST", "/mask", b'{"text": "a b", "seed": -1}', JSON_HEADERS, (400,)),
        HttpCase(
            "http_cors_preflight",
            "OPTIONS",
            "/predict/qa",
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
            statuses=(405,),
            check=_no_cors,
        ),
        *_lone_surrogate_cases(),
    ]
