"""
TACRED micro precision / recall / F1 with the semantics of the official scorer
(``score()`` in ``utils/scorer.py`` of the TACRED release, Zhang et al. 2017):

* guessed = predictions that are not ``no_relation``;
* gold    = gold labels that are not ``no_relation``;
* correct = examples with prediction == gold and prediction != ``no_relation``;
* precision = correct / guessed, or **1.0 when nothing was guessed**;
* recall    = correct / gold, or **0.0 when there is no gold relation**;
* F1 = 2PR / (P + R), or **0.0 when P + R == 0**.

So a system that always predicts ``no_relation`` gets P = 1.0, R = 0.0, F1 = 0.0. (SpanBERT's
``run_tacred.py`` returns P = R = F1 = 0 whenever nothing is correct; only the precision of an
empty guess set differs, and F1 is the same in every case.) Values are fractions in [0, 1],
as the scorer returns them. Accuracy (over all examples, ``no_relation`` included) is added.

Shapes: `B` examples in a batch, `...` any further dimensions, `L` labels.
"""

from typing import Dict, Optional, Sequence

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data.vocabulary import Vocabulary
from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics.metric import Metric

from spanbert_lib.relation.dataset_readers.tacred_schema import NO_RELATION


def micro_scores(num_correct: int, num_guessed: int, num_gold: int) -> Dict[str, float]:
    """
    Micro scores from the three counts, with the scorer's zero cases.

    # Parameters

    num_correct : `int`
        Correct relation predictions.
    num_guessed : `int`
        Predictions that are not ``no_relation``.
    num_gold : `int`
        Gold labels that are not ``no_relation``.

    # Returns

    `Dict[str, float]`
        ``{"precision", "recall", "f1"}``.
    """
    precision = num_correct / num_guessed if num_guessed > 0 else 1.0
    recall = num_correct / num_gold if num_gold > 0 else 0.0
    f1 = 2.0 * precision * recall / (precision + recall) if precision + recall > 0.0 else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def tacred_score(
    gold_labels: Sequence[str], predicted_labels: Sequence[str], no_relation: str = NO_RELATION
) -> Dict[str, float]:
    """
    The official scorer on label strings.

    # Parameters

    gold_labels : `Sequence[str]`
        The gold label of each example.
    predicted_labels : `Sequence[str]`
        The predicted label of each example, aligned with ``gold_labels``.
    no_relation : `str`, optional (default = `NO_RELATION`)
        The negative label.

    # Returns

    `Dict[str, float]`
        ``{"precision", "recall", "f1", "accuracy"}``.
    """
    if len(gold_labels) != len(predicted_labels):
        raise ValueError(f"{len(gold_labels)} gold labels but {len(predicted_labels)} predictions")
    num_correct = sum(1 for g, p in zip(gold_labels, predicted_labels) if g == p and p != no_relation)
    num_guessed = sum(1 for p in predicted_labels if p != no_relation)
    num_gold = sum(1 for g in gold_labels if g != no_relation)
    scores = micro_scores(num_correct, num_guessed, num_gold)
    num_equal = sum(1 for g, p in zip(gold_labels, predicted_labels) if g == p)
    scores["accuracy"] = num_equal / len(gold_labels) if gold_labels else 0.0
    return scores


