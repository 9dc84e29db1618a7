"""
The training objective of Lee et al. (2017): the marginal log-likelihood of all correct
antecedents of each kept span,

    L = - sum_i log sum_{j in GOLD(i)} P(j | i),   P(. | i) = softmax over [dummy] + antecedents,

where ``GOLD(i)`` holds the kept antecedents in ``i``'s gold cluster, or only the dummy when
there is none (``i`` is no gold mention, or none of its cluster's earlier mentions survived).

Shapes: `K` kept spans of one document, `C` antecedent slots per kept span.
"""

import torch


def antecedent_labels(span_labels: torch.Tensor, antecedents: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """
    Which antecedent slots of each kept span are correct, the dummy included.

    # Parameters

    span_labels : `torch.LongTensor`
        `[K]` gold cluster of each kept span (-1: no gold mention).
    antecedents : `torch.LongTensor`
        `[K, C]` each kept span's antecedents, as indices into the kept spans.
    mask : `torch.BoolTensor`
        `[K, C]` real antecedent slots.

    # Returns

    `torch.BoolTensor`
        `[K, C + 1]`: column 0 the dummy, column ``1 + s`` whether slot ``s`` is a correct
        antecedent. Every row has at least one True.
    """
    same_cluster = span_labels[antecedents] == span_labels.unsqueeze(1)
    correct = same_cluster & mask & (span_labels >= 0).unsqueeze(1)
    dummy = ~correct.any(dim=1, keepdim=True)
    return torch.cat([dummy, correct], dim=1)


def marginal_log_likelihood_loss(scores_with_dummy: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """
    The loss of the module docstring, summed over the kept spans.

    # Parameters

    scores_with_dummy : `torch.Tensor`
        `[K, C + 1]` antecedent scores, the dummy's in column 0 (``-inf`` at masked slots).
    labels : `torch.BoolTensor`
        `[K, C + 1]` correct slots, as :func:`antecedent_labels` returns them.

    # Returns

    `torch.Tensor`
        Scalar ``sum_i (logsumexp(all_i) - logsumexp(gold_i))``.
    """
    if scores_with_dummy.numel() == 0:
        return scores_with_dummy.sum()
    gold = scores_with_dummy.masked_fill(~labels, float("-inf"))
    return (torch.logsumexp(scores_with_dummy, dim=1) - torch.logsumexp(gold, dim=1)).sum()
