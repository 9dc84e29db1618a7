"""
An ``allennlp evaluate --predictions-output-file`` serializer that writes one JSON line per example
instead of allennlp's default one line per batch.
"""

import json
from typing import Any, Callable, Dict, List, Optional

import torch
from allennlp.common.util import sanitize
from allennlp.data import DataLoader
from allennlp.evaluation.serializers.serializers import Serializer


def _batch_size(batch: Dict[str, Any]) -> int:
    for value in batch.values():
        if isinstance(value, torch.Tensor) and value.dim() > 0:
            return value.size(0)
        if isinstance(value, dict):
            size = _batch_size(value)
            if size >= 0:
                return size
        if isinstance(value, list):
            return len(value)
    return -1


@Serializer.register("per_instance")
class PerInstanceSerializer(Serializer):
    """
    Writes, for each example of a batch, one JSON object holding every entry of the model's
    human-readable output that has one value per example (``label``, ``probs``, ``logits``, ...;
    batch-level values such as ``loss`` are left out) and, when the batch has ``metadata`` with an
    ``id``, that ``id`` first. Use it from a training config::

        evaluation: { batch_serializer: { type: "per_instance" } }
    """

    def _to_params(self) -> Dict[str, Any]:
        return {"type": "per_instance"}

    def __call__(
        self,
        batch: Dict[str, Any],
        output_dict: Dict,
        data_loader: DataLoader,
        output_postprocess_function: Optional[Callable] = None,
    ) -> str:
        """
        The JSON lines of one batch.

        # Parameters

        batch : `Dict[str, Any]`
            The batch the model was given.
        output_dict : `Dict`
            The model's output for it.
        data_loader : `DataLoader`
            The data loader (unused; part of allennlp's ``Serializer`` interface).
        output_postprocess_function : `Callable`, optional (default = `None`)
            Applied to ``output_dict`` first (e.g. ``make_output_human_readable``).

        # Returns

        `str`
            One JSON object per example, joined with newlines.
        """
        if output_postprocess_function is not None:
            output_dict = output_postprocess_function(output_dict)
        size = _batch_size(batch)
        per_example = {
            key: value
            for key, value in output_dict.items()
            if (isinstance(value, list) and len(value) == size)
            or (isinstance(value, torch.Tensor) and value.dim() > 0 and value.size(0) == size)
        }
        metadata = batch.get("metadata")
        lines: List[str] = []
        for i in range(size):
            example: Dict[str, Any] = {}
            if isinstance(metadata, list) and isinstance(metadata[i], dict) and "id" in metadata[i]:
                example["id"] = metadata[i]["id"]
            example.update({key: value[i] for key, value in per_example.items()})
            lines.append(json.dumps(sanitize(example)))
        return "\n".join(lines)
