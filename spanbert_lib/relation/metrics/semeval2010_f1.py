"""
The official score of SemEval-2010 Task 8, as ``semeval2010_task8_scorer-v1.2.pl`` computes it:
"(9+1)-way evaluation taking directionality into account", macro-averaged F1 excluding ``Other``.

For each of the 9 relations R (direction dropped) that occurs in the gold labels:

* correct(R)   = examples whose gold relation is R and whose predicted label equals the gold
  label, direction included;
* predicted(R) = examples predicted as R in either direction - a prediction with the right
  relation but the wrong direction (the scorer's ``xDIRx`` column) counts here, as a wrong one;
* gold(R)      = examples whose gold relation is R, either direction;
* P = correct / predicted (0 when nothing was predicted as R), R = correct / gold,
  F1 = 2PR / (P + R) (0 when P + R = 0).

The official score is the mean F1 over the relations other than ``Other`` that occur in the gold
labels (a relation never in the gold labels is left out of the average, as in the scorer; with
none the score is 0). The scorer prints percentages; these functions return fractions in [0, 1].

Shapes: `B` examples in a batch, `L` directed labels (``num_labels``), `R` relations with the
direction dropped (``num_relations``).
"""

from typing import Dict, List, Optional, Sequence

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data.vocabulary import Vocabulary
from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics.metric import Metric

from spanbert_lib.relation.dataset_readers.semeval2010_schema import OTHER, SEMEVAL2010_RELATIONS, split_label


def official_scores_from_confusion(
    confusion: torch.Tensor, relation_of_label: Sequence[int], num_relations: int
) -> Dict[str, float]:
    """
    The scorer's macro P/R/F1 from a confusion matrix over directed labels.

    # Parameters

    confusion : `torch.Tensor`
        `[L, L]` counts, gold label in rows, predicted label in columns.
    relation_of_label : `Sequence[int]`
        `[L]` for every label, the index of its relation (direction dropped) in ``[0, R)``, or
        -1 for ``Other``.
    num_relations : `int`
        Number of relations `R`.

    # Returns

    `Dict[str, float]`
        ``{"macro_precision", "macro_recall", "macro_f1"}`` (fractions).
    """
    confusion = confusion.double()
    relation_ids = torch.as_tensor(relation_of_label, dtype=torch.long)
    is_relation = relation_ids >= 0
    # label -> relation one-hot [L, R]; Other rows stay zero
    to_relation = torch.zeros(len(relation_ids), num_relations, dtype=torch.double)
    to_relation[is_relation.nonzero().squeeze(1), relation_ids[is_relation]] = 1.0
    correct = confusion.diagonal() @ to_relation  # [R]
    predicted = confusion.sum(dim=0) @ to_relation
    gold = confusion.sum(dim=1) @ to_relation
    precision = torch.where(predicted > 0, correct / predicted.clamp(min=1), torch.zeros_like(correct))
    recall = torch.where(gold > 0, correct / gold.clamp(min=1), torch.zeros_like(correct))
    total = precision + recall
    f1 = torch.where(total > 0, 2 * precision * recall / total.clamp(min=1e-12), torch.zeros_like(correct))
    in_gold = gold > 0
    if not bool(in_gold.any()):
        return {"macro_precision": 0.0, "macro_recall": 0.0, "macro_f1": 0.0}
    return {
        "macro_precision": precision[in_gold].mean().item(),
        "macro_recall": recall[in_gold].mean().item(),
        "macro_f1": f1[in_gold].mean().item(),
    }


def _relation_indices(labels: Sequence[str]) -> List[int]:
    """The index in :data:`SEMEVAL2010_RELATIONS` of each label's relation, -1 for ``Other``."""
    indices = []
    for label in labels:
        relation, _ = split_label(label)
        indices.append(-1 if relation == OTHER else SEMEVAL2010_RELATIONS.index(relation))
    return indices


