"""Antecedent pruning, pair features and scores, higher-order refinement, loss and decoding."""

import math

import pytest
import torch

from spanbert_lib.coref.models.antecedent_loss import (
    antecedent_labels,
    marginal_log_likelihood_loss,
)
from spanbert_lib.coref.models.cluster_decoding import (
    cluster_roots,
    clusters_from_antecedents,
    predicted_antecedents,
)
from spanbert_lib.coref.models.coarse_antecedents import CoarseAntecedentScorer, bucket_distance
from spanbert_lib.coref.models.higher_order import (
    GatedSpanRefiner,
    attend_antecedents,
    with_dummy,
)
from spanbert_lib.coref.models.pairwise_scorer import PairFeatures, PairwiseScorer, SpanMetadata

NEG_INF = float("-inf")


def test_bucket_distance():
    distances = torch.tensor([-3, 0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 31, 32, 63, 64, 1000])
    assert bucket_distance(distances).tolist() == [0, 0, 1, 2, 3, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9]


def zero_coarse_scorer(span_dim=2, feature_size=2):
    scorer = CoarseAntecedentScorer(span_dim, feature_size)
    with torch.no_grad():
        for parameter in scorer.parameters():
            parameter.zero_()
    return scorer


def test_top_antecedents_by_hand():
    # bilinear term and distance prior zero: s_c(i, j) = s_m(i) + s_m(j)
    scorer = zero_coarse_scorer()
    mention = torch.tensor([1.0, 3.0, 2.0, 0.0])
    top = scorer.top_antecedents(torch.zeros(4, 2), mention, max_antecedents=2)
    assert top.mask.tolist() == [[False, False], [True, False], [True, True], [True, True]]
    assert top.indices[1, 0] == 0
    assert top.indices[2].tolist() == [1, 0] and top.indices[3].tolist() == [1, 2]
    assert top.offsets[3].tolist() == [2, 1]
    expected = [[NEG_INF, NEG_INF], [4.0, NEG_INF], [5.0, 3.0], [3.0, 2.0]]
    assert top.scores.tolist() == expected


def test_top_antecedents_bilinear_and_distance_prior():
    scorer = zero_coarse_scorer(span_dim=2, feature_size=1)
    with torch.no_grad():
        scorer.bilinear.weight.copy_(torch.eye(2))  # (W g_i + b) . g_j = g_i . g_j
        scorer.distance_embedding.weight.copy_(torch.arange(10.0).unsqueeze(1))
        scorer.distance_scorer.weight.fill_(-1.0)  # prior(bucket b) = -b
    g = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    top = scorer.top_antecedents(g, torch.zeros(3), max_antecedents=2)
    # row 2: j=0: g2.g0 = 1, distance 2 -> -2 => -1 ; j=1: 1, distance 1 -> -1 => 0
    assert top.indices[2].tolist() == [1, 0]
    assert top.scores[2].tolist() == pytest.approx([0.0, -1.0])
    assert top.scores[1, 0].item() == pytest.approx(0.0 - 1.0)  # g1.g0 = 0, distance 1


def test_top_antecedents_chunked_and_differentiable_paths_agree():
    torch.manual_seed(3)
    scorer = CoarseAntecedentScorer(5, 3, dropout=0.0)
    g = torch.randn(30, 5)
    mention = torch.randn(30)
    reference = scorer.top_antecedents(g, mention, max_antecedents=7, budget=10**6)
    chunked = scorer.top_antecedents(g, mention, max_antecedents=7, budget=1)
    assert torch.equal(reference.indices[reference.mask], chunked.indices[chunked.mask])
    assert torch.equal(reference.mask, chunked.mask)
    # with gradients the selected pairs are rescored by pair_scores: same values, and a graph
    g.requires_grad_(True)
    graded = scorer.top_antecedents(g, mention, max_antecedents=7)
    assert graded.scores.requires_grad
    assert torch.allclose(graded.scores[graded.mask], reference.scores[reference.mask], atol=1e-5)
    graded.scores[graded.mask].sum().backward()
    assert g.grad is not None and g.grad.abs().sum() > 0
    # the best antecedent of every row really is the best earlier span
    full = (
        scorer.bilinear(g) @ g.t()
        + mention.unsqueeze(1)
        + mention
        + scorer.distance_prior()[bucket_distance(torch.arange(30).unsqueeze(1) - torch.arange(30))]
    )
    for row in range(1, 30):
        assert reference.indices[row, 0] == int(full[row, :row].argmax())


