"""evidence/qa_side_by_side.py: the run_qa-style labels of its baseline, and its smoke mode end to end."""

import json
from pathlib import Path

import pytest

from tests import REPO_ROOT


@pytest.fixture(scope="module")
def script():
    from evidence import qa_side_by_side

    return qa_side_by_side


def test_baseline_windows_label_the_answer_or_cls(script, tmp_path):
    from transformers import AutoTokenizer

    args = script.parse_args(["--smoke"])
    budget = script.Budget(
        str(REPO_ROOT / args.encoder),
        "",
        ":",
        ":",
        None,
        None,
        args.max_seq_length,
        args.doc_stride,
        args.max_query_length,
        1,
        1e-3,
        8,
        0.1,
        0.01,
        1.0,
        13,
        1,
    )
    data = json.loads((REPO_ROOT / "fixtures" / "qa" / "squad11.json").read_text(encoding="utf-8"))
    script.write_subset(data, ":", None, tmp_path / "train.json")
    questions = script.squad_questions(tmp_path / "train.json")
    tokenizer = AutoTokenizer.from_pretrained(budget.encoder)
    features = script.hf_training_features(tokenizer, questions, budget)
    encoded = script.tokenize_windows(tokenizer, questions, budget)
    assert len(features) == len(encoded["input_ids"]) > len(questions)  # some passages span several windows
    labelled = set()
    for i, feature in enumerate(features):
        question = questions[encoded["overflow_to_sample_mapping"][i]]
        start, end = feature["start_positions"], feature["end_positions"]
        if start == 0:
            assert end == 0
            continue
        offsets = encoded["offset_mapping"][i]
        first, last = script.passage_range(encoded.sequence_ids(i))
        assert first <= start <= end <= last
        text = question["context"][offsets[start][0] : offsets[end][1]]
        assert question["answer_text"] in text and len(text) - len(question["answer_text"]) <= 12
        labelled.add(question["id"])
    assert labelled == {q["id"] for q in questions}  # every answer is in some window


def test_smoke_run_trains_both_sides_and_scores_them(script, tmp_path):
    assert script.main(["--smoke", "--output-dir", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["eval_questions"] == 8
    eval_ids = {q["id"] for q in script.squad_questions(tmp_path / "eval.json")}
    assert len(eval_ids) == 8
    for side in ("ours", "hf"):
        result = summary[side]
        assert result["train_questions"] == 8 and result["updates"] >= 1
        predictions = json.loads(Path(result["predictions_file"]).read_text())
        assert set(predictions) == eval_ids
        assert set(result["scores"]) == {"exact_match", "f1"}
        assert 0.0 <= result["scores"]["exact_match"] <= result["scores"]["f1"] <= 100.0
    assert summary["hf"]["train_windows"] > 8  # windows, not questions, are the baseline's examples
