"""The SpanBERT relation classifier (section 4.1): encoder, dropout, linear layer over [CLS] or the entity starts."""

from typing import Any, Dict, List, Optional, cast

import torch
import torch.nn.functional as F
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import TextFieldEmbedder
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import batched_index_select
from allennlp.training.metrics import Metric

from spanbert_lib.relation.dataset_readers.tacred_schema import NO_RELATION
from spanbert_lib.relation.metrics.tacred_f1 import TacredF1
from spanbert_lib.relation.models.entity_marker_embedder import EntityMarkerAwareEmbedder

POOLINGS = ("cls", "entity_start")


def relation_outputs(logits: torch.Tensor, label: Optional[torch.Tensor], tacred: TacredF1) -> Dict[str, torch.Tensor]:
    """``logits`` [B, num_labels] -> ``{"logits", "probs"}``, plus the mean cross-entropy ``loss`` and an
    update of ``spanbert_tacred`` when gold ``label`` [B] is given."""
    output: Dict[str, torch.Tensor] = {"logits": logits, "probs": F.softmax(logits, dim=-1)}
    if label is not None:
        output["loss"] = F.cross_entropy(logits, label.long())
        tacred(logits, label)
    return output


def add_relation_labels(vocab: Vocabulary, output_dict: Dict[str, Any], label_namespace: str) -> Dict[str, Any]:
    """Adds ``label``: the name of the most probable relation (``probs`` ``[B, num_labels]``) of every example."""
    predicted = output_dict["probs"].argmax(dim=-1).tolist()
    output_dict["label"] = [vocab.get_token_from_index(i, namespace=label_namespace) for i in predicted]
    return output_dict


@Model.register("spanbert_relation_classifier")
class SpanBertRelationClassifier(Model):
    """
    Relation classification over one sentence with a marked subject and object (from the
    ``spanbert_tacred`` or ``spanbert_semeval2010_task8`` reader). Dropout, then one linear layer;
    cross-entropy over all labels, ``negative_label`` being an ordinary class.

    # Parameters

    vocab : `Vocabulary`
        Holds the labels in ``label_namespace``.
    encoder : `TextFieldEmbedder`
        Encodes the sentence to `[B, P, H]` (batch, wordpieces, hidden); must contain an
        ``entity_marker_aware`` token embedder, so that the marker tokens have embedding rows.
    pooling : `str`, optional (default = `"cls"`)
        ``"cls"`` (the paper) classifies the final ``[CLS]`` vector; ``"entity_start"`` the
        concatenated vectors at the first wordpiece of the subject and object spans (the
        ``[SUBJ-*]`` / ``[OBJ-*]`` markers in the marker schemes).
    dropout : `float`, optional (default = `0.1`)
    label_namespace : `str`, optional (default = `"labels"`)
    negative_label : `str`, optional (default = `"no_relation"`)
        The label TACRED's micro P / R / F1 ignore (SemEval: ``"Other"``).
    initializer : `InitializerApplicator`, optional
    metrics : `Dict[str, Metric]`, optional (default = `None`)
        Besides TACRED micro precision / recall / F1 and accuracy
        (:class:`~spanbert_lib.relation.metrics.tacred_f1.TacredF1`): name -> ``Metric`` called
        with ``(logits, label)``, e.g. ``{"semeval": {"type": "semeval2010_macro_f1"}}``; a
        metric returning a number is reported under its name, one returning a dict under the
        dict's keys (``macro_f1``, ...).
    """

    def __init__(
        self,
        vocab: Vocabulary,
        encoder: TextFieldEmbedder,
        pooling: str = "cls",
        dropout: float = 0.1,
        label_namespace: str = "labels",
        negative_label: str = NO_RELATION,
        initializer: InitializerApplicator = InitializerApplicator(),
        metrics: Optional[Dict[str, Metric]] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        if pooling not in POOLINGS:
            raise ConfigurationError(
                f"spanbert_relation_classifier: unknown pooling {pooling!r}; choose one of {', '.join(POOLINGS)}"
            )
        if not any(isinstance(module, EntityMarkerAwareEmbedder) for module in encoder.modules()):
            raise ConfigurationError(
                "spanbert_relation_classifier: encoder needs an "
                "'entity_marker_aware' token embedder so that the entity marker tokens "
                "have embeddings"
            )
        self.encoder = encoder
        self._pooling = pooling
        self._label_namespace = label_namespace
        num_labels = vocab.get_vocab_size(label_namespace)
        if num_labels < 2:
            raise ConfigurationError(
                f"spanbert_relation_classifier: {num_labels} label(s) in vocabulary "
                f"namespace {label_namespace!r}; at least 2 are needed"
            )
        input_dim = encoder.get_output_dim() * (2 if pooling == "entity_start" else 1)
        self._dropout = torch.nn.Dropout(dropout)
        self._classifier = torch.nn.Linear(input_dim, num_labels)
        self._tacred = TacredF1(vocabulary=vocab, negative_label=negative_label, label_namespace=label_namespace)
        self._metrics = dict(metrics or {})
        initializer(self)

    def forward(
        self,
        tokens: TextFieldTensors,
        subject_span: Optional[torch.Tensor] = None,
        object_span: Optional[torch.Tensor] = None,
        label: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        # Parameters

        tokens : `TextFieldTensors`
            Wordpieces `[B, P]` with ``[CLS]`` first.
        subject_span, object_span : `torch.LongTensor`, optional
            `[B, 2]` inclusive wordpiece spans; needed for ``entity_start`` pooling.
        label : `torch.LongTensor`, optional
            `[B]` relation ids.
        metadata : `List[Dict[str, Any]]`, optional
            The reader's per-example metadata (unused by the model).

        # Returns

        `Dict[str, torch.Tensor]`
            ``logits`` and ``probs`` `[B, C]` (`C` labels) and, with labels, the mean ``loss``.
        """
        encoded = self.encoder(tokens)  # [B, P, H] (batch, wordpieces, hidden)
        if self._pooling == "cls":
            pooled = encoded[:, 0]
        else:
            if subject_span is None or object_span is None:
                raise ConfigurationError(
                    "spanbert_relation_classifier: entity_start pooling needs subject_span and object_span"
                )
            starts = torch.stack([subject_span[:, 0], object_span[:, 0]], dim=1)  # [B, 2]
            pooled = batched_index_select(encoded, cast(torch.LongTensor, starts)).flatten(1)  # [B, 2H]
        logits = self._classifier(self._dropout(pooled))
        if label is not None:
            for metric in self._metrics.values():
                metric(logits, label)  # type: ignore[call-arg]  # why: allennlp's Metric.__call__ has no mask default
        return relation_outputs(logits, label, self._tacred)

    def make_output_human_readable(self, output_dict: Dict[str, torch.Tensor]) -> Dict[str, Any]:
        return add_relation_labels(self.vocab, output_dict, self._label_namespace)

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        results = self._tacred.get_metric(reset)
        for name, metric in self._metrics.items():
            value = metric.get_metric(reset)
            values = value if isinstance(value, dict) else {name: value}
            clashes = set(values) & set(results)
            if clashes:
                raise ConfigurationError(
                    f"spanbert_relation_classifier: metric {name!r} reports "
                    f"{', '.join(sorted(clashes))}, which another metric reports too"
                )
            results.update(values)
        return results

    default_predictor = "spanbert_relation_classifier"
