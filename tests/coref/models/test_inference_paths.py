"""
The gradient-free (inference) paths of ``spanbert_coref`` give what the model defines: recorded outputs of
the implementation before they were sped up, the differentiable paths, and dense references.
"""

import json
from pathlib import Path

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model

from spanbert_lib.coref.models.aligned_matmul import aligned_linear, aligned_size
from spanbert_lib.coref.models.coarse_antecedents import SELECTION_ROWS, CoarseAntecedentScorer, bucket_distance
from spanbert_lib.coref.models.feedforward import FeedForwardScorer
from spanbert_lib.coref.models.pairwise_scorer import INFERENCE_BLOCK, PairFeatures, PairwiseScorer, SpanMetadata
from tests import REPO_ROOT

CONFIG = REPO_ROOT / "fixtures" / "configs" / "coref" / "spanbert_coref_tiny.jsonnet"
# outputs of commit e7f7b08 (before the inference paths were sped up) for these settings, model seed 0
RECORDED = json.loads((Path(__file__).parent / "recorded_inference_e7f7b08.json").read_text())
SETTINGS = {
    "default": ({"model.max_top_antecedents": 3}, "segmented_document.gold_conll"),
    "singletons": ({"model.singletons": True, "model.max_top_antecedents": 3}, "singletons.gold_conll"),
    "small_budget": ({"model.memory_budget": 3000, "model.max_top_antecedents": 4}, "segmented_document.gold_conll"),
    "depth2ffnn": ({"model.ffnn_depth": 2, "model.max_top_antecedents": 3}, "segmented_document.gold_conll"),
}


def model_and_tensors(overrides, data):
    params = Params.from_file(str(CONFIG), params_overrides=json.dumps(overrides))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    torch.manual_seed(0)
    model = Model.from_params(vocab=Vocabulary(), params=params.pop("model")).eval()
    batch = Batch(list(reader.read(str(REPO_ROOT / "fixtures" / "coref" / data))))
    batch.index_instances(Vocabulary())
    return model, batch.as_tensor_dict()


