"""
The ``spanbert_span_ner`` model: span-based NER (LUKE, Yamada et al. 2020, sec. 4.3) on the output of the
``spanbert_span_ner_conll`` / ``spanbert_span_ner_litbank`` readers.

Every candidate span (all spans of up to ``max_span_width`` words of a sentence) is classified
into an entity type or the non-entity label ``"O"``:

    features(span) = [ x_first ; x_last ; e_span ]      (use_entities=True, LUKE)
    features(span) = [ x_first ; x_last ]               (use_entities=False, plain SpanBERT-style)
    logits         = Linear(Dropout(features))           over all labels, "O" included

``x_first``/``x_last`` come from ``span_extractor`` (default: the library's ``span_boundary``
extractor with ``boundaries="inside"``, i.e. the first and last wordpiece of the span) over the
encoder's word states; ``e_span`` is the state of one ``ENTITY_MASK`` entity whose mention is the
span. The spans of an instance are encoded in passes of at most ``max_entities_per_pass``
entities, each pass with its own copy of the words (see
:mod:`~spanbert_lib.ner.models.span_chunks`); the word features of a span come from the same pass
as its entity. Without entities there is one pass over the words.

Training: cross-entropy over the real (unpadded) spans; optionally (``negative_spans_per_instance``,
off by default, not in LUKE) only over the gold entity spans and a fresh random sample of the
non-entity spans of each instance, which makes a training step much cheaper (each kept span is
an entity token of the encoder) - used to fit CPU budgets; ``hard_negative_spans_per_instance`` adds
non-entity spans that overlap a gold entity (a boundary off by a word, a part of a name, a name with
its neighbour), the mistakes a model trained on random negatives makes most. Prediction: each span's most probable
label and its probability; :mod:`~spanbert_lib.ner.decoding` (``decoding="flat"`` for CoNLL-2003,
``"nested"`` for LitBank) turns them into word-level entities, scored against the readers'
``gold_entities`` with ``ner_span_f1`` (exact match, micro P/R/F1; per-label values when the
metrics are reset, i.e. at the end of an epoch).
"""

from typing import Any, Dict, List, Optional

import numpy as np
import torch
import torch.nn.functional as F
from allennlp.common import Lazy
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules.span_extractors import SpanExtractor
from allennlp.nn import InitializerApplicator

from spanbert_lib.common.modules.entity_aware import ENTITY_MASK, ENTITY_PAD, EntityAwareEncoder
from spanbert_lib.common.modules.span_inputs import default_span_extractor, wordpiece_inputs
from spanbert_lib.ner.decoding import decode_flat, decode_nested
from spanbert_lib.ner.metrics import NerSpanF1
from spanbert_lib.ner.models.span_chunks import SpanChunkLayout

DECODINGS = {"flat": decode_flat, "nested": decode_nested}


def first_rows(spans: np.ndarray, found: np.ndarray) -> np.ndarray:
    """
    Where some spans first occur among others, by sorting and binary search (no `[F, S]` table,
    which a long sentence with many entities would make huge).

    # Parameters

    spans : `np.ndarray`
        `[S, 2]` inclusive word offsets.
    found : `np.ndarray`
        `[F, 2]` spans each among ``spans``.

    # Returns

    `np.ndarray`
        `[F]` the first row of ``spans`` equal to each row of ``found``.
    """
    low = int(spans.min())
    size = int(spans.max()) - low + 1
    keys = (spans[:, 0] - low) * size + (spans[:, 1] - low)  # [S] one number per distinct span
    order = np.argsort(keys, kind="stable")  # [S] equal spans keep their order: the first comes first
    found_keys = (found[:, 0] - low) * size + (found[:, 1] - low)  # [F]
    return order[np.searchsorted(keys[order], found_keys)]


