"""How the sweep grades what a command did: its verdicts mean what the docs say (no command runs here)."""

import pytest

from tests.failure_sweep.grading import Case, HttpCase, Outcome, grade, grade_http


def _grade(code, stderr="", stdout="", expect="refuse", names=("data.json",), **kwargs):
    case = Case(["predict"], expect=expect, names=names)
    outcome = Outcome(code, stdout, stderr, 1.0, kwargs.pop("timed_out", False), kwargs.pop("killed", False))
    return grade(case, outcome, kwargs.pop("changed", []), kwargs.pop("leftovers", []), kwargs.pop("problem", None))


def test_one_line_naming_the_file_is_good():
    stderr = "2026-01-01 - INFO - allennlp - loading\nerror: data.json:3: not a JSON object\n"
    assert _grade(1, stderr) == ("good", "error: data.json:3: not a JSON object")
    argparse_error = (
        "usage: allennlp predict [-h]\nallennlp predict: error: argument --batch-size: expected a positive\n"
    )
    assert _grade(2, argparse_error, names=("--batch-size",))[0] == "good"


@pytest.mark.parametrize(
    "outcome, why",
    [
        ({"code": 1, "stderr": "error: something is wrong\n"}, "does not name data.json"),
        ({"code": 1, "stderr": "error: data.json: a\nerror: data.json: b\n"}, "2 error lines"),
        ({"code": 1, "stderr": "it went wrong\n"}, "no error line"),
    ],
)
def test_a_vague_refusal_is_ok(outcome, why):
    grade_, detail = _grade(**outcome)
    assert grade_ == "ok" and why in detail


@pytest.mark.parametrize(
    "outcome, why",
    [
        ({"code": 0, "stdout": "nothing to do\n"}, "exit 0 on a failure"),
        ({"code": 1, "stderr": "Traceback (most recent call last):\n  ...\nEOFError: ended\n"}, "traceback: EOFError"),
        ({"code": None, "timed_out": True}, "stuck"),
        ({"code": 1, "stderr": "error: data.json: bad\n", "changed": ["/w/data.json"]}, "changed 1 file(s): data.json"),
        ({"code": 1, "stderr": "error: data.json: bad\n", "leftovers": ["/w/.o.partial-x"]}, "left partial file"),
        ({"code": 1, "stderr": "error: data.json: bad\n", "problem": "MARKER was created"}, "MARKER was created"),
    ],
)
def test_damage_tracebacks_silence_and_hangs_are_bad(outcome, why):
    grade_, detail = _grade(**outcome)
    assert grade_ == "bad" and why in detail


def test_a_case_that_should_succeed():
    assert _grade(0, stdout="finished, nothing changed\n", expect="succeed")[0] == "good"
    assert _grade(0, expect="succeed") == ("good", "exit 0")
    assert _grade(1, "error: no\n", expect="succeed")[0] == "bad"
    assert _grade(0, expect="succeed", problem="out.jsonl lost its earlier content") == (
        "bad",
        "out.jsonl lost its earlier content",
    )


def test_a_killed_command_is_judged_by_what_it_left():
    assert _grade(-9, expect="killed", killed=True)[0] == "good"
    assert _grade(0, expect="killed")[0] == "good"  # it finished before the kill
    assert _grade(-9, expect="killed", killed=True, problem="a mix of two exports") == ("bad", "a mix of two exports")
    assert _grade(-9, expect="killed", killed=True, leftovers=["/w/.onnx.partial-1-x"])[0] == "bad"


def test_an_unknown_expectation_is_refused():
    with pytest.raises(ValueError, match="expect"):
        Case(["predict"], expect="fail")


def test_http_grading():
    case = HttpCase("h", "GET", "/", statuses=(421,))
    assert grade_http(case, 421, {}, b'{"error": "wrong host"}', None) == ("good", "HTTP 421: wrong host")
    assert grade_http(case, 400, {}, b'{"error": "bad"}', None)[0] == "ok"
    assert grade_http(case, 200, {}, b"{}", None)[0] == "bad"
    assert grade_http(case, 500, {}, b'{"error": "internal"}', None)[0] == "bad"
    assert grade_http(case, 421, {}, b"not json", None)[0] == "ok"
    assert grade_http(case, None, {}, b"", "no answer: ConnectionResetError")[0] == "bad"
