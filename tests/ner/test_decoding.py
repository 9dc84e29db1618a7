"""Flat and nested greedy span decoding, worked out by hand."""

import numpy as np
import torch

from spanbert_lib.ner.decoding import decode_batch, decode_flat, decode_nested

# spans (0,0) (0,1) (1,1) (2,3) (3,3); label 0 = O
SPANS = [[0, 0], [0, 1], [1, 1], [2, 3], [3, 3]]
LABELS = [1, 1, 0, 2, 2]
SCORES = [0.6, 0.9, 0.99, 0.7, 0.95]


def test_flat_keeps_the_best_non_overlapping_spans():
    # by score among non-O: (3,3) .95 kept, (0,1) .9 kept, (2,3) .7 overlaps (3,3), (0,0) .6 overlaps (0,1);
    # (1,1) has the top score but is O
    assert decode_flat(SPANS, LABELS, SCORES) == [(0, 1, 1), (3, 3, 2)]
    assert decode_flat(
        torch.tensor(SPANS), torch.tensor(LABELS), torch.tensor(SCORES), label_names=["O", "PER", "LOC"]
    ) == [(0, 1, "PER"), (3, 3, "LOC")]
    # masking (0,1) out lets (0,0) in
    assert decode_flat(SPANS, LABELS, SCORES, mask=[True, False, True, True, True]) == [(0, 0, 1), (3, 3, 2)]
    # another id for O: label 0 spans are entities, label 2 spans are not: (1,1) .99 kept, (0,1) .9 overlaps it,
    # (0,0) .6 kept
    assert decode_flat(SPANS, LABELS, SCORES, outside_label=2) == [(0, 0, 1), (1, 1, 0)]
    assert decode_flat(np.zeros((0, 2)), [], []) == []


def test_nested_drops_only_crossing_spans():
    # same input: nesting allowed, so (2,3) around (3,3) and (0,0) inside (0,1) are kept
    assert decode_nested(SPANS, LABELS, SCORES) == [(0, 0, 1), (0, 1, 1), (2, 3, 2), (3, 3, 2)]
    spans = [[0, 2], [1, 3], [2, 4], [1, 1], [3, 4], [0, 4]]
    labels = [1, 2, 1, 1, 2, 1]
    scores = [0.9, 0.8, 0.85, 0.5, 0.7, 0.4]
    # (0,2) kept; (2,4) crosses it; (1,3) crosses it; (3,4) does not overlap (0,2) (dropped (2,4) and (1,3) do
    # not count); (1,1) nested in (0,2); (0,4) contains everything
    assert decode_nested(spans, labels, scores) == [(0, 2, 1), (0, 4, 1), (1, 1, 1), (3, 4, 2)]
    assert decode_flat(spans, labels, scores) == [(0, 2, 1), (3, 4, 2)]


def test_ties_keep_input_order_and_padding_is_ignored():
    assert decode_flat([[0, 1], [1, 2]], [1, 2], [0.5, 0.5]) == [(0, 1, 1)]
    assert decode_flat([[1, 2], [0, 1]], [2, 1], [0.5, 0.5]) == [(1, 2, 2)]
    # padded spans of an allennlp ListField[SpanField] are (-1, -1)
    assert decode_flat([[0, 0], [-1, -1]], [1, 1], [0.1, 0.9]) == [(0, 0, 1)]


def test_batch():
    spans = torch.tensor([SPANS, [[0, 0], [0, 1], [1, 1], [-1, -1], [-1, -1]]])
    labels = torch.tensor([LABELS, [1, 0, 2, 1, 1]])
    scores = torch.tensor([SCORES, [0.3, 0.9, 0.4, 0.9, 0.9]])
    mask = torch.tensor([[True] * 5, [True, True, True, False, False]])
    assert decode_batch(spans, labels, scores, mask) == [[(0, 1, 1), (3, 3, 2)], [(0, 0, 1), (1, 1, 2)]]
    assert decode_batch(spans, labels, scores, mask, nested=True)[0] == [(0, 0, 1), (0, 1, 1), (2, 3, 2), (3, 3, 2)]
