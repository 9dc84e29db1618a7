"""Statistics of masked batches (masked fraction, span lengths, replacements) and their plot."""

import os
from typing import Any, Dict, Mapping, Optional, Union

import torch

from spanbert_lib.pretraining.masking.output import REPLACE_KEEP, REPLACE_MASK, REPLACE_RANDOM, MaskingOutput
from spanbert_lib.pretraining.masking.units import batch_word_starts


class MaskingStatistics:
    """
    Accumulates over batches: call :meth:`update` with each :class:`MaskingOutput` and the
    ``word_ids`` it was made from, then :meth:`get_statistics`.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.num_sequences = 0
        self.num_tokens = 0
        self.num_masked_tokens = 0
        self.num_masked_special = 0
        self.num_spans = 0
        self.span_tokens = 0
        self.span_words = 0
        self.spans_at_word_start = 0
        self.spans_at_word_end = 0
        self.replacement_counts = torch.zeros(3, dtype=torch.long)
        self.length_counts = torch.zeros(0, dtype=torch.long)

    def update(self, output: MaskingOutput, word_ids: torch.Tensor) -> None:
        """
        Adds one masked batch.

        # Parameters

        output : `MaskingOutput`
            A masked batch.
        word_ids : `torch.Tensor`
            `[B, L]` long, the ``word_ids`` given to the masker (`B` blocks of length `L`).
        """
        word_ids = word_ids.detach().cpu()
        masked = output.masked_positions.cpu()
        spans = output.spans.cpu()
        num_words = output.span_num_words.cpu()
        length = word_ids.shape[1]
        self.num_sequences += word_ids.shape[0]
        self.num_tokens += int((word_ids >= 0).sum())
        self.num_masked_tokens += int(masked.sum())
        self.num_masked_special += int((masked & (word_ids < 0)).sum())
        word_starts = torch.from_numpy(batch_word_starts(word_ids.numpy()))

        rows, first, last = spans[:, 0], spans[:, 1], spans[:, 2]
        self.num_spans += spans.shape[0]
        self.span_tokens += int((last - first + 1).sum())
        self.span_words += int(num_words.sum())
        self.spans_at_word_start += int(word_starts[rows, first].sum())
        next_word = torch.where(last + 1 < length, word_ids[rows, (last + 1).clamp(max=length - 1)], -1)
        last_word = word_ids[rows, last]
        self.spans_at_word_end += int(((last_word >= 0) & (next_word != last_word)).sum())

        self.replacement_counts += torch.bincount(output.span_replacement.cpu(), minlength=3)[:3]
        counts = torch.bincount(num_words, minlength=self.length_counts.shape[0])
        counts[: self.length_counts.shape[0]] += self.length_counts
        self.length_counts = counts

    def get_statistics(self) -> Dict[str, Any]:
        """
        The statistics of the batches added so far.

        # Returns

        `Dict[str, Any]`
            ``masked_fraction``: masked / maskable tokens; ``mean_span_length_words``;
            ``span_length_histogram``: {words: spans}; ``replacement``: {"mask", "random",
            "keep"} fractions of spans; ``spans_start_at_word_start`` /
            ``spans_end_at_word_end``: fractions of spans; ``num_tokens``: maskable tokens seen;
            also ``num_sequences``, ``num_spans``, ``num_masked_tokens``,
            ``masked_special_tokens`` (masked positions with word_ids < 0, should be 0) and
            ``mean_span_length_tokens``.
        """
        spans = max(self.num_spans, 1)
        return {
            "masked_fraction": self.num_masked_tokens / max(self.num_tokens, 1),
            "mean_span_length_words": self.span_words / spans,
            "span_length_histogram": {
                length: int(count) for length, count in enumerate(self.length_counts.tolist()) if count
            },
            "replacement": {
                "mask": int(self.replacement_counts[REPLACE_MASK]) / spans,
                "random": int(self.replacement_counts[REPLACE_RANDOM]) / spans,
                "keep": int(self.replacement_counts[REPLACE_KEEP]) / spans,
            },
            "spans_start_at_word_start": self.spans_at_word_start / spans,
            "spans_end_at_word_end": self.spans_at_word_end / spans,
            "num_tokens": self.num_tokens,
            "num_sequences": self.num_sequences,
            "num_spans": self.num_spans,
            "num_masked_tokens": self.num_masked_tokens,
            "masked_special_tokens": self.num_masked_special,
            "mean_span_length_tokens": self.span_tokens / spans,
        }


def plot_span_length_histogram(
    histogram: Mapping[Union[int, str], int],
    path: Union[str, os.PathLike],
    *,
    reference_pmf: Optional[Mapping[int, float]] = None,
    title: Optional[str] = None,
) -> None:
    """
    Writes a PNG bar chart of the fraction of spans of each length in words (as the paper's
    Figure 2).

    # Parameters

    histogram : `Mapping[Union[int, str], int]`
        {length: count} (string keys, as after a JSON round trip, are accepted).
    path : `Union[str, os.PathLike]`
        The PNG file to write.
    reference_pmf : `Mapping[int, float]`, optional (default = `None`)
        {length: probability} drawn as markers, e.g. the sampling distribution.
    title : `str`, optional (default = `None`)
        The chart's title.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    counts = {int(length): int(count) for length, count in histogram.items()}
    total = sum(counts.values())
    if total == 0:
        raise ValueError("span length histogram is empty: nothing was masked")
    lengths = sorted(counts)
    figure = Figure(figsize=(6, 4))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    axes.bar(lengths, [counts[length] / total for length in lengths], color="#4c72b0", label="masked spans")
    if reference_pmf:
        reference = sorted((int(length), float(p)) for length, p in reference_pmf.items())
        axes.plot([x for x, _ in reference], [p for _, p in reference], "o", color="#dd8452", label="sampling pmf")
        axes.legend()
    axes.set_xlabel("span length (words)")
    axes.set_ylabel("fraction of spans")
    axes.set_xticks(lengths)
    axes.set_title(title or f"Span lengths ({total} spans)")
    figure.tight_layout()
    figure.savefig(os.fspath(path), format="png", dpi=100)
