"""
Agreement in gender and number (``use_agreement``): the pieces by hand, the pair feature inside the
pair FFNN (both scoring paths), and the model trained on ``fixtures/coref/agreement.gold_conll``
(written for this project: a father, Tom, and his daughter Clara, with "he", "she", "his", "her").
"""

import json

import pytest
import torch
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model

from spanbert_lib.coref.models.agreement import (
    AGREEMENT_CLASSES,
    NUM_AGREEMENT_BUCKETS,
    NUM_AGREEMENT_VALUES,
    agreement_loss,
    agreement_values,
    cluster_agreement_targets,
    fixed_span_classes,
    span_attributes,
    word_agreement_classes,
)
from spanbert_lib.coref.models.pairwise_scorer import PairFeatures, PairwiseScorer, SpanMetadata
from tests import REPO_ROOT

CONFIG = REPO_ROOT / "fixtures" / "configs" / "coref" / "spanbert_coref_tiny.jsonnet"
DATA = REPO_ROOT / "fixtures" / "coref" / "agreement.gold_conll"
POOLER = {
    f"encoder.token_embedder_tokens.segment_encoder.transformer_model.pooler.dense.{name}"
    for name in ("weight", "bias")
}
HEAD_BIAS = {"_span_embedder.head_scorer.bias"}  # see test_singletons.py
MASCULINE, FEMININE, NEUTER, PLURAL = range(4)
AGREEMENT = {"model.use_agreement": True, "model.singletons": True}


def build(overrides=None):
    params = Params.from_file(str(CONFIG), params_overrides=json.dumps(overrides or {}))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    model = Model.from_params(vocab=Vocabulary(), params=params.pop("model"))
    return reader, model


def tensors(instances):
    batch = Batch(instances)
    batch.index_instances(Vocabulary())
    return batch.as_tensor_dict()


def test_third_person_pronouns_carry_their_class():
    words = ["Tom", "and", "his", "daughter", "She", "THEM", "it", "I", "you", "her"]
    classes = word_agreement_classes(words, torch.device("cpu"))
    assert classes.tolist() == [-1, -1, MASCULINE, -1, FEMININE, PLURAL, NEUTER, -1, -1, FEMININE]
    spans = torch.tensor([[2, 2], [2, 3], [4, 4], [7, 7], [9, 9], [5, 5]])
    # "his daughter" is two words: no fixed class, whatever its first word
    assert fixed_span_classes(spans, classes).tolist() == [MASCULINE, -1, FEMININE, -1, FEMININE, PLURAL]
    assert AGREEMENT_CLASSES == ("masculine", "feminine", "neuter", "plural")


def test_targets_are_the_shares_of_the_pronouns_in_the_gold_cluster():
    # clusters: 0 = {Tom, his, he}, 1 = {Clara, she, her, they(!)}, 2 = {the market}; span 7 is no mention
    fixed = torch.tensor([-1, MASCULINE, MASCULINE, -1, FEMININE, FEMININE, PLURAL, MASCULINE, -1])
    labels = torch.tensor([0, 0, 0, 1, 1, 1, 1, -1, 2])
    targets = cluster_agreement_targets(fixed, labels, num_clusters=3)
    assert targets[0].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert targets[3].tolist() == pytest.approx([0.0, 2 / 3, 0.0, 1 / 3])
    assert targets[7].tolist() == [0.0] * 4  # no gold cluster: no target (its own pronoun does not count)
    assert targets[8].tolist() == [0.0] * 4  # a cluster without a third-person pronoun: no target
    logits = torch.randn(9, 4)
    expected = -sum((targets[i] * logits[i].log_softmax(-1)).sum() for i in range(9))  # rows of zeros add nothing
    assert agreement_loss(logits, targets).item() == pytest.approx(float(expected), rel=1e-6)


def test_agreement_values_by_hand():
    logits = torch.tensor([[5.0, -5.0, -5.0, -5.0], [0.0, 0.0, -30.0, -30.0], [0.0, 0.0, 0.0, 0.0]])
    fixed = torch.tensor([-1, -1, FEMININE, MASCULINE])
    attributes = span_attributes(torch.cat([logits, torch.zeros(1, 4)]), fixed)
    assert attributes[2].tolist() == [0.0, 1.0, 0.0, 0.0] and attributes[3].tolist() == [1.0, 0.0, 0.0, 0.0]
    rows = torch.tensor([2, 3])
    antecedents = torch.tensor([[0, 1], [0, 2]])
    values = agreement_values(attributes, fixed, rows, antecedents)
    buckets, num_fixed = values % NUM_AGREEMENT_BUCKETS, values // NUM_AGREEMENT_BUCKETS
    # "she" -> a masculine name: P(same) ~ 0; "she" -> 50/50: bucket 2; "he" -> the masculine name: top
    # bucket; "he" -> "she": two fixed pronouns that disagree
    assert buckets.tolist() == [[0, 2], [NUM_AGREEMENT_BUCKETS - 1, 0]]
    assert num_fixed.tolist() == [[1, 1], [1, 2]]
    assert int(values.max()) < NUM_AGREEMENT_VALUES


