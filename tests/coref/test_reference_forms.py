"""
``allennlp coref-score`` on every CoNLL form the reference scorer v8.01 accepts, with default
options: the fixture pairs of ``fixtures/coref/reference_forms/`` (written for this project;
their README works out each expected value by hand from the metric definitions).
"""

import argparse
import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from spanbert_lib.commands.coref_score import CorefScore
from tests import REPO_ROOT

FORMS = REPO_ROOT / "fixtures" / "coref" / "reference_forms"
METRICS = ("muc", "bcub", "ceafm", "ceafe", "blanc", "mentions")


def f1(recall: Fraction, precision: Fraction) -> Fraction:
    return 2 * recall * precision / (recall + precision)


def rpf(recall, precision, f=None):
    recall, precision = Fraction(recall), Fraction(precision)
    return recall, precision, f1(recall, precision) if f is None else Fraction(f)


# scenario A (README): K1 {a, b, c}, K2 {d, e}, K3 {f}; R1 {a, y, b}, R2 {d, e, c}
SCENARIO_A = {
    "muc": rpf(Fraction(2, 3), Fraction(1, 2)),
    "bcub": rpf(Fraction(11, 18), Fraction(1, 2)),
    "ceafm": rpf(Fraction(2, 3), Fraction(2, 3)),
    "ceafe": rpf(Fraction(22, 45), Fraction(11, 15)),
    "blanc": rpf(Fraction(19, 44), Fraction(7, 18), Fraction(2, 5)),
    "mentions": rpf(Fraction(5, 6), Fraction(5, 6)),
}
# scenario B (README): K1 {p, q}, K2 {r, s, t}, K3 {u, v}; R5 {p, q}, R6 {r, u, v}, R7 {s}, R8 {w}
SCENARIO_B = {
    "muc": rpf(Fraction(1, 2), Fraction(2, 3)),
    "bcub": rpf(Fraction(2, 3), Fraction(2, 3)),
    "ceafm": rpf(Fraction(5, 7), Fraction(5, 7)),
    "ceafe": rpf(Fraction(23, 30), Fraction(23, 40)),
    "blanc": rpf(Fraction(41, 80), Fraction(37, 68), Fraction(52, 99)),
    "mentions": rpf(Fraction(6, 7), Fraction(6, 7)),
}
EXPECTED = {
    "trailing_whitespace": SCENARIO_A,
    "five_columns": SCENARIO_A,
    "id_and_coreference_only": SCENARIO_A,
    "different_words": SCENARIO_A,
    "unseparated_brackets": SCENARIO_B,
}


def conll_f1(expected) -> Fraction:
    return (expected["muc"][2] + expected["bcub"][2] + expected["ceafe"][2]) / 3


def assert_scores(scores, expected):
    for metric in METRICS:
        got = scores[metric]
        assert (got["recall"], got["precision"], got["f1"]) == pytest.approx(
            tuple(float(value) for value in expected[metric]), abs=1e-12
        ), metric
    assert scores["conll_f1"] == pytest.approx(float(conll_f1(expected)), abs=1e-12)


def test_the_fixture_hand_working_is_what_the_tests_assert():
    # the two scenarios' F1 values as the README writes them
    assert [SCENARIO_A[m][2] for m in ("muc", "bcub", "ceafe")] == [Fraction(4, 7), Fraction(11, 20), Fraction(44, 75)]
    assert [SCENARIO_B[m][2] for m in ("muc", "ceafe")] == [Fraction(4, 7), Fraction(23, 35)]
    assert sorted(path.name for path in FORMS.glob("*.key")) == sorted(f"{name}.key" for name in EXPECTED)


@pytest.mark.parametrize("form", sorted(EXPECTED))
def test_coref_score_reads_every_reference_form_with_default_options(form, capsys):
    parser = argparse.ArgumentParser()
    CorefScore().add_subparser(parser.add_subparsers())
    args = parser.parse_args(["coref-score", str(FORMS / f"{form}.key"), str(FORMS / f"{form}.response"), "--json"])
    args.func(args)
    captured = capsys.readouterr()
    assert captured.err == ""  # every key document matched, nothing ignored
    assert_scores(json.loads(captured.out), EXPECTED[form])


@pytest.mark.slow
def test_cli_scores_a_reference_form_with_include_package(tmp_path):
    allennlp = Path(sys.executable).with_name("allennlp")
    environment = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    result = subprocess.run(
        [
            str(allennlp),
            "coref-score",
            str(FORMS / "unseparated_brackets.key"),
            str(FORMS / "unseparated_brackets.response"),
            "--json",
            "--include-package",
            "spanbert_lib.coref.metrics",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert_scores(json.loads(result.stdout.strip().splitlines()[-1]), SCENARIO_B)
