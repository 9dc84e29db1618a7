"""
Span representations of Lee et al. (2017), as Joshi et al. (2019) compute them over BERT
wordpieces: ``g = [x_start; x_end; head; phi(width)]`` where ``x_start``/``x_end`` are the
states of the span's first and last wordpiece, ``head`` is an attention-weighted sum of the
states of all its wordpieces (one learned attention logit per wordpiece, normalised within the
span) and ``phi(width)`` a learned embedding of the span width in words.

The attention sum uses ``embedding_bag`` over a flat list of (span, wordpiece) pairs, so
memory is linear in the total span length, never `[N, max_width, H]`.

Shapes: `N` spans, `P` wordpieces of one document, `H` wordpiece state size (``input_dim``),
`T` the total number of wordpieces over all spans, `D` span embedding size
(:meth:`SpanEmbedder.get_output_dim`).
"""

from typing import Tuple

import torch

from spanbert_lib.coref.models.weighted_bags import weighted_bag_sum


def flat_span_pieces(
    piece_starts: torch.Tensor, piece_ends: torch.Tensor
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """
    Every wordpiece of every span, spans one after another.

    # Parameters

    piece_starts : `torch.LongTensor`
        `[N]` first wordpiece of each span.
    piece_ends : `torch.LongTensor`
        `[N]` last wordpiece of each span (inclusive, ``end >= start``).

    # Returns

    `Tuple[torch.LongTensor, torch.LongTensor, torch.LongTensor]`
        ``(pieces, span_ids, offsets)``: ``pieces`` `[T]` wordpiece indices with
        ``T = sum(end - start + 1)``, ``span_ids`` `[T]` the span each belongs to, ``offsets``
        `[N]` where each span's run starts in ``pieces`` (the ``embedding_bag`` offsets).
    """
    lengths = piece_ends - piece_starts + 1
    if lengths.numel() and int(lengths.min()) < 1:
        raise ValueError("a span ends before it starts")
    offsets = torch.cumsum(lengths, 0) - lengths
    span_ids = torch.repeat_interleave(torch.arange(lengths.numel(), device=lengths.device), lengths)
    positions = torch.arange(span_ids.numel(), device=lengths.device)
    pieces = piece_starts[span_ids] + positions - offsets[span_ids]
    return pieces, span_ids, offsets


def segment_softmax(logits: torch.Tensor, segment_ids: torch.Tensor, num_segments: int) -> torch.Tensor:
    """
    Softmax of ``logits`` within each group of equal ``segment_ids``.

    # Parameters

    logits : `torch.Tensor`
        `[T]` the values.
    segment_ids : `torch.LongTensor`
        `[T]` the group of each value, ``0 .. num_segments - 1``.
    num_segments : `int`
        Number of groups.

    # Returns

    `torch.Tensor`
        `[T]` float32 probabilities summing to 1 within each group (computed in float32 whatever the
        dtype of ``logits``: under autocast they come from a float16 / bfloat16 linear layer).
    """
    logits = logits.float()
    with torch.no_grad():  # the shift cancels out of the softmax, no gradient needed
        maxima = logits.new_full((num_segments,), float("-inf")).scatter_reduce(
            0, segment_ids, logits, reduce="amax", include_self=True
        )
    exponentials = torch.exp(logits - maxima[segment_ids])
    sums = logits.new_zeros(num_segments).index_add(0, segment_ids, exponentials)
    return exponentials / sums[segment_ids]


class SpanEmbedder(torch.nn.Module):
    """
    ``g = [x_start; x_end; head; width_embedding]``, of size ``3 * input_dim + feature_size``
    (parts in that order, see :attr:`part_dims`). Widths are ``end_word - start_word`` (0 for a
    one-word span), below ``max_span_width``. Dropout applies to the width embedding, as in
    Lee et al.

    # Parameters

    input_dim : `int`
        Size `H` of a wordpiece state.
    feature_size : `int`
        Size of the width embedding.
    max_span_width : `int`
        Number of widths embedded (widths ``0 .. max_span_width - 1``).
    dropout : `float`, optional (default = `0.0`)
        Dropout on the width embedding.
    """

    def __init__(self, input_dim: int, feature_size: int, max_span_width: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.input_dim = input_dim
        self.max_span_width = max_span_width
        self.head_scorer = torch.nn.Linear(input_dim, 1)
        self.width_embedding = torch.nn.Embedding(max_span_width, feature_size)
        self.dropout = torch.nn.Dropout(dropout)

    @property
    def part_dims(self) -> Tuple[int, int, int, int]:
        """Sizes of ``(x_start, x_end, head, width)``."""
        return (self.input_dim, self.input_dim, self.input_dim, self.width_embedding.embedding_dim)

    def get_output_dim(self) -> int:
        return sum(self.part_dims)

    def head_attention(
        self, head_logits: torch.Tensor, piece_starts: torch.Tensor, piece_ends: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """
        The head attention over each span's wordpieces, in ``F.embedding_bag``'s form.

        # Parameters

        head_logits : `torch.Tensor`
            `[P]` attention logit of each wordpiece.
        piece_starts : `torch.LongTensor`
            `[N]` first wordpiece of each span.
        piece_ends : `torch.LongTensor`
            `[N]` last wordpiece of each span (inclusive).

        # Returns

        `Tuple[torch.LongTensor, torch.LongTensor, torch.Tensor]`
            ``(pieces, offsets, weights)``: the spans' wordpieces `[T]` and offsets `[N]` (see
            :func:`flat_span_pieces`) and their attention weights `[T]`, summing to 1 within
            each span.
        """
        pieces, span_ids, offsets = flat_span_pieces(piece_starts, piece_ends)
        weights = segment_softmax(head_logits[pieces], span_ids, piece_starts.numel())
        return pieces, offsets, weights

    def forward(
        self,
        states: torch.Tensor,
        piece_starts: torch.Tensor,
        piece_ends: torch.Tensor,
        widths: torch.Tensor,
    ) -> torch.Tensor:
        """
        # Parameters

        states : `torch.Tensor`
            `[P, H]` wordpiece states of one document.
        piece_starts : `torch.LongTensor`
            `[N]` first wordpiece of each span.
        piece_ends : `torch.LongTensor`
            `[N]` last wordpiece of each span (inclusive).
        widths : `torch.LongTensor`
            `[N]` word widths minus one.

        # Returns

        `torch.Tensor`
            `[N, D]` span embeddings.
        """
        head_logits = self.head_scorer(states).squeeze(-1)
        pieces, offsets, weights = self.head_attention(head_logits, piece_starts, piece_ends)
        head = weighted_bag_sum(pieces, states, weights, offsets)
        width = self.dropout(self.width_embedding(widths))
        return torch.cat([states[piece_starts], states[piece_ends], head, width], dim=-1)
