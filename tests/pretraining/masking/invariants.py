"""Checks every masking output must pass, written span by span from the definitions."""

import numpy as np
import torch

from spanbert_lib.pretraining.masking import IGNORE_INDEX, REPLACE_KEEP, REPLACE_MASK, REPLACE_RANDOM, MaskingOutput


def assert_valid_masking(
    output: MaskingOutput, input_ids: torch.Tensor, word_ids: torch.Tensor, mask_token_id: int, vocab_size: int
) -> None:
    original, words = input_ids.numpy(), word_ids.numpy()
    new_ids, labels = output.input_ids.numpy(), output.labels.numpy()
    span_starts, span_ends = output.span_starts.numpy(), output.span_ends.numpy()
    spans = output.spans.numpy()
    replacement, num_words = output.span_replacement.numpy(), output.span_num_words.numpy()
    for tensor in (output.input_ids, output.labels, output.span_starts, output.span_ends):
        assert tensor.shape == input_ids.shape and tensor.dtype == torch.long
    assert spans.shape == (len(replacement), 3) and num_words.shape == replacement.shape

    expected_labels = np.full_like(original, IGNORE_INDEX)
    expected_starts = np.full_like(original, -1)
    expected_ends = np.full_like(original, -1)
    expected_ids = original.copy()
    previous = (-1, -1)
    for (row, first, last), decision, words_in_span in zip(spans.tolist(), replacement.tolist(), num_words.tolist()):
        assert (row, first) > previous, "spans must be sorted and must not overlap"
        assert row > previous[0] or first > previous[1]
        previous = (row, last)
        assert 0 < first <= last < original.shape[1] - 1
        assert (words[row, first : last + 1] >= 0).all(), "a span covers a non-maskable position"
        assert words_in_span == len(set(words[row, first : last + 1].tolist()))
        expected_labels[row, first : last + 1] = original[row, first : last + 1]
        expected_starts[row, first : last + 1] = first
        expected_ends[row, first : last + 1] = last
        pieces = new_ids[row, first : last + 1]
        if decision == REPLACE_MASK:
            expected_ids[row, first : last + 1] = mask_token_id
        elif decision == REPLACE_RANDOM:
            assert ((pieces >= 0) & (pieces < vocab_size)).all()
            expected_ids[row, first : last + 1] = pieces
        else:
            assert decision == REPLACE_KEEP
    np.testing.assert_array_equal(labels, expected_labels)
    np.testing.assert_array_equal(span_starts, expected_starts)
    np.testing.assert_array_equal(span_ends, expected_ends)
    np.testing.assert_array_equal(new_ids, expected_ids)
    assert (labels[words < 0] == IGNORE_INDEX).all()


def span_is_whole_words(word_ids: np.ndarray, row: int, first: int, last: int) -> bool:
    starts_word = word_ids[row, first] >= 0 and (first == 0 or word_ids[row, first - 1] != word_ids[row, first])
    ends_word = last + 1 == word_ids.shape[1] or word_ids[row, last + 1] != word_ids[row, last]
    return bool(starts_word and ends_word)
