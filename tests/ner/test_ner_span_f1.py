"""The ner_span_f1 metric: hand-computed exact-match scores, and BIO input read as conlleval does."""

import pytest
import torch
from allennlp.common.testing import run_distributed_test
from allennlp.training.metrics import Metric

from spanbert_lib.ner.dataset_readers import tags_to_entities
from spanbert_lib.ner.metrics import NerSpanF1

GOLD = [[(0, 0, "PER"), (2, 2, "LOC")], [(0, 1, "PER"), (3, 3, "PER"), (4, 4, "ORG")]]
PREDICTED = [[(0, 0, "PER"), (2, 2, "ORG")], [(0, 1, "PER"), (3, 4, "PER")]]


def test_micro_and_per_label_scores():
    metric = Metric.by_name("ner_span_f1")()
    metric(PREDICTED, GOLD)
    scores = metric.get_metric()
    # correct: (0,0,PER) and (0,1,PER); 4 predicted, 5 gold
    assert scores["precision"] == pytest.approx(2 / 4)
    assert scores["recall"] == pytest.approx(2 / 5)
    assert scores["f1"] == pytest.approx(2 * 0.5 * 0.4 / 0.9)
    # PER: 2 correct of 3 predicted ((3,4) has wrong boundaries) and 3 gold
    assert scores["precision-PER"] == pytest.approx(2 / 3) and scores["recall-PER"] == pytest.approx(2 / 3)
    assert scores["f1-PER"] == pytest.approx(2 / 3)
    # LOC predicted as ORG: counts against both
    assert (scores["precision-LOC"], scores["recall-LOC"], scores["f1-LOC"]) == (0.0, 0.0, 0.0)
    assert (scores["precision-ORG"], scores["recall-ORG"], scores["f1-ORG"]) == (0.0, 0.0, 0.0)
    assert set(scores) == {f"{m}{s}" for m in ("precision", "recall", "f1") for s in ("", "-PER", "-LOC", "-ORG")}


def test_accumulates_until_reset():
    metric = NerSpanF1()
    metric(PREDICTED[:1], GOLD[:1])
    metric(PREDICTED[1:], GOLD[1:])
    assert metric.get_metric(reset=True)["f1"] == pytest.approx(2 * 0.5 * 0.4 / 0.9)
    assert metric.get_metric() == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    metric([[(0, 0, "PER"), (0, 0, "PER")]], [[(0, 0, "PER")]])  # a repeated prediction counts once
    assert metric.get_metric() == {
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "precision-PER": 1.0,
        "recall-PER": 1.0,
        "f1-PER": 1.0,
    }
    with pytest.raises(ValueError, match="2 predicted sentences but 1 gold"):
        metric([[], []], [[]])


def test_bio_sequences_scored_with_conlleval_semantics():
    gold = [
        tags_to_entities(["B-PER", "I-PER", "O", "B-LOC"]),  # (0,1,PER) (3,3,LOC)
        tags_to_entities(["I-ORG", "I-ORG", "B-ORG", "O"]),
    ]  # IOB1: (0,1,ORG) (2,2,ORG)
    predicted = [
        # I after O starts an entity: (0,1,PER) correct; (3,3,ORG) has the wrong type
        tags_to_entities(["I-PER", "I-PER", "O", "I-ORG"]),
        # type switch inside a run: (0,0,ORG) (1,1,PER) wrong; the IOB2 spelling (2,2,ORG) correct
        tags_to_entities(["B-ORG", "I-PER", "B-ORG", "O"]),
    ]
    assert predicted == [[(0, 1, "PER"), (3, 3, "ORG")], [(0, 0, "ORG"), (1, 1, "PER"), (2, 2, "ORG")]]
    metric = NerSpanF1()
    metric(predicted, gold)
    scores = metric.get_metric()
    # 2 correct of 5 predicted and 4 gold
    assert scores["precision"] == pytest.approx(0.4) and scores["recall"] == pytest.approx(0.5)
    assert scores["f1"] == pytest.approx(2 * 0.4 * 0.5 / 0.9)
    # ORG: 1 correct of 3 predicted, 2 gold; PER: 1 of 2 predicted, 1 gold
    assert scores["precision-ORG"] == pytest.approx(1 / 3) and scores["recall-ORG"] == pytest.approx(0.5)
    assert scores["precision-PER"] == pytest.approx(0.5) and scores["recall-PER"] == pytest.approx(1.0)
    assert scores["recall-LOC"] == 0.0


def _distributed_check(global_rank, world_size, gpu_id, predicted, gold):
    metric = NerSpanF1()
    metric(predicted[global_rank], gold[global_rank])
    scores = metric.get_metric()
    assert scores["precision"] == pytest.approx(0.5) and scores["recall"] == pytest.approx(0.4)
    assert scores["f1-PER"] == pytest.approx(2 / 3)


def test_distributed_counts_are_summed_over_workers():
    # worker 0 sees sentence 0, worker 1 sentence 1; both must report the totals of the first test
    run_distributed_test([-1, -1], _distributed_check, [PREDICTED[:1], PREDICTED[1:]], [GOLD[:1], GOLD[1:]])
    assert torch.distributed.is_available()
