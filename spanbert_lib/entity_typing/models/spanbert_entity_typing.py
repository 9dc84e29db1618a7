"""
The ``spanbert_entity_typing`` model: LUKE's entity typing (Yamada et al. 2020, sec. 4.1) on the output of
the ``spanbert_open_entity`` reader.

One ``ENTITY_MASK`` entity is added to the encoder input with the mention as its span; its final
state is classified into every type independently:

    logits = Linear(Dropout(e_mention))                    (use_entities=True, LUKE)
    logits = Linear(Dropout(span(mention)))                (use_entities=False)

where ``span(.)`` is ``span_extractor`` over the word states (default ``span_boundary`` with
``boundaries="inside"``: the mention's first and last wordpiece). Loss: binary cross-entropy with
logits, averaged over examples and types. A type is predicted when its logit exceeds
``threshold`` (default 0, i.e. probability 0.5), scored with the loose micro P/R/F1 of
``loose_micro_f1``.
"""

from typing import Any, Dict, List, Optional

import torch
import torch.nn.functional as F
from allennlp.common import Lazy
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules.span_extractors import SpanExtractor
from allennlp.nn import InitializerApplicator

from spanbert_lib.common.modules.entity_aware import ENTITY_MASK, EntityAwareEncoder, MentionFeatures
from spanbert_lib.entity_typing.metrics import LooseMicroF1


@Model.register("spanbert_entity_typing")
class SpanBertEntityTyping(Model):
    """
    Multi-label typing of one mention per sentence (module docstring).

    # Parameters

    vocab : the types in ``label_namespace``.
    encoder : `EntityAwareEncoder`
        E.g. ``{"type": "entity_aware_transformer", "model_name": ...}`` (the default type).
    use_entities : `bool`, optional (default = `True`)
        Classify the mention's ``ENTITY_MASK`` entity state; False: its span features.
    span_extractor : `SpanExtractor`, optional
        For ``use_entities=False``; built with ``input_dim`` = the encoder's output size;
        default ``span_boundary`` with ``boundaries="inside"``.
    dropout : `float`, optional (default = `0.1`)
    threshold : `float`, optional (default = `0.0`)
        A type is predicted when its logit is greater.
    label_namespace : `str`, optional (default = `"labels"`)
    """

    default_predictor = "spanbert_entity_typing"

    def __init__(
        self,
        vocab: Vocabulary,
        encoder: EntityAwareEncoder,
        use_entities: bool = True,
        span_extractor: Optional[Lazy[SpanExtractor]] = None,
        dropout: float = 0.1,
        threshold: float = 0.0,
        label_namespace: str = "labels",
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        num_labels = vocab.get_vocab_size(label_namespace)
        if num_labels < 1:
            raise ConfigurationError(f"entity_typing: no labels in vocabulary namespace {label_namespace!r}")
        self.encoder = encoder
        self.use_entities = use_entities
        self.mention_features = MentionFeatures(encoder.get_output_dim(), [ENTITY_MASK], use_entities, span_extractor)
        self.dropout = torch.nn.Dropout(dropout)
        self.classifier = torch.nn.Linear(self.mention_features.get_output_dim(), num_labels)
        self.threshold = threshold
        self._label_namespace = label_namespace
        self._metric = LooseMicroF1()
        initializer(self)

    def forward(
        self,
        tokens: TextFieldTensors,
        mention_span: torch.Tensor,
        labels: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        tokens: wordpieces ``[B, L]``; mention_span: ``[B, 2]`` inclusive wordpiece span; labels:
        multi-hot ``[B, num_labels]``. Returns ``logits`` and ``probs`` (sigmoid) ``[B, num_labels]``,
        ``predicted`` (bool, logit > threshold) and, with labels, the mean BCE ``loss``.
        """
        features = self.mention_features(self.encoder, tokens, mention_span.unsqueeze(1))[:, 0]  # [B, D]
        logits = self.classifier(self.dropout(features))
        predicted = logits > self.threshold
        output: Dict[str, torch.Tensor] = {"logits": logits, "probs": torch.sigmoid(logits), "predicted": predicted}
        if labels is not None:
            output["loss"] = F.binary_cross_entropy_with_logits(logits, labels.to(logits.dtype))
            self._metric(predicted, labels)
        return output

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Adds ``types``: the names of the predicted types of every example, most probable first."""
        names = self.vocab.get_index_to_token_vocabulary(self._label_namespace)
        types = []
        for probs, predicted in zip(output_dict["probs"].tolist(), output_dict["predicted"].tolist()):
            chosen = sorted((i for i, flag in enumerate(predicted) if flag), key=lambda i: -probs[i])
            types.append([names[i] for i in chosen])
        output_dict["types"] = types
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return self._metric.get_metric(reset)
