"""
SQuAD v1.1/v2.0 evaluation: every expected value below is worked out by hand from the
definitions of the official scripts (arithmetic in the comments).
"""

import json
import logging

import pytest
import torch

from spanbert_lib.qa.metrics.squad_evaluation import (
    SquadEvaluationError,
    answer_tokens,
    evaluate_v1,
    evaluate_v2,
    exact_match_v1,
    exact_match_v2,
    f1_v1,
    f1_v2,
    find_best_threshold,
    gold_answers_v2,
    normalize_answer,
    score_question_v1,
    score_question_v2,
)
from spanbert_lib.qa.metrics.squad_metrics import SquadV1Metrics, SquadV2Metrics
from tests import require_external_data


def make_dataset(questions):
    """A SQuAD ``data`` list with one paragraph holding ``[(id, [answer texts]), ...]``."""
    qas = [
        {"id": qid, "question": "?", "answers": [{"text": t, "answer_start": 0} for t in texts]}
        for qid, texts in questions
    ]
    return [{"title": "t", "paragraphs": [{"context": "c", "qas": qas}]}]


# ----------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The Cat!", "cat"),  # lower, "!" dropped, article "the" dropped
        ("The.Cat", "thecat"),  # punctuation goes first: "thecat" holds no article
        ("  a  b\tc\n", "b c"),  # "a" dropped, whitespace runs collapsed
        ("an apple, the pear and a plum.", "apple pear and plum"),
        ("Theatre", "theatre"),  # articles only as whole words
        ("a,b", "ab"),  # "," removed before the article test
        ("a, b", "b"),  # here "a" stays a separate word and goes
        ("A's", "as"),
        ("$1,000.50", "100050"),
        ("", ""),
        ("the a an", ""),
    ],
)
def test_normalize_ascii(text, expected):
    assert normalize_answer(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Thé Café", "thé café"),  # "é" is a word character: "thé" is no article
        ("ÉCOLE Über", "école über"),  # unicode lower-casing
        ("“Quoted”", "“quoted”"),  # curly quotes are not in string.punctuation
        ("non\u00a0breaking\u3000space", "non breaking space"),  # str.split() splits unicode spaces
        ("an\u2014the", "\u2014"),  # an em dash is a word boundary, not punctuation
    ],
)
def test_normalize_unicode(text, expected):
    assert normalize_answer(text) == expected


def test_answer_tokens():
    assert answer_tokens("The  Denver Broncos.") == ["denver", "broncos"]
    assert answer_tokens("") == []
    assert answer_tokens("the") == []


# ----------------------------------------------------------------------------- F1 / EM per pair


def test_f1_token_overlap():
    # pred [big, red, dog], gold [red, dog, barked]: 2 shared -> P = R = 2/3 -> F1 = 2/3
    assert f1_v1("the big red dog", "a red dog barked") == pytest.approx(2 / 3)
    assert f1_v2("the big red dog", "a red dog barked") == pytest.approx(2 / 3)
    # pred [dog, dog, dog], gold [dog, cat]: multiset overlap min(3, 1) = 1
    # P = 1/3, R = 1/2 -> F1 = 2 * (1/6) / (5/6) = 2/5
    assert f1_v1("dog dog dog", "dog cat") == pytest.approx(0.4)
    assert f1_v2("dog dog dog", "dog cat") == pytest.approx(0.4)
    # no shared token
    assert f1_v1("Paris", "London") == 0.0
    assert f1_v1("Denver Broncos", "denver broncos!") == 1.0


def test_v1_and_v2_differ_on_empty_answers():
    # both normalise to "": EM 1 in both; F1 0 in v1.1 (no shared token), 1 in v2.0
    assert exact_match_v1("", "") == 1.0 and f1_v1("", "") == 0.0
    assert exact_match_v2("", "") == 1.0 and f1_v2("", "") == 1.0
    assert exact_match_v1("the", "a") == 1.0 and f1_v1("the", "a") == 0.0
    assert f1_v2("the", "a") == 1.0
    # only one side empty: 0 in both
    assert f1_v2("Paris", "") == 0.0 and f1_v2("", "Paris") == 0.0
    assert f1_v1("Paris", "") == 0.0


def test_max_over_gold_answers():
    golds = ["Broncos", "the Denver Broncos team", "Carolina"]
    # pred [denver, broncos]
    # vs [broncos]: P = 1/2, R = 1 -> F1 = 2/3
    # vs [denver, broncos, team]: P = 1, R = 2/3 -> F1 = 0.8
    # vs [carolina]: 0
    assert score_question_v1("Denver Broncos", golds) == (0.0, pytest.approx(0.8))
    assert score_question_v2("Denver Broncos", golds) == (0.0, pytest.approx(0.8))
    assert score_question_v1("broncos", golds) == (1.0, 1.0)


