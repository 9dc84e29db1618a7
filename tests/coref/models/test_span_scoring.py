"""Span representations and mention scores: hand-computed cases and the chunked pruning path."""

import math

import pytest
import torch

from spanbert_lib.coref.models.feedforward import FeedForwardScorer
from spanbert_lib.coref.models.mention_scorer import MentionScorer
from spanbert_lib.coref.models.span_embedder import (
    SpanEmbedder,
    flat_span_pieces,
    segment_softmax,
)


def test_flat_span_pieces():
    pieces, span_ids, offsets = flat_span_pieces(torch.tensor([2, 0, 5]), torch.tensor([4, 0, 6]))
    assert pieces.tolist() == [2, 3, 4, 0, 5, 6]
    assert span_ids.tolist() == [0, 0, 0, 1, 2, 2]
    assert offsets.tolist() == [0, 3, 4]
    with pytest.raises(ValueError, match="ends before it starts"):
        flat_span_pieces(torch.tensor([3]), torch.tensor([2]))


def test_segment_softmax():
    logits = torch.tensor([0.0, math.log(3.0), 100.0, 5.0, 5.0])
    weights = segment_softmax(logits, torch.tensor([0, 0, 1, 2, 2]), 3)
    assert weights.tolist() == pytest.approx([0.25, 0.75, 1.0, 0.5, 0.5])


def test_span_embedding_by_hand():
    embedder = SpanEmbedder(input_dim=2, feature_size=1, max_span_width=3)
    with torch.no_grad():
        embedder.head_scorer.weight.copy_(torch.tensor([[1.0, 0.0]]))  # logit = first coordinate
        embedder.head_scorer.bias.zero_()
        embedder.width_embedding.weight.copy_(torch.tensor([[10.0], [20.0], [30.0]]))
    states = torch.tensor([[0.0, 1.0], [math.log(3.0), 2.0], [0.0, 4.0]])
    g = embedder(states, torch.tensor([0, 2]), torch.tensor([1, 2]), torch.tensor([1, 0]))
    assert embedder.get_output_dim() == 7 and g.shape == (2, 7)
    # span (0..1): weights softmax(0, log 3) = (1/4, 3/4); head = 1/4 [0,1] + 3/4 [log3, 2]
    head = [0.75 * math.log(3.0), 0.25 * 1.0 + 0.75 * 2.0]
    assert g[0].tolist() == pytest.approx([0.0, 1.0, math.log(3.0), 2.0, *head, 20.0])
    assert g[1].tolist() == pytest.approx([0.0, 4.0, 0.0, 4.0, 0.0, 4.0, 10.0])


def test_feedforward_parts_add_up_to_the_whole():
    torch.manual_seed(0)
    scorer = FeedForwardScorer([3, 2], hidden_dim=5, depth=2).eval()
    x = torch.randn(4, 5)
    pre = scorer.part_projection(x[:, :3], 0) + scorer.part_projection(x[:, 3:], 1)
    assert torch.allclose(scorer.from_first_layer(pre), scorer(x), atol=1e-6)
    with pytest.raises(ValueError, match="at least one hidden layer"):
        FeedForwardScorer([3], 4, depth=0)


def test_mention_score_is_ffnn_plus_width_prior():
    torch.manual_seed(0)
    embedder = SpanEmbedder(input_dim=3, feature_size=2, max_span_width=4)
    scorer = MentionScorer(embedder, hidden_dim=6).eval()
    g = torch.randn(5, embedder.get_output_dim())
    widths = torch.tensor([0, 1, 3, 3, 2])
    expected = scorer.span_scorer(g) + scorer.width_prior_scorer(scorer.width_prior_embedding(widths))
    assert torch.allclose(scorer(g, widths), expected, atol=1e-6)


@pytest.mark.parametrize("budget", [1, 200, 2**23])
def test_chunked_candidate_scores_equal_the_direct_scores(budget):
    torch.manual_seed(1)
    embedder = SpanEmbedder(input_dim=4, feature_size=3, max_span_width=5, dropout=0.5)
    scorer = MentionScorer(embedder, hidden_dim=7, depth=2, dropout=0.5)
    states = torch.randn(20, 4)
    starts = torch.tensor([0, 0, 1, 3, 3, 4, 9, 12, 15, 19])
    ends = torch.tensor([0, 4, 2, 3, 7, 8, 10, 16, 15, 19])
    widths = torch.tensor([0, 3, 1, 0, 4, 2, 1, 4, 0, 0])  # word widths need not equal pieces
    embedder.train()
    scorer.train()  # the candidate pass ignores dropout even in training mode
    fast = scorer.score_candidates(embedder, states, starts, ends, widths, budget=budget)
    assert not fast.requires_grad
    embedder.eval()
    scorer.eval()
    direct = scorer(embedder(states, starts, ends, widths), widths)
    assert torch.allclose(fast, direct, atol=1e-5)