def random_subset(candidates: torch.Tensor, size: int) -> torch.Tensor:
    """``[B, S]`` bool: up to ``size`` of each row's ``candidates`` (``[B, S]`` bool), chosen at random."""
    noise = torch.rand(candidates.shape, device=candidates.device).masked_fill(~candidates, 2.0)
    rank = noise.argsort(dim=1).argsort(dim=1)  # candidates first, in random order
    return candidates & (rank < size)


def overlaps_marked_spans(spans: torch.Tensor, marked: torch.Tensor) -> torch.Tensor:
    """
    ``[B, S]`` bool: whether each span shares a position with a ``marked`` span of its instance.

    spans: ``[B, S, 2]`` inclusive positions (``-1`` padding); marked: ``[B, S]`` bool. By prefix sums
    over positions (``[B, P]``), not an ``[S, S]`` table.
    """
    batch, _ = marked.shape
    positions = int(spans.max().clamp(min=0)) + 2
    starts, ends = spans[..., 0].clamp(min=0), spans[..., 1].clamp(min=0)
    boundaries = torch.zeros((batch, positions + 1), dtype=torch.long, device=spans.device)
    weight = marked.long()
    boundaries.scatter_add_(1, starts, weight)  # +1 where a marked span starts,
    boundaries.scatter_add_(1, ends + 1, -weight)  # -1 after it ends
    covered = (boundaries.cumsum(dim=1) > 0).long()  # [B, P + 1] position inside some marked span
    prefix = torch.cat([covered.new_zeros((batch, 1)), covered.cumsum(dim=1)], dim=1)  # [B, P + 2]
    inside = prefix.gather(1, ends + 1) - prefix.gather(1, starts)  # covered positions within each span
    return (inside > 0) & (spans[..., 0] >= 0)


