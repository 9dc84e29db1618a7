"""The span boundary head against SpanBERT's formula written out by hand, and the span extractor."""

import math

import pytest
import torch

from spanbert_lib.common.modules import SpanBoundaryHead, SpanBoundarySpanExtractor


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(variance + eps) * weight + bias


@pytest.fixture
def head():
    torch.manual_seed(0)
    module = SpanBoundaryHead(input_dim=6, position_embedding_dim=4, max_span_width=5)
    for parameter in module.parameters():  # non-trivial LayerNorm affine parameters too
        torch.nn.init.normal_(parameter)
    return module


def by_hand(head, sequence, b, s, e, i):
    """y_i = LN(GeLU(W2 . LN(GeLU(W1 . [x(s-1); x(e+1); p(i-s+1)])))) for one target."""
    eps = head.norm1.eps
    position = head.position_embeddings.weight[min(i - s, head.max_span_width - 1)]
    z = torch.cat([sequence[b, s - 1], sequence[b, e + 1], position])
    h = layer_norm(gelu(head.layer1.weight @ z + head.layer1.bias), head.norm1.weight, head.norm1.bias, eps)
    return layer_norm(gelu(head.layer2.weight @ h + head.layer2.bias), head.norm2.weight, head.norm2.bias, eps)


def test_head_matches_the_formula(head):
    sequence = torch.randn(2, 12, 6)
    # targets: (batch, span start, span end, position)
    targets = [[(0, 2, 4, 2), (0, 2, 4, 4), (0, 7, 7, 7)], [(1, 1, 9, 1), (1, 1, 9, 8), (1, 5, 6, 6)]]
    starts = torch.tensor([[t[1] for t in row] for row in targets])
    ends = torch.tensor([[t[2] for t in row] for row in targets])
    positions = torch.tensor([[t[3] for t in row] for row in targets])
    output = head(sequence, starts, ends, positions)
    assert output.shape == (2, 3, 6)
    for row, row_targets in enumerate(targets):
        for column, (b, s, e, i) in enumerate(row_targets):
            assert torch.allclose(output[row, column], by_hand(head, sequence, b, s, e, i), atol=1e-5)


def test_head_ignores_tokens_inside_the_span(head):
    sequence = torch.randn(1, 10, 6)
    before = head(sequence, torch.tensor([[3]]), torch.tensor([[6]]), torch.tensor([[4]]))
    changed = sequence.clone()
    changed[0, 3:7] = torch.randn(4, 6)  # the span itself (positions 3..6) must not matter
    after = head(changed, torch.tensor([[3]]), torch.tensor([[6]]), torch.tensor([[4]]))
    assert torch.allclose(before, after)
    changed[0, 7] += 1.0  # the right boundary x(e+1) must
    assert not torch.allclose(before, head(changed, torch.tensor([[3]]), torch.tensor([[6]]), torch.tensor([[4]])))


def test_span_representation_is_the_mean_over_positions(head):
    sequence = torch.randn(1, 12, 6)
    spans = torch.tensor([[[2, 4], [6, 6]]])
    representation = head.span_representation(sequence, spans, span_mask=torch.tensor([[True, False]]))
    expected = torch.stack([by_hand(head, sequence, 0, 2, 4, i) for i in (2, 3, 4)]).mean(0)
    assert torch.allclose(representation[0, 0], expected, atol=1e-5)
    assert torch.equal(representation[0, 1], torch.zeros(6))


def test_outside_boundaries_are_the_tokens_around_the_span():
    sequence = torch.arange(2 * 8 * 3, dtype=torch.float).view(2, 8, 3)
    extractor = SpanBoundarySpanExtractor(input_dim=3, boundaries="outside")
    spans = torch.tensor([[[2, 3], [0, 7]], [[5, 5], [1, 2]]])
    output = extractor(sequence, spans, span_indices_mask=torch.tensor([[True, True], [True, False]]))
    assert output.shape == (2, 2, 6) and extractor.get_output_dim() == 6
    assert torch.equal(output[0, 0], torch.cat([sequence[0, 1], sequence[0, 4]]))
    assert torch.equal(output[0, 1], torch.cat([sequence[0, 0], sequence[0, 7]]))  # clamped at the edges
    assert torch.equal(output[1, 0], torch.cat([sequence[1, 4], sequence[1, 6]]))
    assert torch.equal(output[1, 1], torch.zeros(6))


def test_span_boundary_extractor_modes():
    sequence = torch.arange(1 * 8 * 2, dtype=torch.float).view(1, 8, 2)
    spans = torch.tensor([[[2, 4], [0, 7]]])
    inside = SpanBoundarySpanExtractor(input_dim=2, boundaries="inside")(sequence, spans)
    assert inside.shape == (1, 2, 4)
    assert torch.equal(inside[0, 0], torch.cat([sequence[0, 2], sequence[0, 4]]))
    assert torch.equal(inside[0, 1], torch.cat([sequence[0, 0], sequence[0, 7]]))
    both = SpanBoundarySpanExtractor(input_dim=2, boundaries="both")
    assert both.get_output_dim() == 8
    assert torch.equal(
        both(sequence, spans)[0, 0], torch.cat([sequence[0, 1], sequence[0, 2], sequence[0, 4], sequence[0, 5]])
    )
    outside = SpanBoundarySpanExtractor(input_dim=2, boundaries="outside")(sequence, spans)
    assert torch.equal(outside[0, 0], torch.cat([sequence[0, 1], sequence[0, 5]]))
    with pytest.raises(ValueError, match="boundaries must be one of"):
        SpanBoundarySpanExtractor(input_dim=2, boundaries="middle")


def test_span_boundary_extractor_is_registered():
    from allennlp.common import Params
    from allennlp.modules.span_extractors import SpanExtractor

    extractor = SpanExtractor.from_params(Params({"type": "span_boundary", "input_dim": 4, "boundaries": "both"}))
    assert isinstance(extractor, SpanBoundarySpanExtractor) and extractor.get_output_dim() == 16
