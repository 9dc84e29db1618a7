"""
How ``scripts/failure_sweep.py`` grades what a command did (the sweep itself runs for minutes: the lead
runs it, this checks that its verdicts mean what the docs say).
"""

import pytest

from spanbert_lib.common.testing.repository_files import load_file_module
from tests.conftest import REPO_ROOT


@pytest.fixture(scope="module")
def sweep():
    return load_file_module(REPO_ROOT / "scripts" / "failure_sweep.py")


def _grade(sweep, code, stderr="", stdout="", expect="refuse", names=("data.json",), **kwargs):
    case = sweep.Case("c", ["predict"], expect=expect, names=names)
    outcome = sweep.Outcome(code, stdout, stderr, 1.0, kwargs.pop("timed_out", False))
    return sweep.grade(case, outcome, kwargs.pop("changed", []), kwargs.pop("leftovers", []))


def test_one_line_naming_the_file_is_good(sweep):
    stderr = "2026-01-01 - INFO - allennlp - loading\nerror: data.json:3: not a JSON object\n"
    assert _grade(sweep, 1, stderr) == ("good", "error: data.json:3: not a JSON object")
    argparse_error = (
        "usage: allennlp predict [-h]\nallennlp predict: error: argument --batch-size: expected a positive\n"
    )
    assert _grade(sweep, 2, argparse_error, names=("--batch-size",))[0] == "good"


@pytest.mark.parametrize(
    "outcome, why",
    [
        ({"code": 1, "stderr": "error: something is wrong\n"}, "does not name data.json"),
        ({"code": 1, "stderr": "error: data.json: a\nerror: data.json: b\n"}, "2 error lines"),
        ({"code": 1, "stderr": "it went wrong\n"}, "no error line"),
    ],
)
def test_a_vague_refusal_is_ok(sweep, outcome, why):
    grade, detail = _grade(sweep, **outcome)
    assert grade == "ok" and why in detail


@pytest.mark.parametrize(
    "outcome, why",
    [
        ({"code": 0, "stdout": "nothing to do\n"}, "exit 0 on a failure"),
        ({"code": 1, "stderr": "Traceback (most recent call last):\n  ...\nEOFError: ended\n"}, "traceback: EOFError"),
        ({"code": None, "timed_out": True}, "stuck"),
        ({"code": 1, "stderr": "error: data.json: bad\n", "changed": ["/w/data.json"]}, "changed 1 file(s): data.json"),
        ({"code": 1, "stderr": "error: data.json: bad\n", "leftovers": ["/w/.o.partial-x"]}, "left partial file"),
    ],
)
def test_damage_tracebacks_silence_and_hangs_are_bad(sweep, outcome, why):
    grade, detail = _grade(sweep, **outcome)
    assert grade == "bad" and why in detail


def test_a_case_that_should_succeed(sweep):
    assert _grade(sweep, 0, stdout="finished, nothing changed\n", expect="succeed")[0] == "good"
    assert _grade(sweep, 1, "error: no\n", expect="succeed")[0] == "bad"


def test_http_grading(sweep):
    case = sweep.HttpCase("h", "GET", "/", statuses=(421,))
    assert sweep._grade_http(case, 421, {}, b'{"error": "wrong host"}', None) == ("good", "HTTP 421: wrong host")
    assert sweep._grade_http(case, 400, {}, b'{"error": "bad"}', None)[0] == "ok"
    assert sweep._grade_http(case, 200, {}, b"{}", None)[0] == "bad"
    assert sweep._grade_http(case, 500, {}, b'{"error": "internal"}', None)[0] == "bad"
