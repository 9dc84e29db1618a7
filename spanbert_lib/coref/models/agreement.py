"""
Agreement in gender and number between a mention and a candidate antecedent (English).

A coreference model that sees only span embeddings and distances learns to link a pronoun to a
nearby mention; "she" then joins the father's cluster as readily as the daughter's. Here each kept
span carries a distribution over four agreement classes (:data:`AGREEMENT_CLASSES`: masculine,
feminine and neuter singular, plural):

- a third-person pronoun (:data:`THIRD_PERSON_PRONOUNS`: "he", "her", "themselves", ...) has its
  class in its form: a fixed one-hot distribution;
- every other span (names, noun phrases, "I" and "you") gets the class its span embedding predicts
  (:class:`AgreementHead`, one linear layer). Its training target is read off the gold clusters: the
  share of each class among the third-person pronouns of the span's gold cluster ("his daughter
  Clara" in a cluster with "she" and "her" learns feminine). Spans of clusters without such a
  pronoun give no target. This is what the encoder already knows about a name or a head noun, put
  where the antecedent scorer can use it.

The pair feature (:func:`agreement_values`) is the probability that both spans have the same class,
``sum_c a_i(c) a_j(c)``, in :data:`NUM_AGREEMENT_BUCKETS` buckets, crossed with how many of the two
spans are fixed pronouns (0, 1, 2): 15 values, embedded like the other pair features. A pair of
pronouns that disagree ("he" -> "she") is then a value the model learns to score down.

Shapes: `K` kept spans, `W` words, `A` agreement classes, `R` rows, `C` antecedent slots.
"""

from typing import Dict, Sequence

import torch
import torch.nn.functional as F

AGREEMENT_CLASSES = ("masculine", "feminine", "neuter", "plural")
NUM_AGREEMENT_CLASSES = len(AGREEMENT_CLASSES)
NUM_AGREEMENT_BUCKETS = 5
# agreement bucket x number of fixed pronouns in the pair (0, 1 or 2)
NUM_AGREEMENT_VALUES = NUM_AGREEMENT_BUCKETS * 3

THIRD_PERSON_PRONOUNS: Dict[str, int] = {
    **dict.fromkeys(("he", "him", "his", "himself"), 0),
    **dict.fromkeys(("she", "her", "hers", "herself"), 1),
    **dict.fromkeys(("it", "its", "itself"), 2),
    **dict.fromkeys(("they", "them", "their", "theirs", "themselves", "themself"), 3),
}


def word_agreement_classes(words: Sequence[str], device: torch.device) -> torch.Tensor:
    """
    `[W]` the agreement class of each word that is a third-person pronoun, -1 for every other word.

    # Parameters

    words : `Sequence[str]`
        The document's words (case is ignored).
    device : `torch.device`
    """
    classes = [THIRD_PERSON_PRONOUNS.get(word.lower(), -1) for word in words]
    return torch.tensor(classes, dtype=torch.long, device=device)


def fixed_span_classes(spans: torch.Tensor, word_classes: torch.Tensor) -> torch.Tensor:
    """
    `[N]` the class of each one-word span that is a third-person pronoun, -1 for the others.

    # Parameters

    spans : `torch.LongTensor`
        `[N, 2]` inclusive word offsets.
    word_classes : `torch.LongTensor`
        `[W]` from :func:`word_agreement_classes`.
    """
    one_word = spans[:, 0] == spans[:, 1]
    classes = word_classes[spans[:, 0]]
    return torch.where(one_word, classes, torch.full_like(classes, -1))


class AgreementHead(torch.nn.Module):
    """
    Agreement class logits of span embeddings: one linear layer.

    # Parameters

    span_dim : `int`
        Size `D` of a span embedding.
    """

    def __init__(self, span_dim: int) -> None:
        super().__init__()
        self.projection = torch.nn.Linear(span_dim, NUM_AGREEMENT_CLASSES)

    def forward(self, span_embeddings: torch.Tensor) -> torch.Tensor:
        """`[K, D]` -> `[K, A]` logits."""
        return self.projection(span_embeddings)


def span_attributes(logits: torch.Tensor, fixed_classes: torch.Tensor) -> torch.Tensor:
    """
    `[K, A]` each kept span's agreement distribution: one-hot for fixed pronouns, the softmax of
    ``logits`` `[K, A]` (detached: the feature is a lookup) for the others; ``fixed_classes`` `[K]`.
    """
    predicted = logits.detach().float().softmax(-1)
    fixed = fixed_classes >= 0
    one_hot = F.one_hot(fixed_classes.clamp(min=0), NUM_AGREEMENT_CLASSES).to(predicted.dtype)
    return torch.where(fixed.unsqueeze(1), one_hot, predicted)


def agreement_values(
    attributes: torch.Tensor, fixed_classes: torch.Tensor, rows: torch.Tensor, antecedents: torch.Tensor
) -> torch.Tensor:
    """
    `[R, C]` the agreement feature value of each pair, in ``0 .. NUM_AGREEMENT_VALUES - 1``:
    ``fixed pronouns in the pair * NUM_AGREEMENT_BUCKETS + bucket(P(same class))``.

    # Parameters

    attributes : `torch.Tensor`
        `[K, A]` from :func:`span_attributes`.
    fixed_classes : `torch.LongTensor`
        `[K]` fixed class of each kept span, -1 for none.
    rows : `torch.LongTensor`
        `[R]` kept-span indices.
    antecedents : `torch.LongTensor`
        `[R, C]` their antecedents.
    """
    same = (attributes[rows].unsqueeze(1) * attributes[antecedents]).sum(-1)  # [R, C]
    buckets = (same * NUM_AGREEMENT_BUCKETS).long().clamp(0, NUM_AGREEMENT_BUCKETS - 1)
    fixed = fixed_classes >= 0
    num_fixed = fixed[rows].long().unsqueeze(1) + fixed[antecedents].long()
    return num_fixed * NUM_AGREEMENT_BUCKETS + buckets


def cluster_agreement_targets(fixed_classes: torch.Tensor, labels: torch.Tensor, num_clusters: int) -> torch.Tensor:
    """
    `[N, A]` the training target of each span: the share of each class among the fixed pronouns
    of its gold cluster (all zeros for a span outside any gold cluster or in a cluster without a
    third-person pronoun: no target).

    # Parameters

    fixed_classes : `torch.LongTensor`
        `[N]` fixed class of each span, -1 for none.
    labels : `torch.LongTensor`
        `[N]` gold cluster of each span, -1 for none.
    num_clusters : `int`
        At least ``labels.max() + 1``.
    """
    counts = labels.new_zeros((num_clusters + 1, NUM_AGREEMENT_CLASSES), dtype=torch.float)
    pronouns = (fixed_classes >= 0) & (labels >= 0)
    counts.index_put_(
        (labels[pronouns], fixed_classes[pronouns]),
        torch.ones_like(labels[pronouns], dtype=torch.float),
        accumulate=True,
    )
    counts[-1] = 0  # the row of label -1
    totals = counts.sum(-1, keepdim=True).clamp(min=1)
    return (counts / totals)[labels]


def agreement_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """
    Summed cross-entropy of ``logits`` `[N, A]` against soft ``targets`` `[N, A]` (rows of zeros:
    no target, no loss).
    """
    return -(targets * logits.float().log_softmax(-1)).sum()