def chosen_antecedents(output):
    """`[B, k]` the kept span each kept span links to (-1: none), whatever slot holds it."""
    slots = output["predicted_antecedents"]
    chosen = output["antecedent_indices"].gather(2, slots.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return torch.where(slots >= 0, chosen, torch.full_like(chosen, -1))


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_inference_gives_the_recorded_outputs_of_the_previous_implementation(name):
    overrides, data = SETTINGS[name]
    model, tensors = model_and_tensors(overrides, data)
    with torch.no_grad():
        output = model.make_output_human_readable(model(**tensors))
    expected = RECORDED[name]
    assert output["top_spans"].tolist() == expected["top_spans"]
    assert chosen_antecedents(output).tolist() == expected["chosen_antecedents"]
    clusters = [[[list(span) for span in cluster] for cluster in document] for document in output["clusters"]]
    assert clusters == expected["clusters"]
    assert any(expected["clusters"])  # the recorded model does link spans


@pytest.mark.parametrize("name", ["small_budget", "singletons"])
def test_gradient_free_forward_equals_the_differentiable_forward(name):
    overrides, data = SETTINGS[name]
    model, tensors = model_and_tensors(overrides, data)
    with torch.no_grad():
        fast = model(**tensors)
    with torch.enable_grad():
        graded = model(**tensors)
    assert torch.equal(fast["top_spans"], graded["top_spans"])
    assert torch.equal(chosen_antecedents(fast), chosen_antecedents(graded))
    assert torch.equal(fast["predicted_antecedents"], graded["predicted_antecedents"])


def test_aligned_products_equal_the_plain_ones():
    torch.manual_seed(0)
    assert [aligned_size(n) for n in (1, 16, 17, 300, 1172)] == [16, 16, 32, 304, 1184]
    linear = torch.nn.Linear(7, 300)
    x = torch.randn(5, 3, 7)
    assert torch.allclose(aligned_linear(x, linear), linear(x), atol=1e-6)
    assert aligned_linear(x, linear).shape == (5, 3, 300)
    for depth in (1, 2):
        scorer = FeedForwardScorer([4, 3], hidden_dim=10, depth=depth).eval()
        aligned = scorer.aligned()
        assert aligned.hidden_dim == 16
        inputs = torch.randn(6, 7)
        pre = aligned.part_projection(inputs[:, :4], 0) + aligned.part_projection(inputs[:, 4:], 1)
        assert torch.allclose(aligned.from_first_layer(pre), scorer(inputs), atol=1e-6)


@pytest.mark.parametrize("budget", [1, 5000, 2**24])
def test_coarse_selection_over_many_blocks_equals_the_dense_scores(budget):
    torch.manual_seed(4)
    num_spans, slots = 2 * SELECTION_ROWS + 37, 9  # several row blocks, no multiple of 16
    scorer = CoarseAntecedentScorer(6, 3).eval()
    g, mention = torch.randn(num_spans, 6), torch.randn(num_spans)
    top = scorer.top_antecedents(g, mention, max_antecedents=slots, budget=budget)
    rows = torch.arange(num_spans)
    offsets = rows.unsqueeze(1) - rows
    dense = scorer.bilinear(g) @ g.t() + mention.unsqueeze(1) + mention
    dense = (dense + scorer.distance_prior()[bucket_distance(offsets)]).masked_fill(offsets < 1, float("-inf"))
    expected_scores, expected_indices = dense.topk(slots, dim=1)
    assert torch.equal(top.mask, expected_indices < rows.unsqueeze(1))
    assert torch.equal(top.indices[top.mask], expected_indices[top.mask])
    assert torch.allclose(top.scores[top.mask], expected_scores[top.mask], atol=1e-5)
    assert torch.isinf(top.scores[~top.mask]).all()


@pytest.mark.parametrize("use_features", [True, False])
def test_pairwise_inference_over_many_blocks_equals_the_differentiable_scores(use_features):
    torch.manual_seed(6)
    num_spans, slots, dim = 400, 20, 40
    features = PairFeatures(5, num_genres=3, **{f"use_{name}": use_features for name in ("speaker", "genre")})
    scorer = PairwiseScorer(dim, features, hidden_dim=300).eval()
    g = torch.randn(num_spans, dim)
    antecedents = torch.randint(0, num_spans, (num_spans, slots))
    metadata = SpanMetadata(
        torch.randint(0, 3, (num_spans,)), torch.arange(num_spans) // 60, torch.tensor(2, dtype=torch.long)
    )
    assert num_spans * slots * (dim + 300) > 2 * INFERENCE_BLOCK  # several blocks
    graded = scorer(g, antecedents, metadata)
    assert graded.requires_grad
    with torch.no_grad():
        fast = scorer(g, antecedents, metadata)
    assert torch.allclose(fast, graded.detach(), atol=1e-5)


def test_pair_products_in_bfloat16_stay_close_to_float32():
    torch.manual_seed(7)
    num_spans, slots, dim = 300, 20, 40
    scorer = PairwiseScorer(dim, PairFeatures(5, num_genres=3), hidden_dim=300).eval()
    g = torch.randn(num_spans, dim)
    antecedents = torch.randint(0, num_spans, (num_spans, slots))
    metadata = SpanMetadata(
        torch.randint(0, 3, (num_spans,)), torch.arange(num_spans) // 60, torch.tensor(2, dtype=torch.long)
    )
    with torch.no_grad():
        exact = scorer(g, antecedents, metadata)
        scorer.product_dtype = torch.bfloat16
        low = scorer(g, antecedents, metadata)
    assert low.dtype == torch.float32
    assert not torch.equal(low, exact)  # the products did run in bfloat16
    assert torch.allclose(low, exact, atol=0.05 * float(exact.abs().max()))
    ranks_agree = (low.argmax(dim=1) == exact.argmax(dim=1)).float().mean()
    assert ranks_agree > 0.9
    scorer.train()
    with torch.no_grad():  # training mode ignores it
        assert torch.allclose(scorer(g, antecedents, metadata), exact, atol=1e-5)


def test_the_pair_product_dtype_option_reaches_the_scorer_and_is_checked():
    model, tensors = model_and_tensors(
        {"model.pair_product_dtype": "bfloat16", "model.max_top_antecedents": 3}, "segmented_document.gold_conll"
    )
    assert model._pairwise_scorer.product_dtype == torch.bfloat16
    with torch.no_grad():
        output = model.make_output_human_readable(model(**tensors))
    reference, _ = model_and_tensors({"model.max_top_antecedents": 3}, "segmented_document.gold_conll")
    with torch.no_grad():
        expected = reference.make_output_human_readable(reference(**tensors))
    assert torch.equal(output["top_spans"], expected["top_spans"])  # mention scoring stays float32
    with pytest.raises(ConfigurationError, match="pair_product_dtype must name a floating point torch dtype"):
        model_and_tensors({"model.pair_product_dtype": "int8"}, "segmented_document.gold_conll")
    with pytest.raises(ConfigurationError, match="pair_product_dtype needs fine_scoring"):
        model_and_tensors(
            {"model.pair_product_dtype": "bfloat16", "model.fine_scoring": False, "model.coref_depth": 1},
            "segmented_document.gold_conll",
        )