def test_v2_gold_answers_drop_empty_normalisations():
    assert gold_answers_v2([]) == [""]
    assert gold_answers_v2(["The", "..."]) == [""]
    assert gold_answers_v2(["the", "Paris"]) == ["Paris"]
    # a gold "The" counts as no answer in v2.0: only an empty prediction matches it
    assert score_question_v2("", ["The"]) == (1.0, 1.0)
    assert score_question_v2("Paris", ["The"]) == (0.0, 0.0)
    # v1.1 keeps it: EM against "" is 1 for any article-only prediction, F1 is 0
    assert score_question_v1("a", ["The"]) == (1.0, 0.0)


# ----------------------------------------------------------------------------- v1.1 evaluation


def test_evaluate_v1_with_unanswered_question(caplog):
    dataset = make_dataset([("q1", ["Denver Broncos"]), ("q2", ["red dog barked"]), ("q3", ["x"])])
    predictions = {"q1": "denver broncos!", "q2": "big red dog", "other": "ignored"}
    with caplog.at_level(logging.WARNING):
        result = evaluate_v1(dataset, predictions)
    # q1: EM 1, F1 1; q2: EM 0, F1 2/3 (P = R = 2/3); q3 missing: 0 and 0; total 3
    assert result == {"exact_match": pytest.approx(100 / 3), "f1": pytest.approx(100 * (5 / 3) / 3)}
    assert "Unanswered question q3 will receive score 0." in caplog.text


def test_evaluate_v1_rejects_question_without_answers():
    with pytest.raises(SquadEvaluationError, match="q2 has no gold answer.*version 2.0"):
        evaluate_v1(make_dataset([("q1", ["a b"]), ("q2", [])]), {"q1": "a", "q2": ""})


def test_malformed_dataset_names_location():
    dataset = [{"paragraphs": [{"qas": [{"id": "q1", "answers": [{"text": "x"}]}, {"id": "q2"}]}]}]
    with pytest.raises(SquadEvaluationError, match=r"mine.json: data\[0\]\.paragraphs\[0\]\.qas\[1\] \(id q2\)"):
        evaluate_v1(dataset, {}, source="mine.json")
    with pytest.raises(SquadEvaluationError, match=r"data\[0\] has no 'paragraphs'"):
        evaluate_v2([{"title": "x"}], {})


# ----------------------------------------------------------------------------- v2.0 evaluation

# h1, h2 answerable; n1, n2 unanswerable.
V2_DATASET = make_dataset([("h1", ["Denver Broncos"]), ("h2", ["red dog barked"]), ("n1", []), ("n2", [])])
V2_PREDICTIONS = {"h1": "Denver Broncos", "h2": "big red dog", "n1": "", "n2": "Carolina"}
V2_NA_PROBS = {"h1": 0.1, "h2": 0.6, "n1": 0.3, "n2": 0.8}


def test_evaluate_v2_has_ans_no_ans_split():
    result = evaluate_v2(V2_DATASET, V2_PREDICTIONS)
    # raw (EM, F1): h1 (1, 1), h2 (0, 2/3), n1 (1, 1) [""==""], n2 (0, 0)
    assert list(result) == [
        "exact",
        "f1",
        "total",
        "HasAns_exact",
        "HasAns_f1",
        "HasAns_total",
        "NoAns_exact",
        "NoAns_f1",
        "NoAns_total",
    ]
    assert result["exact"] == pytest.approx(100 * 2 / 4)
    assert result["f1"] == pytest.approx(100 * (1 + 2 / 3 + 1 + 0) / 4)  # 66.67
    assert result["total"] == 4
    assert result["HasAns_exact"] == pytest.approx(50.0)
    assert result["HasAns_f1"] == pytest.approx(100 * (5 / 3) / 2)  # 83.33
    assert result["HasAns_total"] == 2
    assert (result["NoAns_exact"], result["NoAns_f1"], result["NoAns_total"]) == (50.0, 50.0, 2)


