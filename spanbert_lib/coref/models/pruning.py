"""
Mention pruning of Lee et al. (2017): keep the ``k`` highest-scoring candidate spans, taken
greedily in score order, skipping any span that CROSSES one already kept (nested spans are
allowed, ``s1 < s2 <= e1 < e2`` is not); the kept spans are returned in document order.

The greedy pass is resolved without a loop over spans: crossing pairs among the candidates
considered are found with a sorted-start search, then decisions are propagated in rounds (a
span is kept once every higher-ranked span crossing it is known to be dropped, and dropped as
soon as one of them is kept). Each round decides at least the best undecided span, and in
practice a handful of rounds decide all of them.

Shapes: `N` candidate spans, `M` spans examined, `E` crossing pairs, `K` kept spans.
"""

from typing import Tuple

import torch

from spanbert_lib.coref.models.chunking import row_chunks


def crossing_pairs(starts: torch.Tensor, ends: torch.Tensor, budget: int = 2**22) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    All pairs of crossing spans, each crossing pair once, the earlier-starting span first.

    # Parameters

    starts : `torch.LongTensor`
        `[M]` first offset of each span.
    ends : `torch.LongTensor`
        `[M]` last offset of each span (inclusive).
    budget : `int`, optional (default = `2 ** 22`)
        The work runs on `[rows, widest]` blocks of at most about this many elements.

    # Returns

    `Tuple[torch.LongTensor, torch.LongTensor]`
        ``(first, second)``, both `[E]` span indices, with ``starts[first] < starts[second]
        <= ends[first] < ends[second]``.
    """
    order = torch.argsort(starts, stable=True)
    sorted_starts, sorted_ends = starts[order], ends[order]
    # spans starting strictly inside span i (after its start, at or before its end)
    low = torch.searchsorted(sorted_starts, sorted_starts, right=True)
    high = torch.searchsorted(sorted_starts, sorted_ends, right=True)
    widest = int((high - low).max()) if starts.numel() else 0
    if widest <= 0:
        empty = starts.new_zeros(0)
        return empty, empty
    firsts, seconds = [], []
    for chunk in row_chunks(starts.numel(), widest, budget):
        candidates = low[chunk].unsqueeze(1) + torch.arange(widest, device=starts.device)
        inside = candidates < high[chunk].unsqueeze(1)
        candidates = candidates.clamp(max=starts.numel() - 1)
        crossing = inside & (sorted_ends[candidates] > sorted_ends[chunk].unsqueeze(1))
        rows, columns = crossing.nonzero(as_tuple=True)
        firsts.append(order[chunk][rows])
        seconds.append(order[candidates[rows, columns]])
    return torch.cat(firsts), torch.cat(seconds)


def greedy_non_crossing(starts: torch.Tensor, ends: torch.Tensor) -> torch.Tensor:
    """
    Whether the greedy pass keeps each span: a span is kept iff it crosses no kept span listed
    before it.

    # Parameters

    starts : `torch.LongTensor`
        `[M]` first offset of each span, spans listed best first.
    ends : `torch.LongTensor`
        `[M]` last offset of each span (inclusive).

    # Returns

    `torch.BoolTensor`
        `[M]` True for the kept spans.
    """
    num_spans = starts.numel()
    first, second = crossing_pairs(starts, ends)
    better = torch.minimum(first, second)  # rank of the better span of each pair
    worse = torch.maximum(first, second)
    UNDECIDED, KEPT, DROPPED = 0, 1, 2
    state = torch.zeros(num_spans, dtype=torch.long, device=starts.device)
    while True:
        # pairs that can still matter: the worse span undecided, the better one not dropped
        live = (state[worse] == UNDECIDED) & (state[better] != DROPPED)
        better, worse = better[live], worse[live]
        undecided = state == UNDECIDED
        if not bool(undecided.any()):
            return state == KEPT
        better_state = state[better]
        kept_better = torch.zeros(num_spans, dtype=torch.bool, device=starts.device)
        kept_better[worse[better_state == KEPT]] = True
        open_better = torch.zeros(num_spans, dtype=torch.bool, device=starts.device)
        open_better[worse[better_state == UNDECIDED]] = True
        state = torch.where(undecided & kept_better, DROPPED, state)
        state = torch.where(undecided & ~kept_better & ~open_better, KEPT, state)


def prune_non_crossing(
    scores: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor, num_to_keep: int
) -> torch.Tensor:
    """
    The spans the greedy non-crossing pass keeps, at most ``num_to_keep``. Ties in
    score are broken by index (the earlier span first).

    Only the best ``2 * num_to_keep`` spans are examined at first (more, doubling, if too many
    of them cross): the greedy decision for a span depends only on better spans.

    # Parameters

    scores : `torch.Tensor`
        `[N]` mention score of each candidate span.
    starts : `torch.LongTensor`
        `[N]` first offset of each span.
    ends : `torch.LongTensor`
        `[N]` last offset of each span (inclusive).
    num_to_keep : `int`
        Most spans to keep.

    # Returns

    `torch.LongTensor`
        `[K]` indices of the kept spans, sorted by (start, end), with
        ``K = min(num_to_keep, number of spans the greedy pass can keep)``.
    """
    total = scores.numel()
    num_to_keep = min(int(num_to_keep), total)
    if num_to_keep <= 0:
        return torch.zeros(0, dtype=torch.long, device=scores.device)
    ranking = torch.argsort(scores, descending=True, stable=True)
    examined = min(total, 2 * num_to_keep)
    while True:
        candidates = ranking[:examined]
        kept = candidates[greedy_non_crossing(starts[candidates], ends[candidates])]
        if kept.numel() >= num_to_keep or examined == total:
            break
        examined = min(total, 2 * examined)
    kept = kept[:num_to_keep]
    # document order: by start, then end
    order = torch.argsort(ends[kept], stable=True)
    order = order[torch.argsort(starts[kept][order], stable=True)]
    return kept[order]