@Model.register("spanbert_span_ner")
class SpanBertSpanNer(Model):
    """
    Span classification NER (module docstring).

    # Parameters

    vocab : labels in ``label_namespace``, ``outside_label`` among them.
    encoder : `EntityAwareEncoder`
        E.g. ``{"type": "entity_aware_transformer", "model_name": ...}`` (the default type).
    use_entities : `bool`, optional (default = `True`)
        One ``ENTITY_MASK`` entity per span (LUKE); False: word features only, one pass.
    max_entities_per_pass : `int`, optional (default = `128`)
        Most entities (spans) encoded together with one copy of the words.
    span_extractor : `SpanExtractor`, optional
        Word features of a span, built with ``input_dim`` = the encoder's output size (give it
        without ``input_dim``); default ``span_boundary`` with ``boundaries="inside"``.
    dropout : `float`, optional (default = `0.1`)
    decoding : `str`, optional (default = `"flat"`)
        ``"flat"`` (no overlapping entities) or ``"nested"`` (nesting, no crossing).
    negative_spans_per_instance : `int`, optional (default = `None`)
        Training only: encode and score every gold entity span but only this many randomly
        chosen non-entity spans of each instance (all when it has fewer); None: all spans, as
        LUKE. Training batches then report no precision/recall/F1 (the decoded candidates would
        be a sample); evaluation and prediction always use every span.
    hard_negative_spans_per_instance : `int`, optional (default = `0`)
        Training only, with ``negative_spans_per_instance``: also keep up to this many randomly chosen
        non-entity spans that overlap a gold entity span of the instance (share at least one
        wordpiece with it), on top of the random negatives, which are then drawn from the other
        non-entity spans.
    correct_sampled_prior : `bool`, optional (default = `False`)
        With ``negative_spans_per_instance``: outside training, add ``log(max(S / n, 1))`` to each
        span's non-entity logit, ``S`` the instance's candidate spans and ``n`` the negatives kept per
        instance in training. Training saw only about ``n / S`` of the non-entity spans, so its
        non-entity prior is that much too low and the model over-predicts entities; the shift is the
        Bayes correction for that sampling rate (nearly every candidate is a non-entity), fixed by the
        training recipe, nothing fitted. Changes prediction only: a trained model can take it at
        ``evaluate`` / ``predict`` time (``-o '{"model.correct_sampled_prior": true}'``).
    outside_logit_bias : `float`, optional (default = `0.0`)
        Outside training, added to every span's non-entity logit (after ``correct_sampled_prior``):
        a span is then an entity only where its best entity logit beats the non-entity logit by more
        than this, so a positive value trades recall for precision. Changes prediction only; choose it
        on held-out documents with ``allennlp ner-outside-bias`` and give it to a trained model at
        ``evaluate`` / ``predict`` time (``-o '{"model.outside_logit_bias": 1.5}'``).
    label_namespace, outside_label : where the labels are and the non-entity label.
    """

    default_predictor = "spanbert_span_ner"

    def __init__(
        self,
        vocab: Vocabulary,
        encoder: EntityAwareEncoder,
        use_entities: bool = True,
        max_entities_per_pass: int = 128,
        span_extractor: Optional[Lazy[SpanExtractor]] = None,
        dropout: float = 0.1,
        decoding: str = "flat",
        negative_spans_per_instance: Optional[int] = None,
        hard_negative_spans_per_instance: int = 0,
        correct_sampled_prior: bool = False,
        outside_logit_bias: float = 0.0,
        label_namespace: str = "labels",
        outside_label: str = "O",
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        if decoding not in DECODINGS:
            raise ConfigurationError(f"span_ner: unknown decoding {decoding!r}; choose one of {', '.join(DECODINGS)}")
        if max_entities_per_pass < 1:
            raise ConfigurationError(f"span_ner: max_entities_per_pass must be positive, got {max_entities_per_pass}")
        if negative_spans_per_instance is not None and negative_spans_per_instance < 0:
            raise ConfigurationError(
                f"span_ner: negative_spans_per_instance must be >= 0 or null, got {negative_spans_per_instance}"
            )
        if hard_negative_spans_per_instance < 0:
            raise ConfigurationError(
                f"span_ner: hard_negative_spans_per_instance must be >= 0, got {hard_negative_spans_per_instance}"
            )
        if hard_negative_spans_per_instance and negative_spans_per_instance is None:
            raise ConfigurationError(
                "span_ner: hard_negative_spans_per_instance needs negative_spans_per_instance "
                "(without it every span is trained on)"
            )
        labels = vocab.get_token_to_index_vocabulary(label_namespace)
        if outside_label not in labels:
            raise ConfigurationError(
                f"span_ner: the non-entity label {outside_label!r} is not in vocabulary "
                f"namespace {label_namespace!r} ({len(labels)} labels)"
            )
        self.encoder = encoder
        self.use_entities = use_entities
        self.max_entities_per_pass = max_entities_per_pass
        self.negative_spans_per_instance = negative_spans_per_instance
        self.hard_negative_spans_per_instance = hard_negative_spans_per_instance
        self.correct_sampled_prior = correct_sampled_prior
        self.outside_logit_bias = float(outside_logit_bias)
        hidden = encoder.get_output_dim()
        self.span_extractor = default_span_extractor(hidden, span_extractor)
        feature_dim = self.span_extractor.get_output_dim() + (hidden if use_entities else 0)
        self.dropout = torch.nn.Dropout(dropout)
        self.classifier = torch.nn.Linear(feature_dim, len(labels))
        self.outside_index = labels[outside_label]
        self._label_names = vocab.get_index_to_token_vocabulary(label_namespace)
        self._decode = DECODINGS[decoding]
        self._metric = NerSpanF1()
        initializer(self)

    def span_features(self, tokens: TextFieldTensors, spans: torch.Tensor) -> torch.Tensor:
        """
        tokens: wordpieces ``[B, L]``; spans: LongTensor ``[B, S, 2]`` inclusive wordpiece positions,
        ``-1`` at padding -> FloatTensor ``[B, S, D]`` (zeros at padded spans).
        """
        token_ids, mask, type_ids = wordpiece_inputs(tokens)
        span_mask = spans[..., 0] >= 0
        spans = spans.clamp(min=0)
        if not self.use_entities:
            word_states, _ = self.encoder(token_ids, mask, type_ids)
            return self.span_extractor(word_states, spans, mask, span_mask)
        layout = SpanChunkLayout(span_mask, self.max_entities_per_pass)
        if layout.num_rows == 0:
            return spans.new_zeros((*span_mask.shape, self.classifier.in_features), dtype=torch.float)
        rows = layout.row_instance
        row_spans = layout.pack(spans, 0)  # [R, P, 2]
        row_mask = layout.slot_mask()  # [R, P]
        entity_ids = torch.full_like(row_mask, ENTITY_MASK, dtype=torch.long).masked_fill(~row_mask, ENTITY_PAD)
        word_states, entity_states = self.encoder(
            token_ids[rows],
            mask[rows],
            None if type_ids is None else type_ids[rows],
            entity_ids=entity_ids,
            entity_spans=row_spans,
            entity_mask=row_mask,
        )  # [R, L, H], [R, P, H]
        word_features = self.span_extractor(word_states, row_spans, mask[rows], row_mask)
        return layout.unpack(torch.cat([word_features, entity_states], dim=-1))  # [B, S, D]

    def forward(
        self,
        tokens: TextFieldTensors,
        spans: torch.Tensor,
        span_labels: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        """
        tokens: wordpieces ``[B, L]``; spans: ``[B, S, 2]`` (``-1`` padding); span_labels: ``[B, S]``.

        Returns ``logits`` / ``probs`` ``[B, S, num_labels]``, ``span_mask`` ``[B, S]``,
        ``predicted_labels`` / ``predicted_scores`` ``[B, S]`` and, with labels, the mean ``loss``
        over real spans (in training with ``negative_spans_per_instance``: over the sampled spans, which
        the outputs then describe). With ``metadata`` (word spans from the reader) also ``entities`` (per
        instance, decoded ``(start, end, label)`` word spans), ``entity_scores`` and ``words``.
        """
        sampled = self.training and span_labels is not None and self.negative_spans_per_instance is not None
        if sampled and span_labels is not None:  # (sampled implies labels)
            spans, span_labels = self.sample_training_spans(spans, span_labels)
        span_mask = spans[..., 0] >= 0
        logits = self.classifier(self.dropout(self.span_features(tokens, spans)))  # [B, S, K]
        if not self.training:
            logits = self.with_prediction_shifts(logits, span_mask)
        probs = F.softmax(logits, dim=-1)
        scores, predicted = probs.max(dim=-1)
        output: Dict[str, Any] = {
            "logits": logits,
            "probs": probs,
            "span_mask": span_mask,
            "predicted_labels": predicted,
            "predicted_scores": scores,
        }
        if span_labels is not None:
            if bool(span_mask.any()):
                output["loss"] = F.cross_entropy(logits[span_mask], span_labels[span_mask].long())
            else:
                output["loss"] = logits.sum() * 0.0
        if metadata is not None and not sampled:
            entities, entity_scores = self.decode(metadata, predicted, scores)
            output["entities"] = entities
            output["entity_scores"] = entity_scores
            output["words"] = [item["words"] for item in metadata]
            gold = [item.get("gold_entities") for item in metadata]
            if all(sentence is not None for sentence in gold):
                self._metric(entities, gold)
        return output

    def with_prediction_shifts(self, logits: torch.Tensor, span_mask: torch.Tensor) -> torch.Tensor:
        """
        ``logits`` ``[B, S, K]`` with, on the non-entity logit of every span of instance ``i``,
        ``log(max(S_i / n, 1))`` (with ``correct_sampled_prior``; ``S_i`` its real spans, ``n`` =
        ``negative_spans_per_instance``) plus ``outside_logit_bias``. span_mask: ``[B, S]``.
        """
        corrects_prior = bool(self.correct_sampled_prior and self.negative_spans_per_instance)
        if not corrects_prior and self.outside_logit_bias == 0.0:
            return logits
        shift = logits.new_full((logits.size(0),), self.outside_logit_bias)  # [B]
        if corrects_prior:
            assert self.negative_spans_per_instance  # part of corrects_prior
            candidates = span_mask.sum(dim=1).to(logits.dtype)  # [B]
            shift = shift + torch.log((candidates / self.negative_spans_per_instance).clamp(min=1.0))
        outside = torch.zeros(logits.size(-1), dtype=logits.dtype, device=logits.device)
        outside[self.outside_index] = 1.0
        return logits + shift[:, None, None] * outside  # [B, S, K]

    def sample_training_spans(self, spans: torch.Tensor, span_labels: torch.Tensor):
        """
        The gold entity spans, up to ``hard_negative_spans_per_instance`` random non-entity spans
        overlapping a gold one and ``negative_spans_per_instance`` random other non-entity spans of each
        instance, in their original order: spans ``[B, S, 2]``, span_labels ``[B, S]`` ->
        ``[B, S', 2]`` (``-1`` padding) and ``[B, S']``.
        """
        if self.negative_spans_per_instance is None:
            raise ValueError("sample_training_spans needs negative_spans_per_instance (the model has none)")
        span_mask = spans[..., 0] >= 0
        negative = span_mask & (span_labels == self.outside_index)
        keep = span_mask & ~negative
        if self.hard_negative_spans_per_instance:
            hard = negative & overlaps_marked_spans(spans, keep)
            keep |= random_subset(hard, self.hard_negative_spans_per_instance)
            negative &= ~hard
        keep |= random_subset(negative, self.negative_spans_per_instance)
        kept = keep.sum(dim=1)
        order = (~keep).long().argsort(dim=1, stable=True)[:, : max(int(kept.max()), 1)]  # kept first, in order
        valid = torch.arange(order.size(1), device=spans.device).unsqueeze(0) < kept.unsqueeze(1)
        new_spans = spans.gather(1, order.unsqueeze(-1).expand(-1, -1, 2)).masked_fill(~valid.unsqueeze(-1), -1)
        new_labels = span_labels.gather(1, order).masked_fill(~valid, 0)
        return new_spans, new_labels

    def decode(self, metadata: List[Dict[str, Any]], predicted: torch.Tensor, scores: torch.Tensor):
        """
        Word-level entities of each instance from the per-span predictions (``[B, S]``) and the
        candidates' ``word_spans`` in ``metadata``: lists of ``(start, end, label)`` and of scores.
        """
        predicted_np = predicted.detach().cpu().numpy()
        scores_np = scores.detach().float().cpu().numpy()
        entities, entity_scores = [], []
        for index, item in enumerate(metadata):
            word_spans = np.asarray(item["word_spans"], dtype=np.int64).reshape(-1, 2)
            count = len(word_spans)
            decoded = self._decode(
                word_spans,
                predicted_np[index, :count],
                scores_np[index, :count],
                outside_label=self.outside_index,
                label_names=self._label_names,
            )
            entities.append(decoded)
            if decoded:
                found = np.asarray([(start, end) for start, end, _ in decoded], dtype=np.int64)
                entity_scores.append(scores_np[index, first_rows(word_spans, found)].tolist())
            else:
                entity_scores.append([])
        return entities, entity_scores

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Adds ``entity_texts`` (the words of each decoded entity) next to ``entities`` and ``words``."""
        if "entities" in output_dict and "words" in output_dict:
            output_dict["entity_texts"] = [
                [" ".join(words[start : end + 1]) for start, end, _ in entities]
                for entities, words in zip(output_dict["entities"], output_dict["words"])
            ]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        """``precision``, ``recall``, ``f1``, ``predicted_entities``; on reset also ``precision-L``, ``recall-L``,
        ``f1-L`` per label."""
        predicted = float(self._metric.predicted_count)
        scores = self._metric.get_metric(reset)
        if reset:
            return {**scores, "predicted_entities": predicted}
        return {**{key: scores[key] for key in ("precision", "recall", "f1")}, "predicted_entities": predicted}
