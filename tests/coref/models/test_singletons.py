"""
``spanbert_coref`` with ``singletons: true``: mentions that corefer with nothing are trained with a
mention loss and predicted as clusters of one mention (LitBank's annotation); without the option the
model behaves as before (clusters of two or more mentions only, no mention loss).

The fixture ``fixtures/coref/singletons.gold_conll`` (written for this project) has one cluster of three
mentions and five singletons.
"""

import json

import pytest
import torch
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model

from spanbert_lib.coref.models import SpanBertCoreference, clusters_from_antecedents, decode_clusters
from tests import REPO_ROOT

CONFIG = REPO_ROOT / "fixtures" / "configs" / "coref" / "spanbert_coref_tiny.jsonnet"
DATA = REPO_ROOT / "fixtures" / "coref" / "singletons.gold_conll"
POOLER = {
    f"encoder.token_embedder_tokens.segment_encoder.transformer_model.pooler.dense.{name}"
    for name in ("weight", "bias")
}
# The head-attention logits go through a softmax over each span's words, which ignores a shared bias: its
# gradient is zero up to rounding (exactly zero when, as here, rounding happens to cancel).
HEAD_BIAS = {"_span_embedder.head_scorer.bias"}
GOLD_CLUSTER = [(0, 0), (12, 12), (25, 25)]  # Mara, her, She (document word offsets)
GOLD_SINGLETONS = [[(2, 3)], [(5, 7)], [(9, 10)], [(17, 19)], [(22, 23)]]


def build(overrides=None):
    params = Params.from_file(str(CONFIG), params_overrides=json.dumps(overrides or {}))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    model = Model.from_params(vocab=Vocabulary(), params=params.pop("model"))
    return reader, model


def tensors(instances):
    batch = Batch(instances)
    batch.index_instances(Vocabulary())
    return batch.as_tensor_dict()


def overfit(model, batch, steps=80):
    """``steps`` Adam steps on one batch (the fixture config's rates: 1e-3 for the encoder, 1e-2 for the rest)."""
    encoder = [p for name, p in model.named_parameters() if name.startswith("encoder.")]
    task = [p for name, p in model.named_parameters() if not name.startswith("encoder.")]
    optimizer = torch.optim.Adam([{"params": encoder, "lr": 1e-3}, {"params": task, "lr": 1e-2}])
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        model(**batch)["loss"].backward()
        optimizer.step()
    model.eval()
    model.get_metrics(reset=True)  # score only the final prediction
    with torch.no_grad():
        return model(**batch)


def test_the_fixture_has_singletons_in_its_gold_clusters():
    reader, _ = build()
    (instance,) = reader.read(DATA)
    gold = [[tuple(span) for span in cluster] for cluster in instance["metadata"]["clusters"]]
    assert sorted(gold) == sorted([GOLD_CLUSTER] + GOLD_SINGLETONS)
    labels = instance["span_labels"].tensor
    assert int((labels >= 0).sum()) == 8  # every gold mention, singletons included, is a labelled candidate


def test_clusters_from_antecedents_adds_unlinked_mentions_as_singletons():
    spans = torch.tensor([[0, 0], [2, 3], [5, 5], [7, 8], [9, 9]])
    antecedents = torch.tensor([-1, -1, 0, -1, -1])  # span 2 links to span 0
    singletons = torch.tensor([True, True, False, False, True])
    assert clusters_from_antecedents(spans, antecedents) == [[(0, 0), (5, 5)]]
    # span 0 is in a cluster already (not repeated as a singleton); span 3 is no mention
    assert clusters_from_antecedents(spans, antecedents, singletons) == [[(0, 0), (5, 5)], [(2, 3)], [(9, 9)]]


def test_default_is_unchanged_and_options_are_checked():
    _, plain = build()
    assert not plain.singletons and plain.mention_loss_weight == 0.0
    _, with_singletons = build({"model.singletons": True})
    assert with_singletons.mention_loss_weight == 1.0 and with_singletons.singleton_threshold == 0.0
    _, weighted = build({"model.singletons": True, "model.mention_loss_weight": 0.5})
    assert weighted.mention_loss_weight == 0.5
    with pytest.raises(Exception, match="mention_loss_weight must be >= 0"):
        build({"model.mention_loss_weight": -1.0})


def test_mention_loss_is_added_only_when_asked():
    reader, plain = build()
    batch = tensors(list(reader.read(DATA)))
    _, with_loss = build({"model.singletons": True})
    with_loss.load_state_dict(plain.state_dict())
    plain.eval()
    with_loss.eval()
    without_output, with_output = plain(**batch), with_loss(**batch)
    # same weights, same antecedent scores: the difference is the mention loss, positive
    assert torch.equal(without_output["top_spans"], with_output["top_spans"])
    assert with_output["loss"].item() > without_output["loss"].item()
    assert "top_span_mention_scores" in with_output and "top_span_mention_scores" not in without_output


class TestSingletonModel(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(str(CONFIG), str(DATA))

    def test_train_save_load_with_singletons(self):
        self.ensure_model_can_train_save_and_load(
            self.param_file,
            gradients_to_ignore=POOLER | HEAD_BIAS,
            overrides=json.dumps({"model.singletons": True}),
        )


def test_trained_with_singletons_the_model_predicts_them():
    torch.manual_seed(0)
    reader, model = build({"model.singletons": True, "model.dropout": 0.0})
    batch = tensors(list(reader.read(DATA)))
    output = overfit(model, batch)
    (clusters,) = output["clusters"]
    predicted = sorted([tuple(span) for span in cluster] for cluster in clusters)
    assert predicted == sorted([GOLD_CLUSTER] + GOLD_SINGLETONS)
    # decoding the padded outputs gives the same clusters, singletons included
    without = {key: value for key, value in output.items() if key != "clusters"}
    assert model.make_output_human_readable(without)["clusters"] == output["clusters"]
    assert (
        decode_clusters(
            output["top_spans"],
            output["antecedent_indices"],
            output["predicted_antecedents"],
            output["top_span_mention_scores"],
        )
        == output["clusters"]
    )
    # the CoNLL scores count the singletons: a perfect prediction scores 1.0 against the gold with them
    metrics = model.get_metrics(reset=True)
    assert metrics["conll_f1"] == pytest.approx(1.0)


def test_trained_without_singletons_the_model_predicts_none():
    torch.manual_seed(0)
    reader, model = build({"model.dropout": 0.0})
    assert isinstance(model, SpanBertCoreference)
    batch = tensors(list(reader.read(DATA)))
    (clusters,) = overfit(model, batch)["clusters"]
    assert all(len(cluster) >= 2 for cluster in clusters)
