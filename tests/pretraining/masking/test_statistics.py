import json

import pytest
import torch

from spanbert_lib.pretraining.masking import (
    IGNORE_INDEX,
    REPLACE_KEEP,
    REPLACE_MASK,
    REPLACE_RANDOM,
    GeometricSpanMasker,
    MaskingOutput,
    MaskingStatistics,
    plot_span_length_histogram,
)
from tests.pretraining.masking.synthetic import MASK, VOCAB_SIZE, make_blocks

REQUIRED_KEYS = {
    "masked_fraction",
    "mean_span_length_words",
    "span_length_histogram",
    "replacement",
    "spans_start_at_word_start",
    "num_tokens",
}


def hand_made_output():
    """
    Row 0: word_ids [-1, 0, 0, 1, 2, 2, 3, -1], spans (1-3: words 0-1, [MASK]) and (5-5: the
    second piece of word 2, random). Row 1: word_ids [-1, 0, 1, 1, 1, 2, -1, -1], span (2-4:
    word 1, kept).
    """
    word_ids = torch.tensor([[-1, 0, 0, 1, 2, 2, 3, -1], [-1, 0, 1, 1, 1, 2, -1, -1]])
    input_ids = torch.arange(16).view(2, 8) + 1000
    labels = torch.full_like(input_ids, IGNORE_INDEX)
    span_starts, span_ends = torch.full_like(input_ids, -1), torch.full_like(input_ids, -1)
    spans = torch.tensor([[0, 1, 3], [0, 5, 5], [1, 2, 4]])
    for row, first, last in spans.tolist():
        labels[row, first : last + 1] = input_ids[row, first : last + 1]
        span_starts[row, first : last + 1], span_ends[row, first : last + 1] = first, last
    output = MaskingOutput(
        input_ids=input_ids,
        labels=labels,
        span_starts=span_starts,
        span_ends=span_ends,
        spans=spans,
        span_replacement=torch.tensor([REPLACE_MASK, REPLACE_RANDOM, REPLACE_KEEP]),
        span_num_words=torch.tensor([2, 1, 1]),
    )
    return output, word_ids


def test_statistics_computed_by_hand():
    output, word_ids = hand_made_output()
    statistics = MaskingStatistics()
    statistics.update(output, word_ids)
    result = statistics.get_statistics()
    assert REQUIRED_KEYS <= set(result)
    assert result["num_tokens"] == 11  # 6 + 5 positions with word_ids >= 0
    assert result["masked_fraction"] == pytest.approx(7 / 11)
    assert result["mean_span_length_words"] == pytest.approx(4 / 3)
    assert result["span_length_histogram"] == {1: 2, 2: 1}
    assert result["replacement"] == pytest.approx({"mask": 1 / 3, "random": 1 / 3, "keep": 1 / 3})
    assert result["spans_start_at_word_start"] == pytest.approx(2 / 3)  # (0, 5, 5) starts mid-word
    assert result["spans_end_at_word_end"] == pytest.approx(1.0)
    assert result["num_spans"] == 3 and result["num_sequences"] == 2 and result["num_masked_tokens"] == 7
    assert result["mean_span_length_tokens"] == pytest.approx(7 / 3)
    assert result["masked_special_tokens"] == 0
    json.dumps(result)


def test_statistics_accumulate_over_batches_and_reset():
    input_ids, word_ids, _ = make_blocks(40, seed=1)
    masker, generator = GeometricSpanMasker(), torch.Generator().manual_seed(0)
    outputs = [
        masker.mask(
            input_ids[i : i + 20], word_ids[i : i + 20], mask_token_id=MASK, vocab_size=VOCAB_SIZE, generator=generator
        )
        for i in (0, 20)
    ]
    accumulated = MaskingStatistics()
    for index, output in enumerate(outputs):
        accumulated.update(output, word_ids[index * 20 : (index + 1) * 20])
    result = accumulated.get_statistics()
    total_spans = sum(len(output.spans) for output in outputs)
    total_masked = sum(int(output.masked_positions.sum()) for output in outputs)
    assert result["num_spans"] == total_spans == sum(result["span_length_histogram"].values())
    assert result["masked_fraction"] == pytest.approx(total_masked / int((word_ids >= 0).sum()))
    all_lengths = torch.cat([output.span_num_words for output in outputs])
    assert result["mean_span_length_words"] == pytest.approx(all_lengths.float().mean().item())
    assert result["span_length_histogram"] == {
        length: int((all_lengths == length).sum()) for length in all_lengths.unique().tolist()
    }
    assert result["spans_start_at_word_start"] == 1.0 and result["masked_special_tokens"] == 0
    accumulated.reset()
    empty = accumulated.get_statistics()
    assert empty["num_tokens"] == 0 and empty["masked_fraction"] == 0.0 and empty["span_length_histogram"] == {}


def test_histogram_plot_writes_a_png(tmp_path):
    path = tmp_path / "lengths.png"
    plot_span_length_histogram(
        {"1": 22, "2": 18, "3": 14, "10": 3}, path, reference_pmf={1: 0.22, 2: 0.18, 3: 0.14, 10: 0.03}, title="test"
    )
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    with pytest.raises(ValueError, match="empty"):
        plot_span_length_histogram({}, tmp_path / "empty.png")