def semeval2010_official_score(gold_labels: Sequence[str], predicted_labels: Sequence[str]) -> Dict[str, float]:
    """
    The official score on label strings. Raises ``ValueError`` for a label that is not one of
    the task's 19.

    # Parameters

    gold_labels : `Sequence[str]`
        The gold label of each example.
    predicted_labels : `Sequence[str]`
        The predicted label of each example, aligned with ``gold_labels``.

    # Returns

    `Dict[str, float]`
        ``{"macro_precision", "macro_recall", "macro_f1"}`` as fractions.
    """
    if len(gold_labels) != len(predicted_labels):
        raise ValueError(f"{len(gold_labels)} gold labels but {len(predicted_labels)} predictions")
    labels = sorted(set(gold_labels) | set(predicted_labels))
    index = {label: i for i, label in enumerate(labels)}
    confusion = torch.zeros(len(labels), len(labels), dtype=torch.long)
    for gold, predicted in zip(gold_labels, predicted_labels):
        confusion[index[gold], index[predicted]] += 1
    return official_scores_from_confusion(confusion, _relation_indices(labels), len(SEMEVAL2010_RELATIONS))


@Metric.register("semeval2010_macro_f1")
class SemEval2010MacroF1(Metric):
    """
    The official SemEval-2010 Task 8 score (module docstring) accumulated over batches: a
    confusion matrix over the directed labels of ``label_namespace``, from which
    ``get_metric`` returns ``{"macro_precision", "macro_recall", "macro_f1"}`` (fractions).

    Every label of the namespace must be ``Other`` or one of the 18 directed relation labels.

    # Parameters

    vocab : `Vocabulary`
        The model's vocabulary (given by allennlp when the metric is built inside a model).
    label_namespace : `str`, optional (default = `"labels"`)
        Where the labels are.
    """

    supports_distributed = True

    def __init__(self, vocab: Vocabulary, label_namespace: str = "labels") -> None:
        labels = [vocab.get_token_from_index(i, label_namespace) for i in range(vocab.get_vocab_size(label_namespace))]
        try:
            self._relation_of_label = _relation_indices(labels)
        except ValueError as error:
            raise ConfigurationError(
                f"semeval2010_macro_f1: vocabulary namespace {label_namespace!r} holds a "
                f"label that is not SemEval-2010 Task 8's: {error}"
            ) from None
        self._num_labels = len(labels)
        self.reset()

    def __call__(
        self,
        predictions: torch.Tensor,
        gold_labels: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
    ) -> None:
        """
        Adds a batch to the confusion matrix.

        # Parameters

        predictions : `torch.Tensor`
            Logits or probabilities `[B, L]` (argmax taken), or label ids `[B]`.
        gold_labels : `torch.Tensor`
            `[B]` label ids.
        mask : `torch.BoolTensor`, optional (default = `None`)
            `[B]`; examples where it is False are ignored.
        """
        predictions, gold_labels = self.detach_tensors(predictions, gold_labels)
        mask = None if mask is None else mask.detach()
        if predictions.dim() == gold_labels.dim() + 1:
            predictions = predictions.argmax(dim=-1)
        gold = gold_labels.reshape(-1).long()
        predicted = predictions.reshape(-1).long()
        if mask is not None:
            keep = mask.reshape(-1).bool()
            gold, predicted = gold[keep], predicted[keep]
        pairs = torch.bincount(gold * self._num_labels + predicted, minlength=self._num_labels**2)
        confusion = pairs.reshape(self._num_labels, self._num_labels).cpu()
        self._confusion += dist_reduce_sum(confusion)

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        scores = official_scores_from_confusion(self._confusion, self._relation_of_label, len(SEMEVAL2010_RELATIONS))
        if reset:
            self.reset()
        return scores

    def reset(self) -> None:
        self._confusion = torch.zeros(self._num_labels, self._num_labels, dtype=torch.long)
