"""
SpanBERT's span masking (Joshi et al. 2020, section 3.1).

Shapes: `B` sequences in a batch, `K` span lengths ``min_span_length .. max_span_length``.
"""

import logging
import math
from typing import Optional

import numpy as np
import torch

from spanbert_lib.pretraining.masking.masker import Masker, SpanSelection, empty_selection
from spanbert_lib.pretraining.masking.randomness import uniforms
from spanbert_lib.pretraining.masking.units import word_runs

logger = logging.getLogger(__name__)

_ROUNDS_PER_DRAW = 16


def truncated_geometric_pmf(p: float, max_length: int, min_length: int = 1) -> torch.Tensor:
    """
    The span length distribution: P(length = min_length + k) proportional to p (1-p)^k,
    renormalised over [min_length, max_length]. This is the paper's "Geo(p) clipped at l_max"
    (and the original implementation): mean 3.8 words for p = 0.2, l_max = 10 (piling the
    cut-off mass on l_max instead would give 4.46).

    # Parameters

    p : `float`
        The geometric parameter, in (0, 1].
    max_length : `int`
        Longest span, in words.
    min_length : `int`, optional (default = `1`)
        Shortest span, in words.

    # Returns

    `torch.Tensor`
        `[max_length - min_length + 1]` float64 probabilities.
    """
    if not 0.0 < p <= 1.0:
        raise ValueError(f"geometric p must be in (0, 1], got {p}")
    if not 1 <= min_length <= max_length:
        raise ValueError(f"need 1 <= min_span_length <= max_span_length, got {min_length} and {max_length}")
    weights = p * (1.0 - p) ** torch.arange(max_length - min_length + 1, dtype=torch.float64)
    return weights / weights.sum()


