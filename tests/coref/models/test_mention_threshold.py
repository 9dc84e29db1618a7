"""
``spanbert_coref`` with ``min_mention_score``: prediction keeps only the candidates whose mention score
is above the threshold (at most ``top_span_ratio`` per word), training keeps the top ``top_span_ratio``
per word as before.
"""

import json

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError

from tests import REPO_ROOT
from tests.coref.models.test_singletons import (
    DATA,
    GOLD_CLUSTER,
    GOLD_SINGLETONS,
    build,
    overfit,
    tensors,
)


def kept_spans(output):
    """The kept spans of the one document of ``output`` (padding dropped), with their mention scores."""
    spans, scores = output["top_spans"][0], output["top_span_mention_scores"][0]
    real = spans[:, 0] >= 0
    return [tuple(span) for span in spans[real].tolist()], scores[real]


def test_the_threshold_needs_trained_mention_logits():
    with pytest.raises(ConfigurationError, match="min_mention_score 0.0 needs mention scores trained"):
        build({"model.min_mention_score": 0.0})
    _, model = build({"model.singletons": True, "model.min_mention_score": 0.0})
    assert model.min_mention_score == 0.0
    _, weighted = build({"model.mention_loss_weight": 0.5, "model.min_mention_score": -1.0})
    assert weighted.min_mention_score == -1.0


def test_prediction_keeps_exactly_the_top_k_spans_scoring_above_the_threshold():
    torch.manual_seed(0)
    reader, top_k = build({"model.singletons": True})
    batch = tensors(list(reader.read(DATA)))
    top_k.eval()
    with torch.no_grad():
        spans, scores = kept_spans(top_k(**batch))
    threshold = float(scores.median())  # half of the top-k spans score above it
    _, thresholded = build({"model.singletons": True, "model.min_mention_score": threshold})
    thresholded.load_state_dict(top_k.state_dict())
    thresholded.eval()
    with torch.no_grad():
        kept, kept_scores = kept_spans(thresholded(**batch))
    # the greedy non-crossing pass takes spans best first, so the spans above the threshold are decided
    # before any span below it: thresholding keeps the same ones, in the same (document) order
    expected = [span for span, score in zip(spans, scores.tolist()) if score > threshold]
    assert kept == expected
    assert 0 < len(kept) < len(spans)
    assert bool((kept_scores > threshold).all())


def test_training_keeps_the_top_k_spans_whatever_the_threshold():
    reader, top_k = build({"model.singletons": True, "model.dropout": 0.0})
    _, thresholded = build({"model.singletons": True, "model.dropout": 0.0, "model.min_mention_score": 100.0})
    thresholded.load_state_dict(top_k.state_dict())
    batch = tensors(list(reader.read(DATA)))
    top_k.train()
    thresholded.train()
    torch.manual_seed(1)  # the same dropout masks in the encoder
    expected = top_k(**batch)
    torch.manual_seed(1)
    with_threshold = thresholded(**batch)
    assert torch.equal(expected["top_spans"], with_threshold["top_spans"])
    assert with_threshold["loss"].item() == pytest.approx(expected["loss"].item())
    thresholded.eval()  # nothing scores above 100: nothing is kept, nothing predicted, and no error
    with torch.no_grad():
        output = thresholded(**batch)
    assert output["top_spans"].size(1) == 0 and output["clusters"] == [[]]


def test_trained_with_a_threshold_the_model_keeps_the_mentions_and_predicts_the_clusters():
    torch.manual_seed(0)
    reader, model = build({"model.singletons": True, "model.dropout": 0.0, "model.min_mention_score": 0.0})
    batch = tensors(list(reader.read(DATA)))
    output = overfit(model, batch)
    (clusters,) = output["clusters"]
    assert sorted([tuple(span) for span in cluster] for cluster in clusters) == sorted([GOLD_CLUSTER] + GOLD_SINGLETONS)
    # only the 8 gold mentions are kept, where top-k keeps floor(0.4 * words) spans
    spans, _ = kept_spans(output)
    assert sorted(spans) == sorted(span for cluster in [GOLD_CLUSTER] + GOLD_SINGLETONS for span in cluster)
    assert model.get_metrics(reset=True)["pruned_mention_recall"] == pytest.approx(1.0)


def test_the_litbank_configs_predict_with_the_threshold():
    for name in ("litbank_minilm.jsonnet", "litbank_minilm_coarse.jsonnet"):
        model = Params.from_file(str(REPO_ROOT / "training_configs" / "coref" / name))["model"]
        assert model["singletons"] is True and model["min_mention_score"] == 0.0, name
    for name in ("spanbert_base.jsonnet", "spanbert_large.jsonnet"):  # OntoNotes: no singletons, top-k as before
        model = Params.from_file(str(REPO_ROOT / "training_configs" / "coref" / name))["model"]
        assert "min_mention_score" not in model.as_dict(), json.dumps(model.as_dict())
