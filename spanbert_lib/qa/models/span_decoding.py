"""
Vectorised answer-span decoding over every window of each question (BERT/SpanBERT rules):
a span is scored ``start_logit[start] + end_logit[end]`` within one window, with
``start <= end``, ``end - start + 1 <= max_answer_length``, both ends in the passage part,
(optionally) the start in its max-context window and (optionally) the start at the first and the
end at the last wordpiece of a word (:func:`window_word_boundaries`): all of it masks on the
start / end logits. The n best spans are the exact top-n of all
valid spans of all windows (not BERT's top-20-starts x top-20-ends approximation).
The no-answer ("null") score is ``start_logit[0] + end_logit[0]`` ([CLS]), its minimum over the
windows of the question (as BERT/Hugging Face do).

Shapes: `B` questions in a batch, `W` windows per question, `T` positions per window, `K`
answer lengths considered (``min(max_answer_length, T)``), `N` passage tokens, `k` spans kept.
"""

from typing import NamedTuple

import torch
import torch.nn.functional as F


class TopSpans(NamedTuple):
    """
    The best spans of each question, best first; invalid entries (fewer than ``k`` valid spans)
    score -inf.

    # Parameters

    scores : `torch.Tensor`
        `[B, k]` span scores.
    windows : `torch.Tensor`
        `[B, k]` window of each span.
    starts : `torch.Tensor`
        `[B, k]` start position of each span in its window.
    ends : `torch.Tensor`
        `[B, k]` end position (inclusive).
    """

    scores: torch.Tensor
    windows: torch.Tensor
    starts: torch.Tensor
    ends: torch.Tensor


def span_candidate_scores(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    start_mask: torch.Tensor,
    end_mask: torch.Tensor,
    max_answer_length: int,
) -> torch.Tensor:
    """
    The score of every span of at most ``max_answer_length`` positions.

    # Parameters

    start_logits : `torch.Tensor`
        `[B, W, T]`.
    end_logits : `torch.Tensor`
        `[B, W, T]`.
    start_mask : `torch.Tensor`
        `[B, W, T]` bool, positions allowed as span start.
    end_mask : `torch.Tensor`
        `[B, W, T]` bool, positions allowed as span end.
    max_answer_length : `int`
        Longest span, in positions.

    # Returns

    `torch.Tensor`
        `[B, W, T, K]` with ``K = min(max_answer_length, T)``: entry ``[b, w, s, j]`` is the
        score of the span from ``s`` to ``s + j`` in window ``w``, -inf when that span is not
        allowed.
    """
    length = start_logits.size(-1)
    k = min(max_answer_length, length)
    negative_infinity = float("-inf")
    ends = end_logits.masked_fill(~end_mask, negative_infinity)
    # ends_by_length[..., s, j] = ends[..., s + j]; positions past the window are -inf
    ends_by_length = F.pad(ends, (0, k - 1), value=negative_infinity).unfold(-1, k, 1)
    starts = start_logits.masked_fill(~start_mask, negative_infinity)
    return starts.unsqueeze(-1) + ends_by_length


def top_spans(candidate_scores: torch.Tensor, k: int) -> TopSpans:
    """
    The ``k`` best spans of each question.

    # Parameters

    candidate_scores : `torch.Tensor`
        `[B, W, T, K]` from :func:`span_candidate_scores`.
    k : `int`
        How many spans to keep (fewer when there are fewer candidates).

    # Returns

    `TopSpans`
        Scores, windows, starts and ends, each `[B, k]`.
    """
    batch, windows, length, max_len = candidate_scores.shape
    flat = candidate_scores.reshape(batch, -1)
    scores, index = flat.topk(min(k, flat.size(1)), dim=1)
    window = torch.div(index, length * max_len, rounding_mode="floor")
    start = torch.div(index, max_len, rounding_mode="floor") % length
    end = start + index % max_len
    return TopSpans(scores, window, start, end)


def null_scores(start_logits: torch.Tensor, end_logits: torch.Tensor, window_mask: torch.Tensor) -> torch.Tensor:
    """
    The no-answer score of each question.

    # Parameters

    start_logits : `torch.Tensor`
        `[B, W, T]`.
    end_logits : `torch.Tensor`
        `[B, W, T]`.
    window_mask : `torch.Tensor`
        `[B, W]` bool, the real windows.

    # Returns

    `torch.Tensor`
        `[B]`: min over the real windows of ``start[..., 0] + end[..., 0]``.
    """
    null = start_logits[..., 0] + end_logits[..., 0]
    return null.masked_fill(~window_mask, float("inf")).min(dim=1).values


def window_word_boundaries(context_word_boundaries: torch.Tensor, context_token_index: torch.Tensor):
    """
    Per-position word boundaries of every window from the per-passage-token ones.

    # Parameters

    context_word_boundaries : `torch.Tensor`
        `[B, N, 2]` bool, whether passage token ``n`` starts / ends a word.
    context_token_index : `torch.Tensor`
        `[B, W, T]`, the passage token at each window position, -1 elsewhere.

    # Returns

    `Tuple[torch.Tensor, torch.Tensor]`
        ``(word_starts, word_ends)``, each `[B, W, T]` bool (False outside the passage).
    """
    batch, windows, length = context_token_index.shape
    tokens = context_token_index.reshape(batch, windows * length).long()
    in_passage = (tokens >= 0).view(batch, windows, length)
    gathered = context_word_boundaries.bool().gather(1, tokens.clamp(min=0).unsqueeze(-1).expand(-1, -1, 2))
    gathered = gathered.view(batch, windows, length, 2) & in_passage.unsqueeze(-1)
    return gathered[..., 0], gathered[..., 1]
