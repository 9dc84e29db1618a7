"""The split of candidate spans into encoder passes, checked by hand."""

import pytest
import torch

from spanbert_lib.ner.models.span_chunks import SpanChunkLayout


def test_spans_are_spread_evenly_per_instance():
    # instance 0: 10 real spans; instance 1: 3 (then padding); instance 2: none
    mask = torch.tensor([[True] * 10 + [False] * 2, [True] * 3 + [False] * 9, [False] * 12])
    layout = SpanChunkLayout(mask, max_per_pass=4)
    # 10 spans, at most 4 a pass -> 3 passes of ceil(10 / 3) = 4 slots: 4, 4, 2; 3 spans -> 1 pass of 3
    assert layout.passes.tolist() == [3, 1, 0]
    assert layout.sizes.tolist() == [4, 3, 0]
    assert (layout.num_rows, layout.num_slots) == (4, 4)
    assert layout.row_instance.tolist() == [0, 0, 0, 1]
    assert layout.flat_index[0, :10].tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert layout.flat_index[1, :3].tolist() == [12, 13, 14]  # row 3, slots 0..2
    values = torch.arange(36, dtype=torch.float).view(3, 12)
    packed = layout.pack(values, fill=-1)
    assert packed.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, -1, -1], [12, 13, 14, -1]]
    assert layout.slot_mask().tolist() == [
        [True] * 4,
        [True] * 4,
        [True, True, False, False],
        [True, True, True, False],
    ]
    unpacked = layout.unpack(packed)
    expected = values * mask  # padded spans come back as zeros
    assert torch.equal(unpacked, expected)


def test_the_split_ignores_padding_and_other_instances():
    alone = SpanChunkLayout(torch.ones(1, 7, dtype=torch.bool), max_per_pass=3)
    # 7 spans, 3 a pass -> 3 passes of ceil(7 / 3) = 3: 3, 3, 1
    assert alone.pack(torch.arange(7).view(1, 7), fill=-1).tolist() == [[0, 1, 2], [3, 4, 5], [6, -1, -1]]
    mask = torch.tensor([[True] * 7 + [False] * 5, [True] * 12])
    batch = SpanChunkLayout(mask, max_per_pass=3)
    packed = batch.pack(torch.arange(24).view(2, 12), fill=-1)
    assert packed[:3].tolist() == [[0, 1, 2], [3, 4, 5], [6, -1, -1]]  # the same passes as alone
    assert packed[3:].tolist() == [[12, 13, 14], [15, 16, 17], [18, 19, 20], [21, 22, 23]]


def test_real_spans_need_not_be_a_prefix_and_vectors_round_trip():
    mask = torch.tensor([[False, True, True, False, True]])
    layout = SpanChunkLayout(mask, max_per_pass=2)
    # 3 spans, 2 a pass -> 2 passes of 2 slots: (1, 2), (4, -)
    values = torch.arange(10, dtype=torch.float).view(1, 5, 2)
    packed = layout.pack(values, fill=0)
    assert packed.tolist() == [[[2, 3], [4, 5]], [[8, 9], [0, 0]]]
    assert layout.unpack(packed).tolist() == [[[0, 0], [2, 3], [4, 5], [0, 0], [8, 9]]]
    with pytest.raises(ValueError, match="max_per_pass must be positive"):
        SpanChunkLayout(mask, max_per_pass=0)