def test_pair_features_put_agreement_last():
    features = PairFeatures(feature_size=16, use_speaker=False, use_genre=False, use_agreement=True)
    with torch.no_grad():
        for embedding in features._enabled():
            embedding.weight.copy_(torch.eye(16)[: embedding.num_embeddings])
    assert features.get_output_dim() == 16 * 3
    fixed = torch.tensor([MASCULINE, FEMININE, MASCULINE])
    metadata = SpanMetadata(
        speakers=torch.zeros(3, dtype=torch.long),
        segments=torch.zeros(3, dtype=torch.long),
        genre=torch.tensor(0),
        attributes=span_attributes(torch.zeros(3, 4), fixed),
        fixed_classes=fixed,
    )
    blocks = features(torch.tensor([2]), torch.tensor([[0, 1]]), metadata).view(1, 2, 3, 16).argmax(-1)
    agreement = blocks[..., 2]
    top = NUM_AGREEMENT_BUCKETS - 1
    assert agreement.tolist() == [[2 * NUM_AGREEMENT_BUCKETS + top, 2 * NUM_AGREEMENT_BUCKETS + 0]]
    without = SpanMetadata(metadata.speakers, metadata.segments, metadata.genre)
    with pytest.raises(ValueError, match="agreement pair feature needs"):
        features(torch.tensor([2]), torch.tensor([[0, 1]]), without)


def test_pairwise_scorer_with_agreement_equals_ffnn_over_concatenation():
    torch.manual_seed(3)
    features = PairFeatures(3, num_genres=2, use_agreement=True)
    scorer = PairwiseScorer(span_dim=4, features=features, hidden_dim=6).eval()
    g = torch.randn(6, 4)
    antecedents = torch.tensor([[0, 0], [0, 0], [1, 0], [2, 1], [0, 3], [4, 2]])
    fixed = torch.tensor([MASCULINE, -1, FEMININE, -1, PLURAL, MASCULINE])
    metadata = SpanMetadata(
        torch.tensor([1, 1, 2, 1, 2, 2]),
        torch.tensor([0, 0, 0, 1, 1, 2]),
        torch.tensor(1),
        attributes=span_attributes(torch.randn(6, 4) * 3, fixed),
        fixed_classes=fixed,
    )
    g_i = g.unsqueeze(1).expand(-1, 2, -1)
    g_j = g[antecedents]
    phi = features(torch.arange(6), antecedents, metadata)
    expected = scorer.scorer(torch.cat([g_i, g_j, g_i * g_j, phi], dim=-1))
    with torch.no_grad():  # the lookup-table path
        assert torch.allclose(scorer(g, antecedents, metadata), expected, atol=1e-5)
    assert torch.allclose(scorer(g, antecedents, metadata), expected, atol=1e-5)


def test_options_are_checked():
    _, plain = build()
    assert plain._agreement_head is None and plain._pairwise_scorer.features.agreement_embedding is None
    with pytest.raises(Exception, match="use_agreement needs fine_scoring"):
        build({"model.use_agreement": True, "model.fine_scoring": False, "model.coref_depth": 1})
    with pytest.raises(Exception, match="agreement_loss_weight must be >= 0"):
        build({"model.use_agreement": True, "model.agreement_loss_weight": -1})


def test_without_the_documents_words_the_error_says_what_is_missing():
    reader, model = build(AGREEMENT)
    batch = tensors(list(reader.read(DATA)))
    batch["metadata"] = [{"doc_key": "fx/agreement/00", "part": 0}]
    model.eval()
    with pytest.raises(ValueError, match=r"fx/agreement/00.*use_agreement needs the document's 34 words"):
        model(**batch)


def test_the_agreement_loss_is_added_only_when_asked():
    reader, model = build(AGREEMENT)
    batch = tensors(list(reader.read(DATA)))
    model.eval()
    model.agreement_loss_weight = 0.0
    without_loss = model(**batch)["loss"].item()
    model.agreement_loss_weight = 1.0
    # the head's initial predictions are near uniform: about log(4) per kept span of Tom's or Clara's cluster
    assert model(**batch)["loss"].item() > without_loss + 1.0


def test_trained_with_agreement_the_head_learns_who_is_who():
    """Tom's cluster has "his"/"He"/"he", Clara's "she"/"her": after overfitting, the head predicts
    masculine for "Tom" and "her father", feminine for "his daughter Clara": spans whose own words
    carry no class, or the other one."""
    torch.manual_seed(0)
    reader, model = build({**AGREEMENT, "model.dropout": 0.0, "model.top_span_ratio": 0.8})
    batch = tensors(list(reader.read(DATA)))
    encoder = [p for name, p in model.named_parameters() if name.startswith("encoder.")]
    task = [p for name, p in model.named_parameters() if not name.startswith("encoder.")]
    optimizer = torch.optim.Adam([{"params": encoder, "lr": 1e-3}, {"params": task, "lr": 1e-2}])
    model.train()
    for _ in range(60):
        optimizer.zero_grad()
        model(**batch)["loss"].backward()
        optimizer.step()
    model.eval()
    predicted = {}
    head = model._agreement_head

    def record(module, inputs, output):
        predicted["logits"] = output

    handle = head.register_forward_hook(record)
    with torch.no_grad():
        output = model(**batch)
    handle.remove()
    spans = [tuple(span) for span in output["top_spans"][0].tolist()]
    classes = predicted["logits"].argmax(-1).tolist()
    assert classes[spans.index((0, 0))] == MASCULINE  # Tom
    assert classes[spans.index((2, 4))] == FEMININE  # his daughter Clara
    assert classes[spans.index((26, 29))] == MASCULINE  # her father


class TestAgreementModel(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(str(CONFIG), str(DATA))

    def test_train_save_load_with_agreement(self):
        self.ensure_model_can_train_save_and_load(
            self.param_file, gradients_to_ignore=POOLER | HEAD_BIAS, overrides=json.dumps(AGREEMENT)
        )
