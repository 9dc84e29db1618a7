"""Candidate spans shared by coreference (several sentences) and span NER (one sentence)."""

import numpy as np
import pytest

from spanbert_lib.common.candidate_spans import enumerate_candidate_spans, enumerate_sentence_spans


def test_sentence_spans_by_hand():
    candidates = enumerate_sentence_spans(4, max_span_width=2)
    assert candidates.spans.tolist() == [[0, 0], [0, 1], [1, 1], [1, 2], [2, 2], [2, 3], [3, 3]]
    assert candidates.grid.tolist() == [0, 1, 2, 3, 4, 5, 6, -1]
    # too wide, reversed, before the start, past the end
    assert candidates.lookup(np.array([2, 0, 2, -1, 3, 4]), np.array([3, 2, 1, 0, 4, 4])).tolist() == [
        5,
        -1,
        -1,
        -1,
        -1,
        -1,
    ]
    assert len(enumerate_sentence_spans(0, 3)) == 0 and len(enumerate_sentence_spans(2, 5)) == 3


def test_several_sentences_are_the_sentence_spans_of_each():
    lengths, width = [3, 1, 5], 3
    candidates = enumerate_candidate_spans(np.repeat(np.arange(3), lengths), width)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    expected = np.concatenate([enumerate_sentence_spans(n, width).spans + first for n, first in zip(lengths, offsets)])
    assert candidates.spans.tolist() == expected.tolist()
    assert candidates.lookup(expected[:, 0], expected[:, 1]).tolist() == list(range(len(expected)))
    assert candidates.lookup(np.array([2]), np.array([3])).tolist() == [-1]  # crosses a sentence end


def test_max_span_width_must_be_positive():
    with pytest.raises(ValueError, match="max_span_width must be positive"):
        enumerate_sentence_spans(3, 0)
