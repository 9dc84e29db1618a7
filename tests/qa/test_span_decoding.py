"""Answer decoding over windows on hand-made logits: n-best, max length, start <= end, passage only,
cross-window best, max-context starts, no-answer threshold."""

import math

import pytest
import torch
from allennlp.data import Vocabulary

from spanbert_lib.qa.models import SpanBertQuestionAnswering, null_scores, span_candidate_scores, top_spans
from tests import TINY_BERT_DIR

NEG = float("-inf")
CONTEXT = "aa bb cc dd"
# two windows of 6 positions: [CLS] p p p [SEP] q; window 0 holds passage tokens 0-2, window 1 tokens 1-3
CONTEXT_TOKEN_INDEX = torch.tensor([[[-1, 0, 1, 2, -1, -1], [-1, 1, 2, 3, -1, -1]]])
# max-context: tokens 0, 1 in window 0; tokens 2, 3 in window 1
MAX_CONTEXT = torch.tensor([[[0, 1, 1, 0, 0, 0], [0, 0, 1, 1, 0, 0]]], dtype=torch.bool)
OFFSETS = torch.tensor([[[0, 2], [3, 5], [6, 8], [9, 11]]])


def test_span_candidate_scores_by_hand():
    start = torch.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    end = torch.tensor([[[10.0, 20.0, 30.0, 40.0]]])
    start_mask = torch.tensor([[[False, True, True, True]]])
    end_mask = torch.tensor([[[False, True, True, False]]])
    scores = span_candidate_scores(start, end, start_mask, end_mask, max_answer_length=2)
    assert scores.shape == (1, 1, 4, 2)
    expected = [
        [NEG, NEG],  # start 0 not allowed
        [22.0, 32.0],  # (1,1), (1,2)
        [33.0, NEG],  # (2,2); end 3 not allowed
        [NEG, NEG],
    ]  # (3,3) end not allowed; (3,4) past the window
    assert scores[0, 0].tolist() == expected
    top = top_spans(scores, 3)
    top = top_spans(scores, 4)
    assert top.scores[0].tolist() == [33.0, 32.0, 22.0, NEG]
    assert list(zip(top.starts[0].tolist()[:3], top.ends[0].tolist()[:3])) == [(2, 2), (1, 2), (1, 1)]
    assert top.windows[0].tolist()[:3] == [0, 0, 0]
    # several windows: indices are per window
    two = span_candidate_scores(
        torch.cat([start, start + 100]).view(1, 2, 4),
        torch.cat([end, end]).view(1, 2, 4),
        start_mask.expand(1, 2, 4),
        end_mask.expand(1, 2, 4),
        max_answer_length=2,
    )
    top = top_spans(two, 2)
    assert top.scores[0].tolist() == [133.0, 132.0] and top.windows[0].tolist() == [1, 1]
    assert top.starts[0].tolist() == [2, 1] and top.ends[0].tolist() == [2, 2]


def test_null_score_is_the_minimum_over_real_windows():
    start = torch.tensor([[[2.0, 0.0], [1.0, 0.0], [-9.0, 0.0]]])
    end = torch.tensor([[[2.0, 0.0], [0.5, 0.0], [-9.0, 0.0]]])
    window_mask = torch.tensor([[True, True, False]])  # the third window is padding
    assert null_scores(start, end, window_mask).tolist() == [1.5]


@pytest.fixture(scope="module")
def model_factory():
    vocab = Vocabulary()

    def make(**kwargs):
        model = SpanBertQuestionAnswering(vocab, str(TINY_BERT_DIR), **kwargs)
        return model.eval()

    return make


def decode(model, start, end, context=CONTEXT):
    """start, end: lists of two windows x 6 positions."""
    start = torch.tensor([start], dtype=torch.float)
    end = torch.tensor([end], dtype=torch.float)
    return model.decode(
        start,
        end,
        torch.ones(1, 2, dtype=torch.bool),
        CONTEXT_TOKEN_INDEX >= 0,
        MAX_CONTEXT,
        CONTEXT_TOKEN_INDEX,
        OFFSETS,
        [{"id": "q", "context": context, "answers": None}],
    )


ZERO = [0.0] * 6