@Masker.register("geometric_span")
class GeometricSpanMasker(Masker):
    """
    Masks spans of whole words until about ``masking_budget`` of each sequence's maskable
    tokens are masked. A span length l (in words) is drawn from :func:`truncated_geometric_pmf`;
    its first word is drawn uniformly among the words where l words fit before the end of the
    sequence; the span covers all pieces of its words. A start whose span would overlap an
    earlier span or cross a non-maskable position is redrawn for the same l (so accepted
    lengths keep the geometric distribution); after ``max_start_attempts`` failed starts l
    itself is redrawn.

    Stopping: while masked < budget, a sequence decides whether to add one more span *before*
    drawing it, with probability d / (d + E[(X - d)+]) where d = budget - masked and X the
    tokens of a span (approximated as l * the sequence's tokens per word). Since whether a span
    is added never depends on its own length, accepted lengths follow the geometric
    distribution (Wald's identity; only the rare redraws after ``max_start_attempts`` and
    sequences shorter than l words depart from it), and the masked fraction equals the budget in
    expectation (up to that approximation); each sequence ends within one span of its budget.
    (Stopping at the first span that crosses the budget and keeping or truncating it, as the
    original code does, would bias the lengths or the fraction.)

    Vectorised over the batch: each round places or tries one candidate span in every
    unfinished sequence (about 20-40 rounds for 512-token blocks).

    # Parameters

    geometric_p : `float`, optional (default = `0.2`)
        The p of the span length distribution.
    max_span_length : `int`, optional (default = `10`)
        Longest span, in words.
    min_span_length : `int`, optional (default = `1`)
        Shortest span, in words.
    max_start_attempts : `int`, optional (default = `10`)
        Failed starts after which a span's length is redrawn.
    **kwargs
        The :class:`Masker` arguments (``masking_budget``, ``mask_probability``,
        ``random_probability``).
    """

    def __init__(
        self,
        geometric_p: float = 0.2,
        max_span_length: int = 10,
        min_span_length: int = 1,
        max_start_attempts: int = 10,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        if max_start_attempts < 1:
            raise ValueError(f"max_start_attempts must be >= 1, got {max_start_attempts}")
        self.geometric_p = geometric_p
        self.min_span_length = min_span_length
        self.max_span_length = max_span_length
        self.max_start_attempts = max_start_attempts
        self.length_pmf = truncated_geometric_pmf(geometric_p, max_span_length, min_span_length)
        self._length_cdf = self.length_pmf.cumsum(0).numpy()

    def sample_lengths(self, uniforms: np.ndarray) -> np.ndarray:
        """
        Span lengths by inverse CDF.

        # Parameters

        uniforms : `np.ndarray`
            Draws in [0, 1), any shape.

        # Returns

        `np.ndarray`
            int64 span lengths in words, same shape.
        """
        index = np.searchsorted(self._length_cdf, uniforms, side="right")
        return np.minimum(index, self._length_cdf.shape[0] - 1) + self.min_span_length

    def select_spans(
        self,
        word_ids: np.ndarray,
        budget: np.ndarray,
        *,
        phrase_ids: Optional[np.ndarray] = None,
        generator: Optional[torch.Generator] = None,
    ) -> SpanSelection:
        words = word_runs(word_ids)
        batch_size, num_slots = words.starts.shape
        if num_slots == 0:
            return empty_selection()
        # Flat views for cheap gathers: word k of row b is at b * num_slots + k.
        row_offset = np.arange(batch_size) * num_slots
        flat_starts, flat_ends = words.starts.ravel(), words.ends.ravel()
        # Words separated by a non-maskable position are in different segments; a span stays in one.
        breaks = np.zeros_like(words.starts)
        breaks[:, 1:] = words.starts[:, 1:] != words.ends[:, :-1] + 1
        flat_segment = np.cumsum(breaks, axis=1).ravel()
        num_words = np.maximum(words.counts, 1)
        tokens_per_word = words.num_tokens.sum(axis=1) / num_words
        span_lengths = np.arange(self.min_span_length, self.max_span_length + 1)
        # [B, K]: roughly the tokens a span of each length covers in each sequence.
        expected_tokens = tokens_per_word[:, None] * np.minimum(span_lengths, num_words[:, None])
        length_pmf = self.length_pmf.numpy()

        masked = np.zeros(batch_size)
        active = (words.counts > 0) & (budget > 0)
        pending = np.zeros(batch_size, dtype=bool)
        lengths = np.zeros(batch_size, dtype=np.int64)
        failures = np.zeros(batch_size, dtype=np.int64)
        # Accepted spans as word intervals, one column per round; (num_slots, -1) overlaps nothing.
        first_word = np.full((batch_size, 64), num_slots, dtype=np.int64)
        last_word = np.full((batch_size, 64), -1, dtype=np.int64)
        # Each round a sequence gains >= 1 token or fails a start; this only stops degenerate cases.
        max_rounds = 10 * math.ceil(float(budget.max())) + 100

        rounds = 0
        while rounds < max_rounds and active.any():
            if rounds == first_word.shape[1]:
                first_word = np.concatenate([first_word, np.full_like(first_word, num_slots)], axis=1)
                last_word = np.concatenate([last_word, np.full_like(last_word, -1)], axis=1)
            if rounds % _ROUNDS_PER_DRAW == 0:
                draws = uniforms((_ROUNDS_PER_DRAW, 3, batch_size), generator)
                drawn_lengths = self.sample_lengths(draws[:, 1])
            decide_draw, start_draw = draws[rounds % _ROUNDS_PER_DRAW, 0], draws[rounds % _ROUNDS_PER_DRAW, 2]

            # Sequences without a span to place decide whether to add one, before drawing it.
            deficit = budget - masked
            overshoot = np.maximum(expected_tokens - deficit[:, None], 0.0) @ length_pmf
            deciding = active & ~pending
            go_on = decide_draw * (deficit + overshoot) < deficit
            active &= ~deciding | go_on
            redraw = (deciding & go_on) | (failures >= self.max_start_attempts)
            pending |= deciding & go_on
            lengths = np.where(redraw, drawn_lengths[rounds % _ROUNDS_PER_DRAW], lengths)
            failures = np.where(redraw, 0, failures)

            length = np.minimum(lengths, num_words)
            num_starts = num_words - np.maximum(length, 1) + 1
            start = np.minimum((start_draw * num_starts).astype(np.int64), num_starts - 1)
            end = start + np.maximum(length, 1) - 1
            flat_start, flat_end = row_offset + start, row_offset + end
            overlaps = ((start[:, None] <= last_word[:, :rounds]) & (first_word[:, :rounds] <= end[:, None])).any(
                axis=1
            )
            accept = pending & (flat_segment.take(flat_start) == flat_segment.take(flat_end)) & ~overlaps

            masked += accept * (flat_ends.take(flat_end) - flat_starts.take(flat_start) + 1)
            first_word[:, rounds] = np.where(accept, start, num_slots)
            last_word[:, rounds] = np.where(accept, end, -1)
            pending &= ~accept
            active &= pending | (masked < budget)
            failures = np.where(pending, failures + 1, 0)
            rounds += 1
        if active.any():
            logger.warning(
                "span masking stopped after %d rounds with %d sequences still under budget (sequences %s...)",
                rounds,
                int(active.sum()),
                np.flatnonzero(active)[:5].tolist(),
            )

        span_rows, columns = np.nonzero(last_word[:, :rounds] >= 0)
        span_first_word, span_last_word = first_word[span_rows, columns], last_word[span_rows, columns]
        return SpanSelection(
            batch=span_rows,
            first=words.starts[span_rows, span_first_word],
            last=words.ends[span_rows, span_last_word],
            num_words=span_last_word - span_first_word + 1,
        )