def one_hot_features(**kwargs):
    """PairFeatures whose embeddings are one-hot codes, so the output reads as indices."""
    features = PairFeatures(feature_size=10, **kwargs)
    with torch.no_grad():
        for embedding in features._enabled():
            embedding.weight.copy_(torch.eye(10)[: embedding.num_embeddings])
    return features


def test_pair_features_by_hand():
    features = one_hot_features(num_genres=4, num_segment_distances=3)
    assert features.get_output_dim() == 40
    metadata = SpanMetadata(
        speakers=torch.tensor([1, 2, 1, 0]), segments=torch.tensor([0, 0, 1, 4]), genre=torch.tensor(2)
    )
    rows = torch.tensor([2, 3])
    antecedents = torch.tensor([[0, 1], [0, 2]])
    # (2, 2, 4 blocks of 10 one-hot values) -> the index each block encodes
    blocks = features(rows, antecedents, metadata).view(2, 2, 4, 10).argmax(-1)
    same_speaker, genre, segment_distance, distance = blocks.unbind(-1)
    assert same_speaker.tolist() == [[1, 0], [0, 0]]
    assert genre.tolist() == [[2, 2], [2, 2]]
    assert segment_distance.tolist() == [[1, 1], [2, 2]]  # 4 - 0 clipped to 2, 4 - 1 too
    assert distance.tolist() == [[2, 1], [3, 1]]


def test_pair_features_switch_off():
    features = one_hot_features(use_speaker=False, use_genre=False, num_segment_distances=2)
    assert features.get_output_dim() == 20
    metadata = SpanMetadata(torch.zeros(3, dtype=torch.long), torch.tensor([0, 1, 1]), torch.tensor(0))
    blocks = features(torch.tensor([2]), torch.tensor([[0]]), metadata).view(1, 1, 2, 10).argmax(-1)
    assert blocks.tolist() == [[[1, 2]]]  # segment distance 1, distance bucket 2
    none = PairFeatures(4, use_speaker=False, use_genre=False, use_segment_distance=False, use_distance=False)
    assert none.get_output_dim() == 0 and none(torch.tensor([1]), torch.tensor([[0]]), metadata) is None


@pytest.mark.parametrize("use_features", [True, False])
def test_pairwise_scorer_equals_ffnn_over_concatenation(use_features):
    torch.manual_seed(5)
    features = PairFeatures(
        3,
        num_genres=2,
        use_speaker=use_features,
        use_genre=use_features,
        use_segment_distance=use_features,
        use_distance=use_features,
    )
    scorer = PairwiseScorer(span_dim=4, features=features, hidden_dim=6, depth=2).eval()
    g = torch.randn(6, 4)
    antecedents = torch.tensor([[0, 0], [0, 0], [1, 0], [2, 1], [0, 3], [4, 2]])
    metadata = SpanMetadata(torch.tensor([1, 1, 2, 1, 2, 2]), torch.tensor([0, 0, 0, 1, 1, 2]), torch.tensor(1))
    rows = torch.arange(6)
    g_i = g.unsqueeze(1).expand(-1, 2, -1)
    g_j = g[antecedents]
    parts = [g_i, g_j, g_i * g_j]
    phi = features(rows, antecedents, metadata)
    if phi is not None:
        parts.append(phi)
    expected = scorer.scorer(torch.cat(parts, dim=-1))
    for budget in (1, 10**6):
        # without autograd: in-place blocks and the feature lookup table
        with torch.no_grad():
            assert torch.allclose(scorer(g, antecedents, metadata, budget=budget), expected, atol=1e-5)
        assert torch.allclose(scorer(g, antecedents, metadata, budget=budget), expected, atol=1e-5)
    if use_features:
        # training with feature dropout: per-pair features, dropped out like the concatenation
        scorer.train()
        scorer.features.dropout.p = 0.5
        torch.manual_seed(11)
        dropped = scorer(g.requires_grad_(), antecedents, metadata, budget=10**6)
        torch.manual_seed(11)
        phi = features(rows, antecedents, metadata)
        assert (phi == 0).any()  # dropout happened
        manual = scorer.scorer(torch.cat([g_i, g_j, g_i * g_j, phi], dim=-1))
        assert dropped.requires_grad and torch.allclose(dropped, manual, atol=1e-5)


