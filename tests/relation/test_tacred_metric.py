"""
TACRED micro P/R/F1 as in the official scorer; every expected value is counted by hand.
"""

import json

import pytest
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data.vocabulary import Vocabulary
from allennlp.training.metrics import Metric

from spanbert_lib.relation.metrics.tacred_f1 import TacredF1, micro_scores, tacred_score
from tests import require_external_data

NO = "no_relation"


def test_mixed_case_by_hand():
    gold = ["per:title", "per:title", "org:founded", NO, "per:age"]
    pred = ["per:title", "org:founded", "org:founded", NO, NO]
    # guessed (pred != NO): 0, 1, 2 -> 3; gold (gold != NO): 0, 1, 2, 4 -> 4
    # correct (pred == gold != NO): 0, 2 -> 2
    # P = 2/3, R = 2/4, F1 = 2 * (1/3) / (7/6) = 4/7; accuracy: 0, 2, 3 equal -> 3/5
    assert tacred_score(gold, pred) == {
        "precision": pytest.approx(2 / 3),
        "recall": 0.5,
        "f1": pytest.approx(4 / 7),
        "accuracy": pytest.approx(0.6),
    }


def test_confusion_between_two_positive_relations():
    # each example is a false positive for its guess and a false negative for its gold
    gold = ["per:title", "org:founded", NO]
    pred = ["org:founded", "per:title", NO]
    # guessed 2, gold 2, correct 0 -> P 0, R 0, F1 0; accuracy 1/3 (the no_relation pair)
    assert tacred_score(gold, pred) == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "accuracy": pytest.approx(1 / 3)}


def test_only_no_relation_predictions():
    # nothing guessed: the scorer's precision is 1.0; recall 0/2 = 0; F1 0 (P + R = 1 > 0 but R = 0)
    assert tacred_score(["per:title", NO, "org:founded"], [NO, NO, NO]) == {
        "precision": 1.0,
        "recall": 0.0,
        "f1": 0.0,
        "accuracy": pytest.approx(1 / 3),
    }


def test_zero_denominators():
    # no gold relation, nothing guessed: P 1.0 (default), R 0.0 (default), F1 0
    assert micro_scores(0, 0, 0) == {"precision": 1.0, "recall": 0.0, "f1": 0.0}
    # no gold relation, one wrong guess: P 0/1, R 0.0 (default), F1 0 (P + R = 0)
    assert tacred_score([NO, NO], ["per:age", NO])["precision"] == 0.0
    # perfect: P = R = F1 = 1
    assert micro_scores(3, 3, 3) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    # custom negative label
    assert tacred_score(["Other", "A"], ["A", "A"], no_relation="Other")["precision"] == 0.5
    with pytest.raises(ValueError, match="2 gold labels but 1 predictions"):
        tacred_score([NO, NO], [NO])


def label_vocabulary():
    vocab = Vocabulary()
    # no_relation deliberately not at index 0
    for label in ["per:title", NO, "org:founded", "per:age"]:
        vocab.add_token_to_namespace(label, namespace="labels")
    return vocab


def one_hot_logits(ids, num_labels=4):
    logits = torch.full((len(ids), num_labels), -1.0)
    logits[torch.arange(len(ids)), torch.tensor(ids)] = 2.0
    return logits


def test_metric_matches_string_scorer_over_batches_with_mask():
    vocab = label_vocabulary()
    index = vocab.get_token_index
    metric = TacredF1(vocabulary=vocab)
    gold = ["per:title", "per:title", "org:founded", NO, "per:age"]
    pred = ["per:title", "org:founded", "org:founded", NO, NO]
    gold_ids = [index(g, "labels") for g in gold]
    pred_ids = [index(p, "labels") for p in pred]
    # batch 1: logits for the first 3, plus a padded example (masked out) that would be correct
    metric(
        one_hot_logits(pred_ids[:3] + [0]).requires_grad_(),
        torch.tensor(gold_ids[:3] + [0]),
        torch.tensor([True, True, True, False]),
    )
    # batch 2: label ids
    metric(torch.tensor(pred_ids[3:]), torch.tensor(gold_ids[3:]))
    got = metric.get_metric(reset=True)
    expected = tacred_score(gold, pred)
    assert got.keys() == expected.keys()
    for key in expected:
        assert got[key] == pytest.approx(expected[key]), key
    # after reset: nothing seen
    assert metric.get_metric() == {"precision": 1.0, "recall": 0.0, "f1": 0.0, "accuracy": 0.0}


def test_metric_with_index_and_registered():
    metric = Metric.by_name("tacred_f1")(negative_label_index=0)
    # gold [1, 2, 0], guess [2, 1, 0] with no_relation = 0: a confusion, F1 0, accuracy 1/3
    metric(torch.tensor([2, 1, 0]), torch.tensor([1, 2, 0]))
    assert metric.get_metric() == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "accuracy": pytest.approx(1 / 3)}
    # only no_relation guessed (index 0)
    metric.reset()
    metric(one_hot_logits([0, 0], num_labels=3), torch.tensor([1, 0]))
    assert metric.get_metric() == {"precision": 1.0, "recall": 0.0, "f1": 0.0, "accuracy": 0.5}


def test_metric_configuration_and_shape_errors():
    with pytest.raises(ConfigurationError, match="needs negative_label_index or a vocabulary"):
        TacredF1()
    with pytest.raises(ConfigurationError, match="'Other' is not in vocabulary namespace 'labels'"):
        TacredF1(vocabulary=label_vocabulary(), negative_label="Other")
    with pytest.raises(ConfigurationError, match="not both"):
        TacredF1(negative_label_index=1, vocabulary=label_vocabulary())
    metric = TacredF1(negative_label_index=0)
    with pytest.raises(ConfigurationError, match="a gold label id is >= 3"):
        metric(torch.zeros(2, 3), torch.tensor([0, 3]))
    with pytest.raises(ConfigurationError, match="do not match"):
        metric(torch.zeros(2, 3, 4), torch.tensor([0, 1]))
    with pytest.raises(ConfigurationError, match="must be integer label ids"):
        metric(torch.tensor([0.0, 1.0]), torch.tensor([0, 1]))


@pytest.mark.external_data
def test_tacred_sample_gold_and_all_negative():
    path = require_external_data("relation", "tacred_sample", "dev.json")
    with open(path, encoding="utf-8") as handle:
        gold = [example["relation"] for example in json.load(handle)]
    num_positive = sum(1 for label in gold if label != NO)
    assert num_positive > 0
    assert tacred_score(gold, gold) == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "accuracy": 1.0}
    all_negative = tacred_score(gold, [NO] * len(gold))
    assert all_negative == {
        "precision": 1.0,
        "recall": 0.0,
        "f1": 0.0,
        "accuracy": pytest.approx((len(gold) - num_positive) / len(gold)),
    }
