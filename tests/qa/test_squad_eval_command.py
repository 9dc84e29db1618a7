"""
``allennlp squad-eval`` in-process through allennlp's ``main`` (the installed executable runs it in
tests/qa/test_spanbert_qa_predictor.py). Expected values are the hand-computed ones of
tests/qa/test_squad_evaluation.py.
"""

import json
import sys
from pathlib import Path

import pytest
from allennlp.commands import main

import spanbert_lib.commands.squad_eval  # noqa: F401  (registers the subcommand)
from spanbert_lib.commands.squad_eval_cli import evaluate_squad_files
from spanbert_lib.qa.metrics.squad_evaluation import SquadEvaluationError
from tests import require_external_data

# h1, h2 answerable, n1, n2 unanswerable (see test_squad_evaluation.py for the arithmetic)
V2_QUESTIONS = [
    ("h1", ["Denver Broncos"], False),
    ("h2", ["red dog barked"], False),
    ("n1", [], True),
    ("n2", [], True),
]
V2_PREDICTIONS = {"h1": "Denver Broncos", "h2": "big red dog", "n1": "", "n2": "Carolina"}
V2_NA_PROBS = {"h1": 0.1, "h2": 0.6, "n1": 0.3, "n2": 0.8}


def write_json(path: Path, content) -> str:
    path.write_text(json.dumps(content), encoding="utf-8")
    return str(path)


def squad_file(tmp_path: Path, questions, version=None, name="data.json") -> str:
    qas = [
        {
            "id": qid,
            "question": "?",
            "answers": [{"text": t, "answer_start": 0} for t in texts],
            **({"is_impossible": impossible} if impossible is not None else {}),
        }
        for qid, texts, impossible in questions
    ]
    content = {"data": [{"title": "t", "paragraphs": [{"context": "c", "qas": qas}]}]}
    if version is not None:
        content["version"] = version
    return write_json(tmp_path / name, content)


def run_main(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["allennlp", "squad-eval", *args])
    main(prog="allennlp")
    return capsys.readouterr()


def test_v2_json_output_with_na_probs(tmp_path, monkeypatch, capsys):
    data = squad_file(tmp_path, V2_QUESTIONS)
    preds = write_json(tmp_path / "preds.json", V2_PREDICTIONS)
    na = write_json(tmp_path / "na.json", V2_NA_PROBS)
    out = run_main(monkeypatch, capsys, data, preds, "--na-prob-file", na, "--na-prob-thresh", "0.5", "--json")
    scores = json.loads(out.out)
    assert scores["exact"] == pytest.approx(75.0) and scores["total"] == 4
    assert scores["NoAns_f1"] == pytest.approx(100.0)
    assert scores["best_f1"] == pytest.approx(100 * (11 / 3) / 4) and scores["best_f1_thresh"] == 0.6
    assert scores["best_exact"] == pytest.approx(75.0) and scores["best_exact_thresh"] == 0.1


def test_v1_table_output_and_version_field(tmp_path, monkeypatch, capsys):
    data = squad_file(tmp_path, [("q1", ["Denver Broncos"], None), ("q2", ["red dog barked"], None)], version="1.1")
    preds = write_json(tmp_path / "preds.json", {"q1": "denver broncos", "q2": "big red dog"})
    out = run_main(monkeypatch, capsys, data, preds)
    # EM (1 + 0) / 2; F1 (1 + 2/3) / 2 = 83.3333
    assert out.out.splitlines() == ["SQuAD v1.1 evaluation", "  exact_match  50.0000", "  f1           83.3333"]
    out = run_main(monkeypatch, capsys, data, preds, "--json")
    assert json.loads(out.out) == {"exact_match": 50.0, "f1": pytest.approx(250 / 3)}


def test_version_inference(tmp_path):
    preds = write_json(tmp_path / "preds.json", {"q1": "", "q2": "x"})
    flagged = squad_file(tmp_path, [("q1", [], True), ("q2", ["x"], False)], name="a.json")
    assert evaluate_squad_files(flagged, preds)[0] == "2.0"
    named = squad_file(tmp_path, [("q1", ["y"], None), ("q2", ["x"], None)], version="v2.0", name="b.json")
    version, scores = evaluate_squad_files(named, preds)
    assert version == "2.0" and "exact" in scores
    plain = squad_file(tmp_path, [("q1", ["y"], None), ("q2", ["x"], None)], name="c.json")
    version, scores = evaluate_squad_files(plain, preds)
    assert version == "1.1" and scores == {"exact_match": 50.0, "f1": 50.0}
    # an explicit --version wins over the file
    assert evaluate_squad_files(named, preds, version="1.1")[0] == "1.1"


