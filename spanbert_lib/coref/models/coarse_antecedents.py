"""
Coarse-to-fine antecedent pruning (Lee et al. 2018, section 3): every kept span ``i`` scores
every earlier kept span ``j`` cheaply,

    s_c(i, j) = s_m(i) + s_m(j) + (W_c g_i + b_c) . g_j + prior(bucket(i - j)),

and keeps its ``C`` best antecedents. The scores are computed in blocks of rows, so memory is
``O(K * C)`` plus one `[R, K]` block, never `[K, K]` for the whole document.

Shapes: `K` kept spans of one document (in document order), `C` antecedent slots per kept
span, `D` span embedding size, `R` rows of one block.
"""

from dataclasses import dataclass

import torch

from spanbert_lib.coref.models.aligned_matmul import aligned_linear, aligned_size

NUM_DISTANCE_BUCKETS = 10

# rows of one block of the selection: the columns stop at the block's last row, so smaller
# blocks skip more of the [K, K] triangle that holds no antecedent
SELECTION_ROWS = 256


_BUCKET_BOUNDARIES = (1, 2, 3, 4, 5, 8, 16, 32, 64)


def bucket_distance(distances: torch.Tensor) -> torch.Tensor:
    """
    Semi-log buckets of Lee et al.: ``0, 1, 2, 3, 4`` each their own bucket, then
    ``5-7 -> 5, 8-15 -> 6, 16-31 -> 7, 32-63 -> 8, 64+ -> 9`` (negative values -> 0).

    # Parameters

    distances : `torch.LongTensor`
        Distances, any shape.

    # Returns

    `torch.LongTensor`
        The bucket of each distance, same shape as ``distances``.
    """
    boundaries = torch.tensor(_BUCKET_BOUNDARIES, dtype=distances.dtype, device=distances.device)
    return torch.bucketize(distances, boundaries, right=True)


@dataclass
class TopAntecedents:
    """
    The ``C`` antecedent slots of each of the ``K`` kept spans.

    # Parameters

    indices : `torch.LongTensor`
        `[K, C]` antecedents, as indices into the kept spans (any value where masked).
    mask : `torch.BoolTensor`
        `[K, C]` real slots (``indices < row``).
    offsets : `torch.LongTensor`
        `[K, C]` ``row - index``.
    scores : `torch.Tensor`
        `[K, C]` coarse scores (``-inf`` where masked; differentiable in training).
    """

    indices: torch.Tensor
    mask: torch.Tensor
    offsets: torch.Tensor
    scores: torch.Tensor


