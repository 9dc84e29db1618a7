"""
Loose micro precision / recall / F1 of entity typing (Ling & Weld 2012; the Open Entity numbers
of Choi et al. 2018, ERNIE, LUKE), over examples i with predicted type set P_i and gold set G_i:

    precision = sum_i |P_i & G_i| / sum_i |P_i|      recall = sum_i |P_i & G_i| / sum_i |G_i|
    F1 = 2 P R / (P + R)

Fractions in [0, 1]; 0 when a denominator (or P + R) is 0.

Shapes: `B` examples in a batch, `L` labels (types).
"""

from typing import Dict, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics.metric import Metric


def _as_multi_hot(tensor: torch.Tensor, name: str) -> torch.Tensor:
    if tensor.dtype == torch.bool:
        return tensor
    if not ((tensor == 0) | (tensor == 1)).all():
        raise ConfigurationError(f"loose_micro_f1: {name} must be multi-hot (0/1 or bool); for logits pass logits > 0")
    return tensor != 0


@Metric.register("loose_micro_f1")
class LooseMicroF1(Metric):
    """
    Loose micro P/R/F1 (module docstring), accumulated over batches.

    ``get_metric`` returns ``precision``, ``recall``, ``f1``. Distributed: the counts are summed
    over workers.
    """

    supports_distributed = True

    def __init__(self) -> None:
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
            `[B, L]` multi-hot predicted types (bool or 0/1; e.g. ``logits > 0``).
        gold_labels : `torch.Tensor`
            `[B, L]` multi-hot gold types (e.g. the ``labels`` field).
        mask : `torch.BoolTensor`, optional (default = `None`)
            `[B]`; False: example ignored.
        """
        predictions, gold_labels = self.detach_tensors(predictions, gold_labels)
        mask = None if mask is None else mask.detach()
        if predictions.shape != gold_labels.shape or predictions.dim() < 2:
            raise ConfigurationError(
                f"loose_micro_f1: predictions {tuple(predictions.shape)} and gold labels "
                f"{tuple(gold_labels.shape)} must have the same (batch_size, num_labels) shape"
            )
        predicted = _as_multi_hot(predictions, "predictions")
        gold = _as_multi_hot(gold_labels, "gold_labels")
        if mask is not None:
            keep = mask.bool().unsqueeze(-1)
            predicted, gold = predicted & keep, gold & keep
        self._counts += torch.stack([(predicted & gold).sum(), predicted.sum(), gold.sum()]).long().cpu()

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        correct, predicted, gold = dist_reduce_sum(self._counts).tolist()
        precision = correct / predicted if predicted else 0.0
        recall = correct / gold if gold else 0.0
        f1 = 2.0 * precision * recall / (precision + recall) if precision + recall > 0.0 else 0.0
        if reset:
            self.reset()
        return {"precision": precision, "recall": recall, "f1": f1}

    def reset(self) -> None:
        # sum |P & G|, sum |P|, sum |G|
        self._counts = torch.zeros(3, dtype=torch.long)
