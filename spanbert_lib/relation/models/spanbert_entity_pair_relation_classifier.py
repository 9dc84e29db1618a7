"""
The ``spanbert_entity_pair_relation_classifier`` model: LUKE's relation classification (Yamada et al. 2020,
sec. 4.2) on the ``spanbert_tacred`` reader's output.

The sentence is read as it is (``entity_scheme: "plain"`` in the reader: ``subject_span`` and
``object_span`` are the mentions' own wordpieces) and two entities are added to the encoder input:
``ENTITY_HEAD`` at the subject mention and ``ENTITY_TAIL`` at the object mention. The relation is
classified from their final states:

    logits = Linear(Dropout([ e_head ; e_tail ]))                          (use_entities=True)
    logits = Linear(Dropout([ span(subject) ; span(object) ]))             (use_entities=False)

where ``span(.)`` is ``span_extractor`` over the word states (default ``span_boundary`` with
``boundaries="inside"``: first and last wordpiece of the mention). Cross-entropy over all labels
(``no_relation`` an ordinary class), the official TACRED micro P/R/F1 (``TacredF1``). Outputs
``logits``, ``probs`` and (human-readable) ``label`` as ``spanbert_relation_classifier``, so the
``spanbert_tacred`` / ``spanbert_relation_classifier`` predictors work with it unchanged.

The entity-marker schemes of the reader also work (the spans then cover the marker tokens), but the
encoder has no embeddings for marker ids: such configs need an encoder whose vocabulary has them.
"""

from typing import Any, Dict, List, Optional

import torch
from allennlp.common import Lazy
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules.span_extractors import SpanExtractor
from allennlp.nn import InitializerApplicator, util

from spanbert_lib.common.modules.entity_aware import ENTITY_HEAD, ENTITY_TAIL, EntityAwareEncoder, MentionFeatures
from spanbert_lib.relation.dataset_readers.tacred_schema import NO_RELATION
from spanbert_lib.relation.metrics.tacred_f1 import TacredF1
from spanbert_lib.relation.models.spanbert_relation_classifier import add_relation_labels, relation_outputs


@Model.register("spanbert_entity_pair_relation_classifier")
class SpanBertEntityPairRelationClassifier(Model):
    """
    Relation between a subject (head) and an object (tail) entity (module docstring).

    # Parameters

    vocab : relation labels in ``label_namespace``, ``negative_label`` among them.
    encoder : `EntityAwareEncoder`
        E.g. ``{"type": "entity_aware_transformer", "model_name": ...}`` (the default type).
    use_entities : `bool`, optional (default = `True`)
        Classify the head/tail entity states; False: span features of the two mentions.
    span_extractor : `SpanExtractor`, optional
        For ``use_entities=False``; built with ``input_dim`` = the encoder's output size;
        default ``span_boundary`` with ``boundaries="inside"``.
    dropout : `float`, optional (default = `0.1`)
    label_namespace, negative_label : where the relations are and the "no relation" label.
    """

    default_predictor = "spanbert_relation_classifier"

    def __init__(
        self,
        vocab: Vocabulary,
        encoder: EntityAwareEncoder,
        use_entities: bool = True,
        span_extractor: Optional[Lazy[SpanExtractor]] = None,
        dropout: float = 0.1,
        label_namespace: str = "labels",
        negative_label: str = NO_RELATION,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        num_labels = vocab.get_vocab_size(label_namespace)
        if num_labels < 2:
            raise ConfigurationError(
                f"entity_pair_relation_classifier: {num_labels} label(s) in vocabulary "
                f"namespace {label_namespace!r}; at least 2 are needed"
            )
        self.encoder = encoder
        self.use_entities = use_entities
        self.mention_features = MentionFeatures(
            encoder.get_output_dim(), [ENTITY_HEAD, ENTITY_TAIL], use_entities, span_extractor
        )
        self.dropout = torch.nn.Dropout(dropout)
        self.classifier = torch.nn.Linear(2 * self.mention_features.get_output_dim(), num_labels)
        self._label_namespace = label_namespace
        self._tacred = TacredF1(vocabulary=vocab, negative_label=negative_label, label_namespace=label_namespace)
        initializer(self)

    def _vocabulary_size(self) -> Optional[int]:
        embeddings = getattr(self.encoder, "word_embeddings", None)
        return None if embeddings is None else embeddings.num_embeddings

    def forward(
        self,
        tokens: TextFieldTensors,
        subject_span: torch.Tensor,
        object_span: torch.Tensor,
        label: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        tokens: wordpieces ``[B, L]``; subject_span, object_span: ``[B, 2]`` inclusive wordpiece
        spans; label: ``[B]`` relation ids. Returns ``logits`` and ``probs`` ``[B, num_labels]`` and,
        with labels, the mean ``loss``.
        """
        token_ids = util.get_token_ids_from_text_field_tensors(tokens)
        vocabulary_size = self._vocabulary_size()
        if vocabulary_size is not None and bool((token_ids >= vocabulary_size).any()):
            raise ConfigurationError(
                f"entity_pair_relation_classifier: wordpiece id {int(token_ids.max())} is outside the encoder's "
                f"{vocabulary_size} word embeddings - entity marker tokens? Use the tacred reader with "
                "entity_scheme 'plain' (the entities are given to the encoder as entity tokens)"
            )
        mentions = torch.stack([subject_span, object_span], dim=1)  # [B, 2, 2]
        features = self.mention_features(self.encoder, tokens, mentions).flatten(1)  # [B, 2D]
        logits = self.classifier(self.dropout(features))
        return relation_outputs(logits, label, self._tacred)

    def make_output_human_readable(self, output_dict: Dict[str, torch.Tensor]) -> Dict[str, Any]:
        return add_relation_labels(self.vocab, output_dict, self._label_namespace)

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return self._tacred.get_metric(reset)