@pytest.mark.parametrize(
    "dataset, predictions, message",
    [
        ("not json", {"q1": "x"}, "dataset file .*data.json is not valid JSON"),
        ({"version": "1.1"}, {"q1": "x"}, "dataset file .*data.json has no top-level 'data' field"),
        (
            {"data": [{"paragraphs": [{"qas": [{"id": "q1"}]}]}]},
            {"q1": "x"},
            r"dataset file .*data.json: data\[0\].paragraphs\[0\].qas\[0\] \(id q1\) has no 'answers' list",
        ),
        (None, ["x"], "predictions file .*preds.json must hold a JSON object"),
        (None, {"q1": 3}, "predictions file .*preds.json: the answer for question q1 must be a string"),
        (None, "{bad", "predictions file .*preds.json is not valid JSON"),
    ],
)
def test_bad_input_names_the_file(tmp_path, monkeypatch, capsys, dataset, predictions, message):
    data_path = tmp_path / "data.json"
    if dataset is None:
        squad_file(tmp_path, [("q1", ["x"], None)])
    elif isinstance(dataset, str):
        data_path.write_text(dataset)
    else:
        write_json(data_path, dataset)
    preds_path = tmp_path / "preds.json"
    if isinstance(predictions, str):
        preds_path.write_text(predictions)
    else:
        write_json(preds_path, predictions)
    with pytest.raises(SquadEvaluationError, match=message):
        evaluate_squad_files(str(data_path), str(preds_path))
    with pytest.raises(SystemExit) as exit_info:
        run_main(monkeypatch, capsys, str(data_path), str(preds_path))
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_v2_errors_name_the_file(tmp_path):
    data = squad_file(tmp_path, V2_QUESTIONS)
    preds = write_json(tmp_path / "preds.json", {"h1": "x"})
    with pytest.raises(SquadEvaluationError, match=r"preds.json: 3 of 4 questions have no prediction: h2, n1, n2"):
        evaluate_squad_files(data, preds)
    preds = write_json(tmp_path / "preds.json", V2_PREDICTIONS)
    na = write_json(tmp_path / "na.json", {"h1": 0.5, "h2": "high"})
    with pytest.raises(SquadEvaluationError, match="na.json: the value for question h2 must be a number"):
        evaluate_squad_files(data, preds, na_prob_file=na)
    missing = tmp_path / "absent.json"
    with pytest.raises(SquadEvaluationError, match="cannot read no-answer probability file .*absent.json"):
        evaluate_squad_files(data, preds, na_prob_file=str(missing))
    with pytest.raises(SquadEvaluationError, match="--na-prob-file only applies to SQuAD v2.0"):
        evaluate_squad_files(data, preds, version="1.1", na_prob_file=str(missing))


@pytest.mark.external_data
def test_real_squad20_file_with_na_probs(tmp_path, monkeypatch, capsys):
    """A real SQuAD 2.0 file (repeated ids) through the subcommand, in-process. The installed ``allennlp``
    executable runs squad-eval in tests/qa/test_spanbert_qa_predictor.py::test_cli_predict_then_squad_eval."""
    dataset = require_external_data("qa", "squad20_tiny.json")
    with open(dataset, encoding="utf-8") as handle:
        questions = [qa for a in json.load(handle)["data"] for p in a["paragraphs"] for qa in p["qas"]]
    # gold answers (the last question of the repeated id is the scored, answerable one)
    # except 106b, answered "Julius Nieuwl" for "Father Julius Nieuwl" (P 1, R 2/3: F1 0.8),
    # and 1068 (gold "1882") with no-answer probability 0.9 > 0.5: abstains, 0.
    # exact = 3/5 = 60, f1 = (3 + 0.8)/5 = 76, all 5 answerable.
    # Best threshold: start at #NoAns = 0, answer by increasing p (0.2 x 4, then 1068 at 0.9):
    # EM 1, 2, 2, 3, then 4 at 0.9 -> 80 at 0.9; F1 ... 3.8, then 4.8 at 0.9 -> 96 at 0.9
    predictions = {qa["id"]: qa["answers"][0]["text"] if qa["answers"] else "" for qa in questions}
    predictions["5733b1da4776f4190066106b"] = "Julius Nieuwl"
    preds = write_json(tmp_path / "preds.json", predictions)
    na = write_json(
        tmp_path / "na.json", {qa["id"]: (0.9 if qa["id"] == "5733b1da4776f41900661068" else 0.2) for qa in questions}
    )
    out = run_main(monkeypatch, capsys, str(dataset), preds, "--na-prob-file", na, "--na-prob-thresh", "0.5", "--json")
    scores = json.loads(out.out)
    assert list(scores) == [
        "exact",
        "f1",
        "total",
        "HasAns_exact",
        "HasAns_f1",
        "HasAns_total",
        "best_exact",
        "best_exact_thresh",
        "best_f1",
        "best_f1_thresh",
    ]
    assert scores["exact"] == pytest.approx(60.0) and scores["f1"] == pytest.approx(76.0)
    assert scores["total"] == scores["HasAns_total"] == 5
    assert (scores["best_exact"], scores["best_exact_thresh"]) == (pytest.approx(80.0), 0.9)
    assert (scores["best_f1"], scores["best_f1_thresh"]) == (pytest.approx(96.0), 0.9)