@Metric.register("tacred_f1")
class TacredF1(Metric):
    """
    The official TACRED micro P/R/F1 (module docstring) plus accuracy, accumulated over batches.

    Give the index of ``no_relation`` directly (``negative_label_index``) or through a
    ``vocabulary`` and label name (``negative_label`` in ``label_namespace``), not both.
    ``get_metric`` returns ``{"precision", "recall", "f1", "accuracy"}`` as fractions.

    # Parameters

    negative_label_index : `int`, optional (default = `None`)
        Index of ``no_relation``.
    vocabulary : `Vocabulary`, optional (default = `None`)
        Where to look ``negative_label`` up when no index is given.
    negative_label : `str`, optional (default = `NO_RELATION`)
        The negative label's name.
    label_namespace : `str`, optional (default = `"labels"`)
        The vocabulary namespace of the labels.
    """

    supports_distributed = True

    def __init__(
        self,
        negative_label_index: Optional[int] = None,
        vocabulary: Optional[Vocabulary] = None,
        negative_label: str = NO_RELATION,
        label_namespace: str = "labels",
    ) -> None:
        if negative_label_index is None:
            if vocabulary is None:
                raise ConfigurationError(
                    "TacredF1 needs negative_label_index or a vocabulary to look up "
                    f"{negative_label!r} in namespace {label_namespace!r}"
                )
            labels = vocabulary.get_token_to_index_vocabulary(label_namespace)
            if negative_label not in labels:
                raise ConfigurationError(
                    f"TacredF1: label {negative_label!r} is not in vocabulary namespace "
                    f"{label_namespace!r} ({len(labels)} labels)"
                )
            negative_label_index = labels[negative_label]
        elif vocabulary is not None:
            raise ConfigurationError("TacredF1: give negative_label_index or a vocabulary, not both")
        if negative_label_index < 0:
            raise ConfigurationError(f"TacredF1: negative_label_index must be >= 0, got {negative_label_index}")
        self._negative = negative_label_index
        self.reset()

    def __call__(
        self,
        predictions: torch.Tensor,
        gold_labels: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
    ) -> None:
        """
        Adds a batch to the counts.

        # Parameters

        predictions : `torch.Tensor`
            Logits/probabilities `[B, ..., L]` (argmax taken), or label ids of the same shape as
            ``gold_labels``.
        gold_labels : `torch.Tensor`
            `[B, ...]` label ids.
        mask : `torch.BoolTensor`, optional (default = `None`)
            `[B, ...]`; examples where it is False are ignored.
        """
        predictions, gold_labels = self.detach_tensors(predictions, gold_labels)
        mask = None if mask is None else mask.detach()
        if predictions.dim() == gold_labels.dim() + 1:
            if predictions.size(-1) <= self._negative:
                raise ConfigurationError(
                    f"TacredF1: {predictions.size(-1)} label scores but the no_relation index is {self._negative}"
                )
            if (gold_labels >= predictions.size(-1)).any():
                raise ConfigurationError(
                    f"TacredF1: a gold label id is >= {predictions.size(-1)}, the number of label scores"
                )
            guesses = predictions.argmax(dim=-1)
        elif predictions.shape == gold_labels.shape:
            if predictions.is_floating_point():
                raise ConfigurationError(
                    "TacredF1: predictions with the shape of gold_labels must be integer label ids, got floats"
                )
            guesses = predictions
        else:
            raise ConfigurationError(
                f"TacredF1: predictions of shape {tuple(predictions.shape)} do not match "
                f"gold labels of shape {tuple(gold_labels.shape)}"
            )
        gold = gold_labels.long()
        guesses = guesses.long()
        keep = torch.ones_like(gold, dtype=torch.bool) if mask is None else mask.bool()

        guessed = (guesses != self._negative) & keep
        counts = torch.stack(
            [
                (guessed & (guesses == gold)).sum(),
                guessed.sum(),
                ((gold != self._negative) & keep).sum(),
                ((guesses == gold) & keep).sum(),
                keep.sum(),
            ]
        )
        self._counts += counts.cpu()

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        num_correct, num_guessed, num_gold, num_equal, num_total = dist_reduce_sum(self._counts).tolist()
        scores = micro_scores(num_correct, num_guessed, num_gold)
        scores["accuracy"] = num_equal / num_total if num_total > 0 else 0.0
        if reset:
            self.reset()
        return scores

    def reset(self) -> None:
        # correct, guessed, gold, equal (accuracy numerator), total
        self._counts = torch.zeros(5, dtype=torch.long)