class CoarseAntecedentScorer(torch.nn.Module):
    """
    The bilinear term and the distance prior of the coarse score.

    # Parameters

    span_dim : `int`
        Size `D` of a span embedding.
    feature_size : `int`
        Size of the distance bucket embedding.
    dropout : `float`, optional (default = `0.0`)
        Dropout on the distance embeddings and on both sides of the bilinear term.
    """

    def __init__(self, span_dim: int, feature_size: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.bilinear = torch.nn.Linear(span_dim, span_dim)
        self.distance_embedding = torch.nn.Embedding(NUM_DISTANCE_BUCKETS, feature_size)
        self.distance_scorer = torch.nn.Linear(feature_size, 1)
        self.dropout = torch.nn.Dropout(dropout)

    def distance_prior(self, apply_dropout: bool = True) -> torch.Tensor:
        """`[NUM_DISTANCE_BUCKETS]` prior score per distance bucket."""
        table = self.distance_embedding.weight
        if apply_dropout:
            table = self.dropout(table)
        return self.distance_scorer(table).squeeze(-1)

    def pair_scores(
        self,
        span_embeddings: torch.Tensor,
        mention_scores: torch.Tensor,
        antecedents: torch.Tensor,
        mask: torch.Tensor,
    ) -> torch.Tensor:
        """
        Differentiable coarse scores of given pairs. Dropout on both sides of the bilinear
        term, as Lee et al.

        # Parameters

        span_embeddings : `torch.Tensor`
            `[K, D]` kept span embeddings.
        mention_scores : `torch.Tensor`
            `[K]` their mention scores.
        antecedents : `torch.LongTensor`
            `[K, C]` the antecedents to score, as indices into the kept spans.
        mask : `torch.BoolTensor`
            `[K, C]` real slots.

        # Returns

        `torch.Tensor`
            `[K, C]` coarse scores, ``-inf`` where masked.
        """
        rows = torch.arange(span_embeddings.size(0), device=span_embeddings.device)
        source = self.dropout(self.bilinear(span_embeddings))  # [K, D]
        target = self.dropout(span_embeddings)[antecedents]  # [K, C, D]
        scores = torch.einsum("kd,kcd->kc", source, target)
        scores = scores + mention_scores.unsqueeze(1) + mention_scores[antecedents]
        offsets = rows.unsqueeze(1) - antecedents
        scores = scores + self.distance_prior()[bucket_distance(offsets)]
        return scores.masked_fill(~mask, float("-inf"))

    @torch.no_grad()
    def _offset_prior(self, last_row: int, num_rows: int, columns: int) -> torch.Tensor:
        """
        `[R, columns]` (a strided view): the distance prior of ``offset = row - column`` for rows
        ``last_row, last_row - 1, ...`` (``R = num_rows``, in that order) and columns
        ``0 .. columns - 1``, ``-inf`` where the offset is below 1 (not an earlier span). Row
        ``r`` and column ``c`` have offset ``last_row - (r + c)``, so the whole block is
        ``vector[r + c]``: one vector of ``R + columns - 1`` values read with strides (1, 1).
        """
        offsets = last_row - torch.arange(num_rows + columns - 1, device=self.distance_scorer.weight.device)
        vector = self.distance_prior(apply_dropout=False)[bucket_distance(offsets)]
        vector = vector.masked_fill(offsets < 1, float("-inf"))
        return vector.as_strided((num_rows, columns), (1, 1))

    def top_antecedents(
        self, span_embeddings: torch.Tensor, mention_scores: torch.Tensor, max_antecedents: int, budget: int = 2**22
    ) -> TopAntecedents:
        """
        The ``C = min(max_antecedents, K)`` best earlier spans of each of the ``K`` spans.

        Selection runs without gradient or dropout, in row blocks of about ``budget``
        elements; with gradients enabled the selected pairs' scores are recomputed
        differentiably (:meth:`pair_scores`). Rows with fewer than ``C`` earlier spans get
        masked slots.

        # Parameters

        span_embeddings : `torch.Tensor`
            `[K, D]` kept span embeddings, in document order.
        mention_scores : `torch.Tensor`
            `[K]` their mention scores.
        max_antecedents : `int`
            Most antecedent slots per span.
        budget : `int`, optional (default = `2 ** 22`)
            About how many elements one row block's score matrix may hold.

        # Returns

        `TopAntecedents`
            The kept slots, their masks, offsets and coarse scores.
        """
        num_spans = span_embeddings.size(0)
        slots = min(max_antecedents, num_spans)
        device = span_embeddings.device
        indices = torch.zeros((num_spans, slots), dtype=torch.long, device=device)
        scores = span_embeddings.new_zeros((num_spans, slots))
        with torch.no_grad():
            source = aligned_linear(span_embeddings, self.bilinear)  # [K, D]
            # the rows of a block are taken last row first, so that the prior of offset
            # ``row - column`` is a Hankel view of one vector (see _offset_prior)
            block_rows = max(1, min(SELECTION_ROWS, budget // max(num_spans, 1)))
            for start in range(0, num_spans, block_rows):
                stop = min(start + block_rows, num_spans)
                # only spans before the block's last row can be antecedents
                columns = min(num_spans, max(aligned_size(stop), slots))
                reversed_rows = torch.arange(stop - 1, start - 1, -1, device=device)
                block = source.index_select(0, reversed_rows).matmul(span_embeddings[:columns].t())  # [R, columns]
                block += mention_scores.index_select(0, reversed_rows).unsqueeze(1)
                block += mention_scores[:columns]
                block += self._offset_prior(stop - 1, stop - start, columns)
                block_scores, block_indices = block.topk(slots, dim=1)
                scores[start:stop], indices[start:stop] = block_scores.flip(0), block_indices.flip(0)
        rows = torch.arange(num_spans, device=device).unsqueeze(1)
        mask = indices < rows
        if torch.is_grad_enabled() and (span_embeddings.requires_grad or mention_scores.requires_grad):
            scores = self.pair_scores(span_embeddings, mention_scores, indices, mask)
        else:
            scores = scores.masked_fill(~mask, float("-inf"))
        return TopAntecedents(indices=indices, mask=mask, offsets=rows - indices, scores=scores)
