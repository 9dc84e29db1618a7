"""
The ``spanbert_coref`` model end to end on the tiny BERT and the hand-written CoNLL fixture:
train/save/load with all features on and all off, gradients with each feature switched off,
training windows, outputs, error messages.
"""

import json

import pytest
import torch
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model

from spanbert_lib.coref.models import SpanBertCoreference, decode_clusters
from tests import REPO_ROOT

CONFIG = REPO_ROOT / "fixtures" / "configs" / "coref" / "spanbert_coref_tiny.jsonnet"
DATA = REPO_ROOT / "fixtures" / "coref" / "segmented_document.gold_conll"
POOLER = {
    f"encoder.token_embedder_tokens.segment_encoder.transformer_model.pooler.dense.{name}"
    for name in ("weight", "bias")
}
ALL_OFF = {
    "model.use_speaker": False,
    "model.use_genre": False,
    "model.use_segment_distance": False,
    "model.use_distance": False,
    "model.coref_depth": 1,
}


def build(overrides=None):
    params = Params.from_file(str(CONFIG), params_overrides=json.dumps(overrides or {}))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary()
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    return reader, model


def tensors(reader, instances):
    batch = Batch(instances)
    batch.index_instances(Vocabulary())
    return batch.as_tensor_dict()


class TestSpanBertCoreference(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(str(CONFIG), str(DATA))

    def test_train_save_load_all_features_depth_2(self):
        self.ensure_model_can_train_save_and_load(self.param_file, gradients_to_ignore=POOLER)

    def test_train_save_load_no_features_depth_1(self):
        self.ensure_model_can_train_save_and_load(
            self.param_file, gradients_to_ignore=POOLER, overrides=json.dumps(ALL_OFF)
        )

    def test_train_save_load_coarse_scores_only(self):
        self.ensure_model_can_train_save_and_load(
            self.param_file,
            gradients_to_ignore=POOLER,
            overrides=json.dumps({"model.fine_scoring": False, "model.coref_depth": 1}),
        )


@pytest.mark.parametrize(
    "feature, parameter",
    [
        ("use_speaker", "speaker_embedding"),
        ("use_genre", "genre_embedding"),
        ("use_segment_distance", "segment_distance_embedding"),
        ("use_distance", "distance_embedding"),
    ],
)
def test_each_feature_switches_off_and_everything_else_still_learns(feature, parameter):
    torch.manual_seed(0)
    reader, model = build({f"model.{feature}": False})
    names = {name for name, _ in model.named_parameters()}
    assert f"_pairwise_scorer.features.{parameter}.weight" not in names
    on_reader, on_model = build()
    assert f"_pairwise_scorer.features.{parameter}.weight" in {n for n, _ in on_model.named_parameters()}
    first_layer = model._pairwise_scorer.scorer.first_layer.in_features
    assert first_layer == on_model._pairwise_scorer.scorer.first_layer.in_features - 8
    ModelTestCase.check_model_computes_gradients_correctly(
        model, tensors(reader, list(reader.read(DATA))), POOLER, disable_dropout=True
    )


def test_depth_controls_the_refinement_gate():
    _, shallow = build({"model.coref_depth": 1})
    _, deep = build({"model.coref_depth": 3})
    assert shallow._refiner is None and deep._refiner is not None
    assert not any(name.startswith("_refiner") for name, _ in shallow.named_parameters())


def test_training_windows_feed_the_model():
    torch.manual_seed(0)
    reader, model = build({"dataset_reader.max_training_segments": 2})
    instances = list(reader.read(DATA))
    assert all(i["metadata"]["word_offset"] >= 0 for i in instances)
    assert reader.last_read_stats.windowed == 3
    output = model(**tensors(reader, instances))
    output["loss"].backward()
    assert torch.isfinite(output["loss"])
    # gold clusters and predictions are in window offsets: all inside the window
    for metadata, clusters in zip([i["metadata"] for i in instances], output["clusters"]):
        assert all(0 <= s <= e < len(metadata["words"]) for c in clusters for s, e in c)


def test_outputs_shapes_and_decoding():
    torch.manual_seed(0)
    reader, model = build()
    model.eval()
    instances = list(reader.read(DATA))
    num_words = [len(i["metadata"]["words"]) for i in instances]
    output = model(**tensors(reader, instances))
    kept = [int(0.4 * n) for n in num_words]  # top_span_ratio 0.4, all non-crossing spans exist
    assert output["top_spans"].shape == (3, max(kept), 2)
    for index, k in enumerate(kept):
        spans = output["top_spans"][index]
        assert (spans[:k] >= 0).all() and (spans[k:] == -1).all()
        # document order, no two kept spans cross
        real = spans[:k].tolist()
        assert real == sorted(real)
        for s1, e1 in real:
            assert not any(s1 < s2 <= e1 < e2 for s2, e2 in real)
    assert output["antecedent_indices"].shape == (3, max(kept), 5)  # max_top_antecedents 5
    # the slot chosen is a real earlier span (or none)
    chosen = output["predicted_antecedents"]
    rows = torch.arange(max(kept)).expand(3, -1)
    chosen_spans = output["antecedent_indices"].gather(2, chosen.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    assert ((chosen < 0) | (chosen_spans < rows)).all()
    assert decode_clusters(output["top_spans"], output["antecedent_indices"], chosen) == output["clusters"]
    without = {key: value for key, value in output.items() if key != "clusters"}
    assert model.make_output_human_readable(without)["clusters"] == output["clusters"]
    assert output["document"][0][:3] == ["Anna", "told", "Ben"]
    metrics = model.get_metrics(reset=True)
    assert 0.0 <= metrics["conll_f1"] <= 1.0 and 0.0 <= metrics["pruned_mention_recall"] <= 1.0
    assert "loss" in output and output["loss"].item() > 0


def test_short_document_keeps_no_span():
    reader, model = build()
    instance = reader.text_to_instance([["Hi", "."]], gold_clusters=[])
    output = model(**tensors(reader, [instance]))
    assert output["top_spans"].shape == (1, 0, 2) and output["clusters"] == [[]]
    assert output["loss"].item() == 0.0 and output["loss"].requires_grad


def test_parameter_names_split_encoder_from_task():
    _, model = build()
    names = [name for name, _ in model.named_parameters()]
    encoder = [name for name in names if name.startswith("encoder.")]
    assert encoder and all("transformer_model" in name for name in encoder)
    task = [name for name in names if not name.startswith("encoder.")]
    assert {name.split(".")[0] for name in task} == {
        "_span_embedder",
        "_mention_scorer",
        "_coarse_scorer",
        "_pairwise_scorer",
        "_refiner",
    }


def test_without_fine_scoring_the_antecedent_scores_are_the_coarse_scores():
    """A model with fine scoring whose pair FFNN outputs 0 everywhere predicts what the coarse-only model does."""
    reader, coarse = build({"model.fine_scoring": False, "model.coref_depth": 1})
    _, fine = build({"model.coref_depth": 1})
    assert coarse._pairwise_scorer is None
    assert not any(name.startswith("_pairwise_scorer") for name, _ in coarse.named_parameters())
    missing, unexpected = fine.load_state_dict(coarse.state_dict(), strict=False)
    assert not unexpected and missing and all(name.startswith("_pairwise_scorer.") for name in missing)
    with torch.no_grad():
        fine._pairwise_scorer.scorer.output_layer.weight.zero_()
        fine._pairwise_scorer.scorer.output_layer.bias.zero_()
    instance = next(iter(reader.read(DATA)))
    outputs = []
    for model in (coarse, fine):
        model.eval()
        with torch.no_grad():
            outputs.append(model.make_output_human_readable(model(**tensors(reader, [instance]))))
    for key in ("top_spans", "antecedent_indices", "predicted_antecedents"):
        assert torch.equal(outputs[0][key], outputs[1][key]), key
    assert outputs[0]["clusters"] == outputs[1]["clusters"]
    # and the fine scores do change the prediction once the FFNN says something
    torch.manual_seed(0)
    with torch.no_grad():
        fine._pairwise_scorer.scorer.output_layer.weight.normal_(std=5.0)
        changed = fine(**tensors(reader, [instance]))["predicted_antecedents"]
    assert not torch.equal(changed, outputs[0]["predicted_antecedents"])


def test_fine_scoring_off_needs_depth_1():
    with pytest.raises(Exception, match="fine_scoring false needs coref_depth 1"):
        build({"model.fine_scoring": False, "model.coref_depth": 2})


def test_bad_inputs_are_reported_with_the_document():
    reader, model = build({"dataset_reader.max_span_width": 12})
    instance = next(iter(reader.read(DATA)))
    with pytest.raises(
        ValueError,
        match=r"document 'tc/test/00/test_0010' part '000'.*12 words "
        r"wide but the model's max_span_width is 10",
    ):
        model(**tensors(reader, [instance]))
    reader, model = build({"model.num_genres": 3})
    with pytest.raises(ValueError, match="genre id 5 is outside the model's 3 genres"):
        model(**tensors(reader, [next(iter(reader.read(DATA)))]))
    with pytest.raises(Exception, match="top_span_ratio"):
        build({"model.top_span_ratio": 0.0})
    assert isinstance(model, SpanBertCoreference)