def test_attention_over_antecedents_and_gate_by_hand():
    g = torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    antecedents = torch.tensor([[0, 0], [0, 0], [1, 0]])
    # row 2: dummy (itself) score 0, antecedent 1 score log 2, antecedent 0 score log 1 = 0
    scores = with_dummy(torch.tensor([[NEG_INF, NEG_INF], [0.0, NEG_INF], [math.log(2.0), 0.0]]))
    attended = attend_antecedents(g, antecedents, scores)
    assert attended[0].tolist() == pytest.approx([1.0, 0.0])  # only the dummy: itself
    assert attended[1].tolist() == pytest.approx([0.5, 0.5])  # 1/2 itself + 1/2 g0
    # weights 1/4 (itself), 2/4 (g1), 1/4 (g0): 1/4 [2,2] + 1/2 [0,1] + 1/4 [1,0]
    assert attended[2].tolist() == pytest.approx([0.75, 1.0])

    refiner = GatedSpanRefiner(2)
    with torch.no_grad():
        refiner.gate.weight.zero_()
        refiner.gate.bias.copy_(torch.tensor([0.0, math.log(3.0)]))  # f = (1/2, 3/4)
    refined = refiner(g, antecedents, scores)
    f = torch.tensor([0.5, 0.75])
    assert torch.allclose(refined, f * attended + (1 - f) * g, atol=1e-6)
    assert refined[2].tolist() == pytest.approx([0.5 * 0.75 + 0.5 * 2.0, 0.75 * 1.0 + 0.25 * 2.0])


def test_marginal_log_likelihood_by_hand():
    labels = antecedent_labels(
        torch.tensor([0, -1, 0]),
        torch.tensor([[0, 0], [0, 0], [1, 0]]),
        torch.tensor([[False, False], [True, False], [True, True]]),
    )
    # span 0: no antecedent; span 1: no gold mention; span 2: antecedent 0 (slot 2) in its cluster
    assert labels.tolist() == [[True, False, False], [True, False, False], [False, False, True]]
    scores = torch.tensor([[0.0, NEG_INF, NEG_INF], [0.0, 1.0, NEG_INF], [0.0, 2.0, 0.5]], requires_grad=True)
    loss = marginal_log_likelihood_loss(scores, labels)
    expected = 0.0 + math.log(1 + math.e) + (math.log(1 + math.exp(2.0) + math.exp(0.5)) - 0.5)
    assert loss.item() == pytest.approx(expected, abs=1e-5)
    loss.backward()
    assert torch.isfinite(scores.grad).all()


def test_gold_antecedents_of_several_slots():
    labels = antecedent_labels(
        torch.tensor([3, 3, 5, 3]),
        torch.tensor([[0, 0, 0], [0, 0, 0], [1, 0, 0], [2, 1, 0]]),
        torch.tensor([[False] * 3, [True, False, False], [True, True, False], [True, True, True]]),
    )
    assert labels.tolist() == [
        [True, False, False, False],
        [False, True, False, False],
        [True, False, False, False],
        [False, False, True, True],
    ]
    scores = torch.tensor([[0.0, 1.0, 2.0, 3.0]])
    loss = marginal_log_likelihood_loss(scores, labels[3:])
    expected = math.log(1 + math.e + math.e**2 + math.e**3) - math.log(math.e**2 + math.e**3)
    assert loss.item() == pytest.approx(expected, abs=1e-5)


def test_predicted_antecedents_and_clusters():
    antecedents = torch.tensor([[0, 0], [0, 0], [1, 0], [2, 1], [3, 0], [4, 3]])
    scores = with_dummy(
        torch.tensor([[NEG_INF, NEG_INF], [1.0, NEG_INF], [-1.0, -2.0], [-1.0, 2.0], [0.0, NEG_INF], [3.0, 1.0]])
    )
    slots, chosen = predicted_antecedents(scores, antecedents)
    # row 4: tie between the dummy (0) and antecedent 3 (0.0): the dummy wins
    assert slots.tolist() == [-1, 0, -1, 1, -1, 0]
    assert chosen.tolist() == [-1, 0, -1, 1, -1, 4]
    assert cluster_roots(chosen).tolist() == [0, 0, 2, 0, 4, 4]
    spans = torch.tensor([[0, 0], [2, 3], [5, 5], [7, 7], [9, 10], [12, 12]])
    assert clusters_from_antecedents(spans, chosen) == [[(0, 0), (2, 3), (7, 7)], [(9, 10), (12, 12)]]
    assert clusters_from_antecedents(spans[:0], chosen[:0]) == []
    with pytest.raises(ValueError, match="before its span"):
        cluster_roots(torch.tensor([1, -1]))
