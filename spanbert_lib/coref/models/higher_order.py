"""
Higher-order inference (Lee et al. 2018, section 2): each kept span attends over its
antecedents (the dummy antecedent, score 0, standing for the span itself) and its
representation is refined with a learned gate,

    a_i = sum_j P(j | i) g_j   (j over [dummy = i] + antecedents),
    f_i = sigmoid(W_f [g_i; a_i] + b_f),
    g'_i = f_i * a_i + (1 - f_i) * g_i.

Shapes: `K` kept spans of one document, `C` antecedent slots per kept span, `D` span
embedding size.
"""

import torch

from spanbert_lib.coref.models.aligned_matmul import aligned_linear
from spanbert_lib.coref.models.weighted_bags import weighted_bag_sum


def with_dummy(scores: torch.Tensor) -> torch.Tensor:
    """`[K, C]` antecedent scores -> `[K, C + 1]` with the dummy's score 0 in column 0."""
    return torch.cat([scores.new_zeros((scores.size(0), 1)), scores], dim=1)


def attend_antecedents(
    span_embeddings: torch.Tensor, antecedents: torch.Tensor, scores_with_dummy: torch.Tensor
) -> torch.Tensor:
    """
    ``a_i``, each kept span's attention-weighted sum of its antecedents. The weighted sum uses
    ``embedding_bag``, so no `[K, C, D]` tensor is built.

    # Parameters

    span_embeddings : `torch.Tensor`
        `[K, D]` kept span embeddings.
    antecedents : `torch.LongTensor`
        `[K, C]` each kept span's antecedents, as indices into the kept spans.
    scores_with_dummy : `torch.Tensor`
        `[K, C + 1]` antecedent scores, the dummy's in column 0 (``-inf`` at masked slots).

    # Returns

    `torch.Tensor`
        `[K, D]`.
    """
    weights = torch.softmax(scores_with_dummy, dim=1)
    if antecedents.size(1) == 0:
        return span_embeddings * weights[:, :1]
    attended = weighted_bag_sum(antecedents, span_embeddings, weights[:, 1:])
    return attended + weights[:, :1] * span_embeddings


class GatedSpanRefiner(torch.nn.Module):
    """
    One refinement step ``g -> g'`` (see the module docstring).

    # Parameters

    span_dim : `int`
        Size `D` of a span embedding.
    """

    def __init__(self, span_dim: int) -> None:
        super().__init__()
        self.gate = torch.nn.Linear(2 * span_dim, span_dim)

    def forward(
        self,
        span_embeddings: torch.Tensor,
        antecedents: torch.Tensor,
        scores_with_dummy: torch.Tensor,
    ) -> torch.Tensor:
        """
        # Parameters

        span_embeddings : `torch.Tensor`
            `[K, D]` kept span embeddings ``g``.
        antecedents : `torch.LongTensor`
            `[K, C]` each kept span's antecedents.
        scores_with_dummy : `torch.Tensor`
            `[K, C + 1]` antecedent scores, the dummy's in column 0.

        # Returns

        `torch.Tensor`
            `[K, D]` refined embeddings ``g'``.
        """
        attended = attend_antecedents(span_embeddings, antecedents, scores_with_dummy)
        inputs = torch.cat([span_embeddings, attended], dim=-1)
        gate = torch.sigmoid(self.gate(inputs) if torch.is_grad_enabled() else aligned_linear(inputs, self.gate))
        return gate * attended + (1 - gate) * span_embeddings