def test_evaluate_v2_with_na_probs_threshold_and_best_thresholds():
    result = evaluate_v2(V2_DATASET, V2_PREDICTIONS, V2_NA_PROBS, na_prob_thresh=0.5)
    # abstain where p > 0.5: h2 (answerable -> 0), n2 (unanswerable -> 1)
    # (EM, F1): h1 (1, 1), h2 (0, 0), n1 (1, 1), n2 (1, 1) -> 75 / 75
    assert result["exact"] == pytest.approx(75.0) and result["f1"] == pytest.approx(75.0)
    assert result["HasAns_exact"] == pytest.approx(50.0) and result["HasAns_f1"] == pytest.approx(50.0)
    assert result["NoAns_exact"] == pytest.approx(100.0) and result["NoAns_f1"] == pytest.approx(100.0)
    # best thresholds: start at #NoAns = 2 (abstain everywhere, threshold 0.0), then answer
    # in increasing p: h1 (0.1), n1 (0.3), h2 (0.6), n2 (0.8)
    # EM: 2 -> h1 +1 = 3 (best, 0.1) -> n1 "" +0 = 3 -> h2 +0 = 3 -> n2 "Carolina" -1 = 2
    assert result["best_exact"] == pytest.approx(100 * 3 / 4)
    assert result["best_exact_thresh"] == 0.1
    # F1: 2 -> h1 +1 = 3 (best, 0.1) -> n1 +0 = 3 -> h2 +2/3 = 11/3 (best, 0.6) -> n2 -1
    assert result["best_f1"] == pytest.approx(100 * (11 / 3) / 4)  # 91.67
    assert result["best_f1_thresh"] == 0.6
    assert list(result)[-4:] == ["best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh"]
    # the best F1 threshold reproduces best_f1 when applied
    at_best = evaluate_v2(V2_DATASET, V2_PREDICTIONS, V2_NA_PROBS, na_prob_thresh=0.6)
    assert at_best["f1"] == pytest.approx(result["best_f1"])


def test_default_threshold_is_strictly_greater():
    # p == 1.0 does not abstain with the default 1.0; p > thresh does
    na_probs = {"h1": 1.0, "h2": 1.0, "n1": 1.0, "n2": 1.0}
    assert evaluate_v2(V2_DATASET, V2_PREDICTIONS, na_probs)["exact"] == pytest.approx(50.0)
    # all abstain at 0.99: HasAns 0, NoAns 1 -> 50 / 50 as well, but F1 falls from 66.67 to 50
    assert evaluate_v2(V2_DATASET, V2_PREDICTIONS, na_probs, 0.99)["f1"] == pytest.approx(50.0)
    # without probabilities all are 0.0: a negative threshold abstains everywhere
    assert evaluate_v2(V2_DATASET, V2_PREDICTIONS, na_prob_thresh=-0.5)["HasAns_f1"] == 0.0


def test_find_best_threshold_tie_order_like_official():
    has_answer = {"h": True, "n": False}
    predictions = {"h": "right", "n": "wrong answer"}
    scores = {"h": 1.0, "n": 0.0}
    # start 1 (#NoAns). Order n, h: n -1 -> 0, h +1 -> 1, never > 1: (100 * 1/2, 0.0)
    assert find_best_threshold(predictions, scores, {"n": 0.5, "h": 0.5}, has_answer) == (50.0, 0.0)
    # order h, n: h +1 -> 2 (best, 0.5), n -1 -> 1: (100 * 2/2, 0.5), although answering both
    # at threshold 0.5 really scores 50 -- the official script's quirk, kept
    assert find_best_threshold(predictions, scores, {"h": 0.5, "n": 0.5}, has_answer) == (100.0, 0.5)


def test_find_best_threshold_counts_whitespace_prediction_as_answer():
    dataset = make_dataset([("h", ["x"]), ("n", []), ("h2", ["y"])])
    na_probs = {"h": 0.1, "n": 0.2, "h2": 0.3}
    # " " normalises to "" (EM 1 on n), but is a non-empty string for find_best_thresh:
    # 1 -> h +1 = 2 (best, 0.1) -> n -1 = 1 -> h2 +1 = 2 (not > 2): 100 * 2/3 at 0.1
    result = evaluate_v2(dataset, {"h": "x", "n": " ", "h2": "y"}, na_probs)
    assert result["exact"] == 100.0
    assert result["best_exact"] == pytest.approx(200 / 3) and result["best_exact_thresh"] == 0.1
    # with "" instead: 1 -> 2 (0.1) -> 2 -> 3 (best, 0.3): 100 at 0.3
    result = evaluate_v2(dataset, {"h": "x", "n": "", "h2": "y"}, na_probs)
    assert result["best_exact"] == 100.0 and result["best_exact_thresh"] == 0.3


