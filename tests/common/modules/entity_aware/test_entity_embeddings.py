"""Entity input embeddings against the formula written out by hand."""

import pytest
import torch

from spanbert_lib.common.modules.entity_aware import ENTITY_MASK, EntityEmbeddings


@pytest.fixture
def parts():
    torch.manual_seed(0)
    positions = torch.nn.Embedding(20, 8)
    types = torch.nn.Embedding(2, 8)
    embeddings = EntityEmbeddings(9, positions, types, entity_embedding_dim=5, dropout=0.0).eval()
    for parameter in embeddings.layer_norm.parameters():  # a non-trivial affine LayerNorm
        torch.nn.init.normal_(parameter)
    return embeddings, positions, types


def test_position_embedding_is_the_mean_over_a_three_piece_span(parts):
    embeddings, positions, _ = parts
    spans = torch.tensor([[[2, 4], [7, 7]]])
    mean = embeddings.span_position_embeddings(spans, torch.tensor([[True, True]]), num_positions=10)
    by_hand = (positions.weight[2] + positions.weight[3] + positions.weight[4]) / 3
    assert torch.allclose(mean[0, 0], by_hand, atol=1e-6)
    assert torch.allclose(mean[0, 1], positions.weight[7], atol=1e-6)


def test_position_offset_shifts_the_position_ids():
    positions = torch.nn.Embedding(20, 4)
    embeddings = EntityEmbeddings(6, positions, None, entity_embedding_dim=3, position_offset=2)
    mean = embeddings.span_position_embeddings(torch.tensor([[[0, 1]]]), torch.tensor([[True]]), num_positions=5)
    assert torch.allclose(mean[0, 0], (positions.weight[2] + positions.weight[3]) / 2, atol=1e-6)


def test_full_embedding_matches_the_formula(parts):
    embeddings, positions, types = parts
    ids = torch.tensor([[ENTITY_MASK, 7, 0], [8, 0, 0]])
    spans = torch.tensor([[[1, 3], [5, 6], [0, 0]], [[2, 2], [-1, -1], [40, 3]]])  # padding may hold anything
    mask = torch.tensor([[True, True, False], [True, False, False]])
    output = embeddings(ids, spans, mask, num_positions=8)
    assert output.shape == (2, 3, 8)
    ln = embeddings.layer_norm
    for b, j in [(0, 0), (0, 1), (1, 0)]:
        s, e = spans[b, j].tolist()
        x = (
            embeddings.entity_embeddings.weight[ids[b, j]] @ embeddings.projection.weight.T
            + positions.weight[s : e + 1].mean(0)
            + types.weight[0]
        )
        expected = (x - x.mean()) / torch.sqrt(x.var(unbiased=False) + ln.eps) * ln.weight + ln.bias
        assert torch.allclose(output[b, j], expected, atol=1e-5)


@pytest.mark.parametrize(
    "spans, ids, message",
    [
        ([[[3, 2]]], [[2]], "entity 0 of example 0: id 2 with span \\[3, 2\\] is invalid"),
        ([[[1, 8]]], [[2]], "0 <= start <= end < 8"),
        ([[[1, 1]]], [[9]], "ids must be in \\[0, 9\\)"),
    ],
)
def test_bad_entities_are_named(parts, spans, ids, message):
    embeddings, _, _ = parts
    with pytest.raises(ValueError, match=message):
        embeddings(torch.tensor(ids), torch.tensor(spans), torch.tensor([[True]]), num_positions=8)
