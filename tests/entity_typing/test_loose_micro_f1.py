"""The loose_micro_f1 metric on hand-computed examples."""

import pytest
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing import run_distributed_test
from allennlp.training.metrics import Metric

from spanbert_lib.entity_typing.metrics import LooseMicroF1

GOLD = torch.tensor([[1, 1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]])
LOGITS = torch.tensor([[2.0, -1.0, 0.5, -3.0], [-0.1, 0.2, -2.0, -1.0], [-1.0, -1.0, -0.5, -4.0]])
# predicted sets (logits > 0): {0, 2}, {1}, {} ; gold sets {0, 1}, {1}, {2}
# sum |P & G| = 1 + 1 + 0 = 2, sum |P| = 3, sum |G| = 4


def test_loose_micro_scores():
    metric = Metric.by_name("loose_micro_f1")()
    metric(LOGITS > 0, GOLD)
    scores = metric.get_metric()
    assert scores["precision"] == pytest.approx(2 / 3)
    assert scores["recall"] == pytest.approx(1 / 2)
    assert scores["f1"] == pytest.approx(4 / 7)


def test_mask_batches_and_reset():
    metric = LooseMicroF1()
    # without example 1: |P & G| = 1, |P| = 2, |G| = 3
    metric((LOGITS > 0).long(), GOLD, mask=torch.tensor([True, False, True]))
    assert metric.get_metric()["precision"] == pytest.approx(1 / 2)
    assert metric.get_metric()["recall"] == pytest.approx(1 / 3)
    assert metric.get_metric()["f1"] == pytest.approx(0.4)
    metric(LOGITS[1:2] > 0, GOLD[1:2].bool())  # adds 1, 1, 1
    assert metric.get_metric(reset=True)["f1"] == pytest.approx(4 / 7)
    assert metric.get_metric() == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    with pytest.raises(ConfigurationError, match="logits > 0"):
        metric(LOGITS, GOLD)
    with pytest.raises(ConfigurationError, match="same"):
        metric(LOGITS[:2] > 0, GOLD)


def _distributed_check(global_rank, world_size, gpu_id, predictions, gold):
    metric = LooseMicroF1()
    metric(predictions[global_rank], gold[global_rank])
    assert metric.get_metric()["f1"] == pytest.approx(4 / 7)


def test_distributed_counts_are_summed():
    predictions = LOGITS > 0
    run_distributed_test([-1, -1], _distributed_check, [predictions[:1], predictions[1:]], [GOLD[:1], GOLD[1:]])