def test_evaluate_v2_only_answerable_questions_has_no_noans_keys():
    result = evaluate_v2(make_dataset([("a", ["x"]), ("b", ["y z"])]), {"a": "x", "b": "y"})
    # a: 1/1; b: EM 0, F1 (P 1, R 1/2) = 2/3
    assert result == {
        "exact": 50.0,
        "f1": pytest.approx(100 * (5 / 3) / 2),
        "total": 2,
        "HasAns_exact": 50.0,
        "HasAns_f1": pytest.approx(100 * (5 / 3) / 2),
        "HasAns_total": 2,
    }


def test_evaluate_v2_missing_prediction_or_probability_is_an_error():
    predictions = dict(V2_PREDICTIONS)
    del predictions["n1"]
    with pytest.raises(SquadEvaluationError, match="preds.json: 1 of 4 questions have no prediction: n1"):
        evaluate_v2(V2_DATASET, predictions, predictions_source="preds.json")
    na_probs = dict(V2_NA_PROBS)
    del na_probs["h2"]
    with pytest.raises(SquadEvaluationError, match="no no-answer probability: h2"):
        evaluate_v2(V2_DATASET, V2_PREDICTIONS, na_probs)
    with pytest.raises(SquadEvaluationError, match="prediction for h1 is not a string"):
        evaluate_v2(V2_DATASET, {**V2_PREDICTIONS, "h1": 3})


# ----------------------------------------------------------------------------- allennlp metrics


def test_squad_v2_metric_matches_evaluate_v2_over_batches():
    metric = SquadV2Metrics(na_prob_thresh=0.5)
    golds = {"h1": ["Denver Broncos"], "h2": ["red dog barked"], "n1": [], "n2": []}
    order = ["h1", "h2", "n1", "n2"]
    metric(
        [V2_PREDICTIONS[q] for q in order[:3]],
        [golds[q] for q in order[:3]],
        torch.tensor([V2_NA_PROBS[q] for q in order[:3]]),
    )
    metric([V2_PREDICTIONS["n2"]], [golds["n2"]], [V2_NA_PROBS["n2"]])
    expected = evaluate_v2(V2_DATASET, V2_PREDICTIONS, V2_NA_PROBS, na_prob_thresh=0.5)
    got = metric.get_metric(reset=True)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value), key
    assert metric.get_metric() == {"exact": 0.0, "f1": 0.0, "total": 0}


def test_squad_v2_metric_without_scores_and_mixing_error():
    metric = SquadV2Metrics()
    metric(["Denver Broncos", "big red dog"], [["Denver Broncos"], ["red dog barked"]])
    metric(["", "Carolina"], [[], []])
    got = metric.get_metric()
    assert "best_f1" not in got
    assert got["f1"] == pytest.approx(100 * (8 / 3) / 4) and got["NoAns_exact"] == 50.0
    with pytest.raises(ValueError, match="every batch or for none"):
        metric(["x"], [["x"]], [0.3])


def test_squad_v2_metric_best_threshold_ties_follow_feeding_order():
    # the find_best_threshold tie case: h (answerable, right) and n (unanswerable, answered),
    # both with score 0.5; fed h first: 1 -> 2 (0.5) -> 1: best 100 at 0.5; fed n first: 50 at 0.0
    metric = SquadV2Metrics()
    metric(["right", "wrong answer"], [["right"], []], [0.5, 0.5])
    got = metric.get_metric(reset=True)
    assert (got["best_exact"], got["best_exact_thresh"]) == (100.0, 0.5)
    metric(["wrong answer", "right"], [[], ["right"]], [0.5, 0.5])
    got = metric.get_metric(reset=True)
    assert (got["best_exact"], got["best_exact_thresh"]) == (50.0, 0.0)
    # no improvement at all: the start (all abstain) with threshold 0.0
    metric(["wrong"], [["right"]], [0.2])
    assert metric.get_metric()["best_f1_thresh"] == 0.0


def test_squad_v1_metric():
    metric = SquadV1Metrics()
    metric(["denver broncos!"], [["Denver Broncos"]])
    metric(["big red dog", "Paris"], [["red dog barked"], ["London", "paris."]])
    # EM 1 + 0 + 1 over 3; F1 1 + 2/3 + 1 over 3
    got = metric.get_metric(reset=True)
    assert got == {"exact_match": pytest.approx(200 / 3), "f1": pytest.approx(100 * (8 / 3) / 3)}
    assert metric.get_metric() == {"exact_match": 0.0, "f1": 0.0}
    with pytest.raises(SquadEvaluationError, match="without gold answers"):
        metric(["x"], [[]])


