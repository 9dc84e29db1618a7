"""
Span-boundary building blocks (SpanBERT, Joshi et al. 2020, section 3.2).

* :class:`SpanBoundaryHead` - the span boundary objective's predictor: a representation of
  each position inside a span computed only from the span's *external* boundary tokens
  x(s-1), x(e+1) and a relative position embedding.
* :class:`SpanBoundarySpanExtractor` - allennlp ``SpanExtractor`` ``"span_boundary"``:
  ``boundaries="inside"`` for ``[x(s); x(e)]`` (span NER, LUKE), ``"outside"`` for
  ``[x(s-1); x(e+1)]`` (the vectors the head reads) or ``"both"`` for all four vectors.

All are meant to be reused in other models (span classification, coreference, NER); the
pre-trained head as a span extractor is
:class:`~spanbert_lib.common.modules.pretrained_span_boundary.PretrainedSpanBoundarySpanExtractor`.

Shapes: `B` batch, `L` sequence length, `H` hidden size (``input_dim``), `T` target positions,
`S` spans, `W` positions of the widest span of a batch, `...` any leading dimensions.
"""

from typing import Optional

import torch
from allennlp.common import Registrable
from allennlp.modules.span_extractors import SpanExtractor


def gather_positions(sequence: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """
    The vectors of ``sequence`` at the given positions.

    # Parameters

    sequence : `torch.FloatTensor`
        `[B, L, H]`.
    positions : `torch.LongTensor`
        `[B, T]` indices into ``L``.

    # Returns

    `torch.FloatTensor`
        `[B, T, H]` with ``out[b, t] = sequence[b, positions[b, t]]``.
    """
    index = positions.unsqueeze(-1).expand(*positions.shape, sequence.size(-1))
    return sequence.gather(1, index)


def external_boundaries(spans: torch.Tensor, sequence_length: int) -> torch.Tensor:
    """
    The external boundary positions of spans.

    # Parameters

    spans : `torch.LongTensor`
        `[..., 2]` inclusive (start, end).
    sequence_length : `int`
        Length `L` of the sequence the spans lie in.

    # Returns

    `torch.LongTensor`
        `[..., 2]` (start - 1, end + 1), clamped into [0, L - 1] (a span touching the edge of
        the sequence uses the edge token itself; with ``[CLS] ... [SEP]`` blocks this never
        happens for spans of ordinary tokens).
    """
    boundaries = torch.stack([spans[..., 0] - 1, spans[..., 1] + 1], dim=-1)
    return boundaries.clamp(0, sequence_length - 1)


class SpanBoundaryHead(torch.nn.Module, Registrable):
    """
    y_i = LN(GeLU(W2 . LN(GeLU(W1 . [x(s-1); x(e+1); p(i-s+1)]))))

    for every target position i of a span (s, e), where p is a learned relative position
    embedding (``position_embedding_dim``, 200 in the paper). Returns y_i of size
    ``input_dim``; SpanBERT decodes it with the output embeddings tied to the input ones.

    # Parameters

    input_dim : `int`
        Size `H` of the encoder states.
    position_embedding_dim : `int`, optional (default = `200`)
        Size of the relative position embedding p.
    max_span_width : `int`, optional (default = `32`)
        Positions i - s >= max_span_width share the last position embedding.
    layer_norm_eps : `float`, optional (default = `1e-12`)
        Epsilon of both LayerNorms.
    """

    default_implementation = "span_boundary"

    def __init__(
        self, input_dim: int, position_embedding_dim: int = 200, max_span_width: int = 32, layer_norm_eps: float = 1e-12
    ) -> None:
        super().__init__()
        self.input_dim = input_dim
        self.max_span_width = max_span_width
        self.position_embeddings = torch.nn.Embedding(max_span_width, position_embedding_dim)
        self.layer1 = torch.nn.Linear(2 * input_dim + position_embedding_dim, input_dim)
        self.norm1 = torch.nn.LayerNorm(input_dim, eps=layer_norm_eps)
        self.layer2 = torch.nn.Linear(input_dim, input_dim)
        self.norm2 = torch.nn.LayerNorm(input_dim, eps=layer_norm_eps)
        self.activation = torch.nn.GELU()

    def get_output_dim(self) -> int:
        return self.input_dim

    def forward(
        self, sequence: torch.Tensor, span_starts: torch.Tensor, span_ends: torch.Tensor, target_positions: torch.Tensor
    ) -> torch.Tensor:
        """
        y_i of each target position.

        # Parameters

        sequence : `torch.FloatTensor`
            `[B, L, H]` encoder states.
        span_starts : `torch.LongTensor`
            `[B, T]` start s of each target's span.
        span_ends : `torch.LongTensor`
            `[B, T]` end e of each target's span (inclusive).
        target_positions : `torch.LongTensor`
            `[B, T]` the position i of each target (s <= i <= e).

        # Returns

        `torch.FloatTensor`
            `[B, T, H]`.
        """
        boundaries = external_boundaries(torch.stack([span_starts, span_ends], dim=-1), sequence.size(1))
        left = gather_positions(sequence, boundaries[..., 0])
        right = gather_positions(sequence, boundaries[..., 1])
        relative = (target_positions - span_starts).clamp(0, self.max_span_width - 1)
        return self.from_boundaries(left, right, relative)

    def from_boundaries(
        self, left: torch.Tensor, right: torch.Tensor, relative_positions: torch.Tensor
    ) -> torch.Tensor:
        """
        y_i from the boundary vectors.

        # Parameters

        left : `torch.FloatTensor`
            `[..., H]` boundary vectors x(s-1).
        right : `torch.FloatTensor`
            `[..., H]` boundary vectors x(e+1).
        relative_positions : `torch.LongTensor`
            `[...]` 0-based offsets i - s.

        # Returns

        `torch.FloatTensor`
            `[..., H]`.
        """
        features = torch.cat([left, right, self.position_embeddings(relative_positions)], dim=-1)
        return self._after_first_linear(self.layer1(features))

    def _after_first_linear(self, first: torch.Tensor) -> torch.Tensor:
        """``LN(GeLU(W2 . LN(GeLU(first))))`` for ``first = W1 . [x(s-1); x(e+1); p]``: `[..., H]`."""
        hidden = self.norm1(self.activation(first))
        return self.norm2(self.activation(self.layer2(hidden)))

    def span_representation(
        self, sequence: torch.Tensor, spans: torch.Tensor, span_mask: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        """
        A fixed-size representation of whole spans from their boundary vectors: the mean of
        y_i over the span's positions (widths beyond ``max_span_width`` are averaged over the
        first ``max_span_width`` positions).

        # Parameters

        sequence : `torch.FloatTensor`
            `[B, L, H]` encoder states.
        spans : `torch.LongTensor`
            `[B, S, 2]` inclusive (start, end).
        span_mask : `torch.BoolTensor`, optional (default = `None`)
            `[B, S]`; masked spans give zeros.

        # Returns

        `torch.FloatTensor`
            `[B, S, H]`.
        """
        boundaries = external_boundaries(spans, sequence.size(1))
        left = gather_positions(sequence, boundaries[..., 0])  # [B, S, H]
        right = gather_positions(sequence, boundaries[..., 1])
        widths = (spans[..., 1] - spans[..., 0] + 1).clamp(1, self.max_span_width)  # [B, S]
        # Only as many positions as the widest span of the batch has (W <= max_span_width).
        num_positions = int(widths.max()) if widths.numel() else 1
        offsets = torch.arange(num_positions, device=spans.device)  # [W]
        # W1 . [x(s-1); x(e+1); p(i)] split by blocks of W1: the boundary part once per span, the
        # position part once per offset, instead of W copies of the concatenated features.
        w_left, w_right, w_position = self.layer1.weight.split(
            [self.input_dim, self.input_dim, self.position_embeddings.embedding_dim], dim=1
        )
        boundary_part = left @ w_left.t() + right @ w_right.t()  # [B, S, H]
        position_part = torch.nn.functional.linear(
            self.position_embeddings(offsets), w_position, self.layer1.bias
        )  # [W, H]
        outputs = self._after_first_linear(boundary_part.unsqueeze(2) + position_part)  # [B, S, W, H]
        inside = (offsets < widths.unsqueeze(-1)).unsqueeze(-1).to(outputs.dtype)
        representation = (outputs * inside).sum(2) / widths.unsqueeze(-1).to(outputs.dtype)
        if span_mask is not None:
            representation = representation * span_mask.unsqueeze(-1).to(representation.dtype)
        return representation


SpanBoundaryHead.register("span_boundary")(SpanBoundaryHead)


BOUNDARY_CHOICES = ("inside", "outside", "both")


@SpanExtractor.register("span_boundary")
class SpanBoundarySpanExtractor(SpanExtractor):
    """
    Represents a span (s, e) by boundary vectors, selected by ``boundaries``:

    * ``"inside"``: ``[x(s); x(e)]`` - first and last token of the span;
    * ``"outside"``: ``[x(s-1); x(e+1)]`` - the external boundary SpanBERT's SBO reads;
    * ``"both"``: ``[x(s-1); x(s); x(e); x(e+1)]``.

    Output dim: ``2 * input_dim`` (``4 *`` for ``"both"``). Outside positions are clamped to the
    sequence, see :func:`external_boundaries`.

    # Parameters

    input_dim : `int`
        Size `H` of the sequence vectors.
    boundaries : `str`, optional (default = `"inside"`)
        ``"inside"``, ``"outside"`` or ``"both"``, as above.
    """

    def __init__(self, input_dim: int, boundaries: str = "inside") -> None:
        super().__init__()
        if boundaries not in BOUNDARY_CHOICES:
            raise ValueError(
                f"span_boundary extractor: boundaries must be one of {BOUNDARY_CHOICES}, got {boundaries!r}"
            )
        self._input_dim = input_dim
        self._boundaries = boundaries

    def get_input_dim(self) -> int:
        return self._input_dim

    def get_output_dim(self) -> int:
        return (4 if self._boundaries == "both" else 2) * self._input_dim

    def forward(
        self,
        sequence_tensor: torch.Tensor,
        span_indices: torch.Tensor,
        sequence_mask: Optional[torch.Tensor] = None,
        span_indices_mask: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """
        # Parameters

        sequence_tensor : `torch.FloatTensor`
            `[B, L, H]`.
        span_indices : `torch.LongTensor`
            `[B, S, 2]` inclusive (start, end).
        sequence_mask : `torch.BoolTensor`, optional (default = `None`)
            `[B, L]`, unused (allennlp's ``SpanExtractor`` signature).
        span_indices_mask : `torch.BoolTensor`, optional (default = `None`)
            `[B, S]`; masked spans give zeros.

        # Returns

        `torch.FloatTensor`
            `[B, S, get_output_dim()]`.
        """
        span_indices = span_indices.clamp(0, sequence_tensor.size(1) - 1)
        outside = external_boundaries(span_indices, sequence_tensor.size(1))
        if self._boundaries == "inside":
            positions = [span_indices[..., 0], span_indices[..., 1]]
        elif self._boundaries == "outside":
            positions = [outside[..., 0], outside[..., 1]]
        else:
            positions = [outside[..., 0], span_indices[..., 0], span_indices[..., 1], outside[..., 1]]
        representation = torch.cat([gather_positions(sequence_tensor, p) for p in positions], dim=-1)
        if span_indices_mask is not None:
            representation = representation * span_indices_mask.unsqueeze(-1).to(representation.dtype)
        return representation
