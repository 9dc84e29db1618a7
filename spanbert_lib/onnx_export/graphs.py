"""
The modules ``allennlp export-onnx`` traces, one per graph. Each reuses the layers of the loaded
model (nothing is re-implemented but the indexing a static graph needs) and says its inputs, outputs
and dynamic axes. All integer inputs are int64; masks are int64 0/1.

Shapes: `B` batch (windows, rows or segments), `L` wordpieces per row, `H` hidden size, `E` span
slots per row, `K` labels, `S` segments of a document, `P` wordpieces of a document, `N` spans.
"""

import inspect
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple, cast

import torch
import transformers

from spanbert_lib.common.modules.entity_aware import ENTITY_MASK, ENTITY_PAD, EntityAwareTransformer
from spanbert_lib.common.token_embedders.segmented_transformer_embedder import SegmentedTransformerEmbedder

if TYPE_CHECKING:
    from spanbert_lib.coref.models.spanbert_coref import SpanBertCoreference
    from spanbert_lib.ner.models.spanbert_span_ner import SpanBertSpanNer
    from spanbert_lib.qa.models.spanbert_qa import SpanBertQuestionAnswering

Axes = Dict[int, str]


def _takes_token_types(transformer: torch.nn.Module) -> bool:
    return "token_type_ids" in inspect.signature(transformer.forward).parameters