def test_metrics_are_registered():
    from allennlp.training.metrics import Metric

    assert Metric.by_name("squad_metrics") is SquadV1Metrics
    assert Metric.by_name("squad_v2_metrics") is SquadV2Metrics


# ----------------------------------------------------------------------------- real SQuAD files


def _load(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)["data"]


def _questions(data):
    return [qa for article in data for p in article["paragraphs"] for qa in p["qas"]]


@pytest.mark.external_data
def test_squad11_tiny_gold_empty_and_partial(caplog):
    data = _load(require_external_data("qa", "squad11_tiny.json"))
    gold = {qa["id"]: qa["answers"][0]["text"] for qa in _questions(data)}
    assert len(gold) == 5
    assert evaluate_v1(data, gold) == {"exact_match": 100.0, "f1": 100.0}
    assert evaluate_v1(data, {q: "" for q in gold}) == {"exact_match": 0.0, "f1": 0.0}
    # gold "Father Julius Nieuwl" vs "Julius Nieuwl": P 1, R 2/3 -> F1 0.8; others exact
    partial = {**gold, "5733b1da4776f4190066106b": "Julius Nieuwl"}
    result = evaluate_v1(data, partial)
    assert result["exact_match"] == pytest.approx(80.0)
    assert result["f1"] == pytest.approx(100 * (4 + 0.8) / 5)
    missing = dict(gold)
    del missing["5733b1da4776f41900661068"]
    with caplog.at_level(logging.WARNING):
        assert evaluate_v1(data, missing) == {"exact_match": 80.0, "f1": 80.0}
    assert "Unanswered question 5733b1da4776f41900661068 will receive score 0." in caplog.text


@pytest.mark.external_data
def test_squad20_tiny_repeated_id_last_one_wins(caplog):
    data = _load(require_external_data("qa", "squad20_tiny.json"))
    questions = _questions(data)
    # the file has 6 questions, but the unanswerable one reuses the id of the next (answerable)
    # one: the official v2.0 script keys by id, so it scores 5 questions, all answerable
    assert len(questions) == 6 and len({qa["id"] for qa in questions}) == 5
    gold = {qa["id"]: (qa["answers"][0]["text"] if qa["answers"] else "") for qa in questions}
    with caplog.at_level(logging.WARNING):
        result = evaluate_v2(data, gold)
    assert result == {
        "exact": 100.0,
        "f1": 100.0,
        "total": 5,
        "HasAns_exact": 100.0,
        "HasAns_f1": 100.0,
        "HasAns_total": 5,
    }
    assert "1 question(s) repeat an earlier id" in caplog.text
    # an empty answer for every question: no answerable one is right
    assert evaluate_v2(data, {q: "" for q in gold})["exact"] == 0.0
    with pytest.raises(SquadEvaluationError, match="5733be284776f41900661182 has no gold answer"):
        evaluate_v1(data, gold)


@pytest.mark.external_data
def test_squad20_dev_part_gold_and_empty_predictions():
    data = _load(require_external_data("qa", "squad20_dev_part1.json"))
    questions = _questions(data)
    num_no_ans = sum(1 for qa in questions if not qa["answers"])
    num_has_ans = len(questions) - num_no_ans
    assert len({qa["id"] for qa in questions}) == len(questions) and num_no_ans > 0

    gold = {qa["id"]: (qa["answers"][0]["text"] if qa["answers"] else "") for qa in questions}
    result = evaluate_v2(data, gold)
    assert (result["exact"], result["f1"], result["total"]) == (100.0, 100.0, len(questions))
    assert (result["HasAns_total"], result["NoAns_total"]) == (num_has_ans, num_no_ans)

    # "" everywhere: right exactly on the unanswerable questions
    empty = evaluate_v2(data, {q: "" for q in gold})
    assert empty["exact"] == pytest.approx(100.0 * num_no_ans / len(questions))
    assert empty["f1"] == pytest.approx(empty["exact"])
    assert (empty["HasAns_exact"], empty["NoAns_exact"]) == (0.0, 100.0)

    # gold answers, but probability 1 on the unanswerable and 0 on the others: every
    # threshold in [0, 1) is optimal; the first strict improvement is at p = 0
    na_probs = {qa["id"]: (0.0 if qa["answers"] else 1.0) for qa in questions}
    best = evaluate_v2(data, gold, na_probs)
    assert (best["best_exact"], best["best_exact_thresh"]) == (100.0, 0.0)