def test_max_answer_length_and_start_before_end(model_factory):
    start = [[0, 5, -5, -5, 0, 0], ZERO]
    end = [[0, 0, 1, 7, 0, 0], ZERO]
    long_enough = decode(model_factory(max_answer_length=3, only_max_context_starts=False), start, end)
    assert long_enough["best_span_str"] == ["aa bb cc"] and long_enough["best_span_scores"].tolist() == [12.0]
    assert long_enough["best_span"].tolist() == [[0, 8]]
    too_long = decode(model_factory(max_answer_length=2, only_max_context_starts=False), start, end)
    assert too_long["best_span_str"] == ["aa bb"] and too_long["best_span_scores"].tolist() == [6.0]
    # the highest start after the highest end: (3, 1) is not a span
    reversed_output = decode(
        model_factory(only_max_context_starts=False), [[0, 0, 0, 9, 0, 0], ZERO], [[0, 9, 0, 1, 0, 0], ZERO]
    )
    assert reversed_output["best_span_str"] == ["cc"] and reversed_output["best_span_scores"].tolist() == [10.0]


def test_question_and_special_positions_are_never_answers(model_factory):
    start = [[30, 0, 1, 0, 20, 20], ZERO]
    end = [[30, 0, 1, 0, 20, 20], ZERO]
    output = decode(model_factory(only_max_context_starts=False), start, end)
    assert output["best_span_str"] == ["bb"] and output["best_span_scores"].tolist() == [2.0]
    assert output["null_scores"].tolist() == [0.0]  # min over windows of start[0] + end[0]: window 1


def test_best_span_across_windows(model_factory):
    output = decode(model_factory(), [ZERO, [0, 0, 0, 3, 0, 0]], [ZERO, [0, 0, 0, 3, 0, 0]])
    assert output["best_span_str"] == ["dd"] and output["best_span"].tolist() == [[9, 11]]
    assert output["n_best"][0][0]["window"] == 1


def test_max_context_starts(model_factory):
    # window 0 position 3 is token 2, whose max-context window is window 1
    start = [[0, 1, 0, 10, 0, 0], [0, 0, 1, 0, 0, 0]]
    end = [[0, 0, 0, 10, 0, 0], [0, 0, 1, 0, 0, 0]]
    restricted = decode(model_factory(), start, end)
    assert restricted["best_span_str"] == ["aa bb cc"] and restricted["best_span_scores"].tolist() == [11.0]
    free = decode(model_factory(only_max_context_starts=False), start, end)
    assert free["best_span_str"] == ["cc"] and free["best_span_scores"].tolist() == [20.0]


def test_n_best_is_distinct_sorted_and_normalised(model_factory):
    # "cc" scores 8 in window 0 and 10 in window 1: listed once, with 10
    start = [[0, 0, 0, 4, 0, 0], [0, 0, 5, 0, 0, 0]]
    end = [[0, 0, 0, 4, 0, 0], [0, 0, 5, 0, 0, 0]]
    output = decode(model_factory(n_best_size=4, max_answer_length=2, only_max_context_starts=False), start, end)
    n_best = output["n_best"][0]
    assert len(n_best) == 4
    assert n_best[0] == {
        "text": "cc",
        "start": 6,
        "end": 8,
        "score": 10.0,
        "window": 1,
        "probability": pytest.approx(n_best[0]["probability"]),
    }
    spans = [(c["start"], c["end"]) for c in n_best]
    assert len(set(spans)) == 4
    scores = [c["score"] for c in n_best]
    assert scores == sorted(scores, reverse=True)
    # then "bb cc" and "cc dd" (5 in window 1; "bb cc" scores only 4 in window 0), then a span scoring 0
    assert scores[1:] == [5.0, 5.0, 0.0]
    assert {c["text"] for c in n_best[1:3]} == {"bb cc", "cc dd"}
    total = sum(math.exp(s) for s in scores)
    assert [c["probability"] for c in n_best] == pytest.approx([math.exp(s) / total for s in scores])


@pytest.mark.parametrize("threshold, expected", [(None, "dd"), (0.5, "dd"), (0.49, ""), (-10.0, "")])
def test_no_answer_threshold(model_factory, threshold, expected):
    # null: window 0: 2 + 2 = 4, window 1: 1 + 0.5 = 1.5 -> 1.5; best span "dd" = 0.5 + 0.5 = 1.0
    start = [[2, 0, 0, 0, 0, 0], [1, 0, 0, 0.5, 0, 0]]
    end = [[2, 0, 0, 0, 0, 0], [0.5, 0, 0, 0.5, 0, 0]]
    output = decode(model_factory(null_score_threshold=threshold), start, end)
    assert output["null_scores"].tolist() == [1.5] and output["best_span_scores"].tolist() == [1.0]
    assert output["no_answer_scores"].tolist() == [0.5]
    assert output["best_span_str"] == [expected] and output["best_non_null_span_str"] == ["dd"]
    assert output["best_span"].tolist() == ([[9, 11]] if expected else [[-1, -1]])