def _wordpiece_examples(batch: int, length: int, vocab_size: int, seed: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """``input_ids`` `[B, L]` and an ``attention_mask`` `[B, L]` whose last row is padded after half
    its length (a padded example: some modules skip the mask when nothing is padded, and a trace
    keeps the branch its example took)."""
    generator = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(1, max(2, min(vocab_size, 1000)), (batch, length), generator=generator)
    mask = torch.ones((batch, length), dtype=torch.long)
    mask[-1, max(2, length // 2) :] = 0
    return input_ids, mask


class ExportedGraph(torch.nn.Module):
    """What the exporter needs of a graph module: its name, its inputs and outputs with their axes,
    a description and example inputs of any size (for the trace and the onnxruntime check)."""

    name = ""
    description = ""

    def input_axes(self) -> Dict[str, Axes]:
        raise NotImplementedError

    def output_axes(self) -> Dict[str, Axes]:
        raise NotImplementedError

    def example_inputs(self, batch: int = 2, length: int = 12, seed: int = 0) -> Tuple[torch.Tensor, ...]:
        raise NotImplementedError


class EncoderGraph(ExportedGraph):
    """
    The Hugging Face encoder: ``input_ids``, ``attention_mask`` (and ``token_type_ids`` when the
    model takes them) `[B, L]` -> ``last_hidden_state`` `[B, L, H]`.

    # Parameters

    transformer : `transformers.PreTrainedModel`
        The model's Hugging Face encoder (``huggingface_encoder(model)``).
    """

    name = "encoder"
    description = "the Hugging Face encoder: wordpiece ids -> last hidden states"

    def __init__(self, transformer: transformers.PreTrainedModel) -> None:
        super().__init__()
        self.transformer = transformer
        self.takes_token_types = _takes_token_types(transformer)

    def input_axes(self) -> Dict[str, Axes]:
        names = ["input_ids", "attention_mask"] + (["token_type_ids"] if self.takes_token_types else [])
        return {name: {0: "batch", 1: "length"} for name in names}

    def output_axes(self) -> Dict[str, Axes]:
        return {"last_hidden_state": {0: "batch", 1: "length"}}

    def example_inputs(self, batch: int = 2, length: int = 12, seed: int = 0) -> Tuple[torch.Tensor, ...]:
        input_ids, mask = _wordpiece_examples(batch, length, self.transformer.config.vocab_size, seed)
        return (input_ids, mask, torch.zeros_like(input_ids)) if self.takes_token_types else (input_ids, mask)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            inputs["token_type_ids"] = token_type_ids
        return self.transformer(**inputs).last_hidden_state


class QaSpanLogitsGraph(EncoderGraph):
    """
    ``spanbert_qa``: windows `[B, L]` -> ``start_logits``, ``end_logits`` `[B, L]` (the encoder and
    the model's start/end layer, as the model computes them per window).

    # Parameters

    model : `Model`
        A ``spanbert_qa`` model.
    """

    name = "qa_span_logits"
    description = "spanbert_qa: wordpiece ids of question/passage windows -> start and end logits per wordpiece"

    def __init__(self, model: "SpanBertQuestionAnswering") -> None:
        super().__init__(model.encoder)
        self.span_logits = model._span_logits

    def output_axes(self) -> Dict[str, Axes]:
        return {"start_logits": {0: "batch", 1: "length"}, "end_logits": {0: "batch", 1: "length"}}

    def forward(  # type: ignore[override]  # why: two logits, where EncoderGraph gives the states
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: Optional[torch.Tensor] = None
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        logits = self.span_logits(super().forward(input_ids, attention_mask, token_type_ids)).float()  # [B, L, 2]
        return logits[..., 0], logits[..., 1]


class SpanNerScoresGraph(ExportedGraph):
    """
    ``spanbert_span_ner``: one encoder pass per row, as the model's ``span_features`` runs it: the
    words of a row `[B, L]` and its span slots ``spans`` `[B, E, 2]` (inclusive wordpiece
    positions) with ``span_mask`` `[B, E]` -> ``logits`` and ``probs`` `[B, E, K]`. With entities
    (LUKE) each real slot is an ``ENTITY_MASK`` entity of the pass; the model spreads a sentence's
    spans over rows of at most ``max_entities_per_pass`` (:func:`~.graph_inputs.span_ner_rows`
    does the same).

    # Parameters

    model : `Model`
        A ``spanbert_span_ner`` model.
    """

    name = "span_ner_scores"
    description = "spanbert_span_ner: wordpiece ids and candidate spans of a pass -> label logits and probabilities"

    def __init__(self, model: "SpanBertSpanNer") -> None:
        super().__init__()
        self.encoder = model.encoder
        self.span_extractor = model.span_extractor
        self.classifier = model.classifier
        self.use_entities = model.use_entities
        self.num_labels = model.classifier.out_features

    def input_axes(self) -> Dict[str, Axes]:
        words = {0: "rows", 1: "length"}
        spans = {0: "rows", 1: "spans"}
        return {
            "input_ids": words,
            "attention_mask": words,
            "token_type_ids": words,
            "spans": spans,
            "span_mask": spans,
        }

    def output_axes(self) -> Dict[str, Axes]:
        return {"logits": {0: "rows", 1: "spans"}, "probs": {0: "rows", 1: "spans"}}

    def example_inputs(self, batch: int = 2, length: int = 12, seed: int = 0) -> Tuple[torch.Tensor, ...]:
        # entity_aware_transformer is the one EntityAwareEncoder there is
        vocab_size = cast(EntityAwareTransformer, self.encoder).transformer.config.vocab_size
        input_ids, mask = _wordpiece_examples(batch, length, vocab_size, seed)
        num_spans = max(2, length // 3)
        generator = torch.Generator().manual_seed(seed + 1)
        real_length = max(2, length // 2)  # of the padded last row, so every span fits every row
        starts = torch.randint(1, real_length, (batch, num_spans), generator=generator)
        ends = torch.minimum(starts + torch.randint(0, 3, starts.shape, generator=generator), torch.tensor(real_length))
        span_mask = torch.ones((batch, num_spans), dtype=torch.long)
        span_mask[-1, -1] = 0  # a padded slot
        return input_ids, mask, torch.zeros_like(input_ids), torch.stack([starts, ends], dim=-1), span_mask

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor,
        spans: torch.Tensor,
        span_mask: torch.Tensor,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        mask = attention_mask.bool()
        slots = span_mask.bool()
        spans = spans.clamp(min=0)
        if self.use_entities:
            entity_ids = torch.where(slots, torch.full_like(spans[..., 0], ENTITY_MASK), ENTITY_PAD)
            word_states, entity_states = self.encoder(
                input_ids, mask, token_type_ids, entity_ids=entity_ids, entity_spans=spans, entity_mask=slots
            )  # [B, L, H], [B, E, H]
            features = torch.cat([self.span_extractor(word_states, spans, mask, slots), entity_states], dim=-1)
        else:
            word_states, _ = self.encoder(input_ids, mask, token_type_ids)
            features = self.span_extractor(word_states, spans, mask, slots)
        logits = self.classifier(features)  # [B, E, K]
        return logits, torch.softmax(logits, dim=-1)


def segmented_embedder(model: "SpanBertCoreference") -> SegmentedTransformerEmbedder:
    """The ``segmented_transformer`` token embedder inside a coreference model's encoder."""
    for module in model.encoder.modules():
        if isinstance(module, SegmentedTransformerEmbedder):
            return module
    raise ValueError(f"{type(model).__name__}: no segmented_transformer token embedder inside its encoder")


class CorefMentionScoresGraph(ExportedGraph):
    """
    ``spanbert_coref``: the mention score ``s_m`` of given candidate spans of one document, from
    its segments. Inputs: ``input_ids`` / ``segment_mask`` `[S, L]` (the ``segmented_wordpiece``
    indexer's segments), ``piece_positions`` `[P]` (where each document wordpiece is in the
    flattened `[S * L]` segments), ``span_starts`` / ``span_ends`` `[N]` (first and last wordpiece
    of each span, into `P`) and ``widths`` `[N]` (words minus one). Output ``mention_scores`` `[N]`,
    what the model ranks to prune candidates. The head attention is computed over a `[N, W, H]`
    block (`W` the widest span in wordpieces): give long documents' candidates in chunks.

    # Parameters

    model : `Model`
        A ``spanbert_coref`` model.
    """

    name = "coref_mention_scores"
    description = "spanbert_coref: segments of a document and candidate spans -> mention scores"

    def __init__(self, model: "SpanBertCoreference") -> None:
        super().__init__()
        self.segment_encoder = segmented_embedder(model).segment_encoder
        self.span_embedder = model._span_embedder
        self.mention_scorer = model._mention_scorer
        self.max_span_width = model.max_span_width

    def input_axes(self) -> Dict[str, Axes]:
        segments = {0: "segments", 1: "length"}
        spans = {0: "spans"}
        return {
            "input_ids": segments,
            "segment_mask": segments,
            "piece_positions": {0: "pieces"},
            "span_starts": spans,
            "span_ends": spans,
            "widths": spans,
        }

    def output_axes(self) -> Dict[str, Axes]:
        return {"mention_scores": {0: "spans"}}

    def example_inputs(self, batch: int = 2, length: int = 12, seed: int = 0) -> Tuple[torch.Tensor, ...]:
        vocab_size = self.segment_encoder.transformer_model.config.vocab_size
        input_ids, segment_mask = _wordpiece_examples(batch, length, vocab_size, seed)
        # the real pieces of each segment but its first and last ([CLS], [SEP])
        positions: List[int] = []
        for row in range(batch):
            real = int(segment_mask[row].sum())
            positions.extend(row * length + column for column in range(1, real - 1))
        num_pieces = len(positions)
        generator = torch.Generator().manual_seed(seed + 1)
        starts = torch.randint(0, num_pieces, (max(2, num_pieces),), generator=generator)
        ends = torch.minimum(
            starts + torch.randint(0, 4, starts.shape, generator=generator), torch.tensor(num_pieces - 1)
        )
        widths = torch.minimum(ends - starts, torch.tensor(self.max_span_width - 1))
        return input_ids, segment_mask, torch.tensor(positions), starts, ends, widths

    def forward(
        self,
        input_ids: torch.Tensor,
        segment_mask: torch.Tensor,
        piece_positions: torch.Tensor,
        span_starts: torch.Tensor,
        span_ends: torch.Tensor,
        widths: torch.Tensor,
    ) -> torch.Tensor:
        states = self.segment_encoder(input_ids, segment_mask.bool())  # [S, L, H]
        states = states.reshape(-1, states.size(-1)).index_select(0, piece_positions)  # [P, H]
        head_logits = self.span_embedder.head_scorer(states).squeeze(-1)  # [P]
        widest = (span_ends - span_starts).max() + 1
        # a 0-dim tensor end (not a number) keeps the width dynamic in the trace
        steps = torch.arange(widest)  # type: ignore[call-overload]  # why: torch's stubs take numbers only
        pieces = span_starts.unsqueeze(1) + steps.unsqueeze(0)  # [N, W]
        inside = pieces <= span_ends.unsqueeze(1)
        pieces = torch.minimum(pieces, span_ends.unsqueeze(1))
        logits = head_logits[pieces].masked_fill(~inside, torch.finfo(states.dtype).min)
        weights = torch.softmax(logits, dim=-1)  # [N, W], within each span as the model's segment softmax
        head = (weights.unsqueeze(-1) * states[pieces]).sum(dim=1)  # [N, H]
        width = self.span_embedder.width_embedding(widths)
        embeddings = torch.cat([states[span_starts], states[span_ends], head, width], dim=-1)
        return self.mention_scorer(embeddings, widths)
