"""
Mention scores (Lee et al. 2017/2018): ``s_m(i) = FFNN(g_i) + prior(width_i)``, the prior a
FFNN over a learned width embedding (Joshi et al.'s ``use_prior``).

:meth:`MentionScorer.score_candidates` scores ALL candidate spans of a document for pruning
without building their representations: the first FFNN layer is applied to each wordpiece
state once (start, end and head shares) and the per-span pre-activations are gathered and
summed (the head share through the attention weights), chunk by chunk.

Shapes: `N` spans, `D` span embedding size, `P` wordpieces of one document, `H` wordpiece
state size.
"""

import torch
import torch.nn.functional as F

from spanbert_lib.coref.models.chunking import row_chunks
from spanbert_lib.coref.models.feedforward import FeedForwardScorer
from spanbert_lib.coref.models.span_embedder import SpanEmbedder
from spanbert_lib.coref.models.weighted_bags import weighted_bag_sum

START, END, HEAD, WIDTH = range(4)


class MentionScorer(torch.nn.Module):
    """
    ``s_m(i)``: an FFNN over the span embedding plus a learned width prior.

    # Parameters

    span_embedder : `SpanEmbedder`
        Gives the input layout (its :attr:`SpanEmbedder.part_dims`); it is NOT a submodule of
        this scorer (the model owns it).
    hidden_dim : `int`
        Hidden units of the span FFNN and of the width prior's FFNN.
    depth : `int`, optional (default = `1`)
        Hidden layers of both FFNNs.
    dropout : `float`, optional (default = `0.0`)
        Dropout after each hidden layer.
    """

    def __init__(self, span_embedder: SpanEmbedder, hidden_dim: int, depth: int = 1, dropout: float = 0.0) -> None:
        super().__init__()
        self.span_scorer = FeedForwardScorer(span_embedder.part_dims, hidden_dim, depth, dropout)
        feature_size = span_embedder.width_embedding.embedding_dim
        self.width_prior_embedding = torch.nn.Embedding(span_embedder.max_span_width, feature_size)
        self.width_prior_scorer = FeedForwardScorer([feature_size], hidden_dim, depth, dropout)

    def width_prior(self, apply_dropout: bool = True) -> torch.Tensor:
        """`[max_span_width]` prior score of each width."""
        table = self.width_prior_embedding.weight
        return self.width_prior_scorer.from_first_layer(
            self.width_prior_scorer.part_projection(table, 0), apply_dropout
        )

    def forward(
        self,
        span_embeddings: torch.Tensor,
        widths: torch.Tensor,
    ) -> torch.Tensor:
        """
        # Parameters

        span_embeddings : `torch.Tensor`
            `[N, D]` span embeddings.
        widths : `torch.LongTensor`
            `[N]` word widths minus one.

        # Returns

        `torch.Tensor`
            `[N]` mention scores.
        """
        return self.span_scorer(span_embeddings) + self.width_prior()[widths]

    @torch.no_grad()
    def score_candidates(
        self,
        span_embedder: SpanEmbedder,
        states: torch.Tensor,
        piece_starts: torch.Tensor,
        piece_ends: torch.Tensor,
        widths: torch.Tensor,
        budget: int = 2**23,
    ) -> torch.Tensor:
        """
        The same scores as ``self(span_embedder(states, ...), widths)`` in eval mode, for many
        spans, without gradient and without dropout.

        Spans are processed in chunks of about ``budget / (4 * hidden_dim)`` spans; each chunk
        projects only the wordpieces between its first start and last end, so spans sorted by
        start keep the work linear in the document length.

        # Parameters

        span_embedder : `SpanEmbedder`
            The model's span embedder (its head attention and width embedding).
        states : `torch.Tensor`
            `[P, H]` wordpiece states of one document.
        piece_starts : `torch.LongTensor`
            `[N]` first wordpiece of each span.
        piece_ends : `torch.LongTensor`
            `[N]` last wordpiece of each span (inclusive).
        widths : `torch.LongTensor`
            `[N]` word widths minus one.
        budget : `int`, optional (default = `2 ** 23`)
            About how many elements one chunk's pre-activations may hold.

        # Returns

        `torch.Tensor`
            `[N]` mention scores.
        """
        scorer = self.span_scorer.aligned()
        prior = self.width_prior(apply_dropout=False)
        width_table = scorer.part_projection(span_embedder.width_embedding.weight, WIDTH)  # [widths, H']
        head_logits = span_embedder.head_scorer(states).squeeze(-1)
        scores = states.new_empty(piece_starts.shape)
        for chunk in row_chunks(piece_starts.numel(), 4 * scorer.hidden_dim, budget):
            starts, ends = piece_starts[chunk], piece_ends[chunk]
            low, high = int(starts.min()), int(ends.max()) + 1
            window = states[low:high]
            starts, ends = starts - low, ends - low
            pieces, offsets, weights = span_embedder.head_attention(head_logits[low:high], starts, ends)
            # start, end and width shares summed by one embedding_bag over their stacked tables
            size = high - low
            table = torch.cat([scorer.part_projection(window, START), scorer.part_projection(window, END), width_table])
            bags = torch.stack([starts, ends + size, widths[chunk] + 2 * size], dim=1)  # [n, 3]
            pre_activation = F.embedding_bag(bags, table, mode="sum")
            pre_activation += weighted_bag_sum(pieces, scorer.part_projection(window, HEAD), weights, offsets)
            scores[chunk] = scorer.from_first_layer(pre_activation) + prior[widths[chunk]]
        return scores
