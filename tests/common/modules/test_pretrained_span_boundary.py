"""
The pre-trained SBO head as a span extractor: read from a tiny pre-training run (archive,
serialization directory, ``export-encoder`` directory), checked against the pre-training model's
own head, and trained inside a span NER model.
"""

import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Lazy, Params
from allennlp.common.testing import ModelTestCase
from allennlp.models.archival import load_archive
from allennlp.modules.span_extractors import SpanExtractor

from spanbert_lib.commands.export_encoder import export_encoder
from spanbert_lib.common.errors import UserInputError
from spanbert_lib.common.modules import (
    PretrainedSpanBoundarySpanExtractor,
    SpanBoundaryHead,
    load_span_boundary_head,
)
from spanbert_lib.common.modules.entity_aware import EntityAwareEncoder
from spanbert_lib.common.modules.pretrained_span_boundary import SBO_HEAD_CONFIG, SBO_HEAD_WEIGHTS
from tests import REPO_ROOT

PRETRAINING_CONFIG = REPO_ROOT / "fixtures" / "configs" / "pretraining" / "spanbert_tiny.jsonnet"
SPAN_NER_CONFIG = REPO_ROOT / "fixtures" / "configs" / "ner" / "span_ner_pretrained_sbo_tiny.jsonnet"
HIDDEN = 16  # encoder.config.hidden_size of the pre-training fixture


@pytest.fixture(scope="module")
def pretraining_run(tmp_path_factory):
    """A tiny pre-training serialization directory (with model.tar.gz) and its export-encoder directory."""
    serialization_dir = tmp_path_factory.mktemp("pretraining")
    # Non-default sizes, so that the loader must take them from the archive.
    overrides = json.dumps({"model.sbo_max_span_width": 6, "model.encoder.config.layer_norm_eps": 1e-5})
    train_model_from_file(str(PRETRAINING_CONFIG), str(serialization_dir), overrides=overrides)
    exported = export_encoder(str(serialization_dir / "model.tar.gz"), str(serialization_dir / "exported"))
    return serialization_dir, exported


@pytest.fixture(scope="module")
def pretrained_head(pretraining_run) -> SpanBoundaryHead:
    return load_archive(str(pretraining_run[0] / "model.tar.gz")).model.sbo_head.eval()


def states_and_spans():
    torch.manual_seed(1)
    sequence = torch.randn(2, 12, HIDDEN)  # [B, L, H]
    spans = torch.tensor([[[1, 3], [4, 4], [2, 10], [0, 0]], [[5, 6], [1, 1], [3, 9], [0, 11]]])  # [B, S, 2]
    span_mask = torch.tensor([[True, True, True, False], [True, True, True, True]])
    return sequence, spans, span_mask


@pytest.mark.parametrize("source", ["model.tar.gz", "serialization_dir", "exported"])
def test_extractor_equals_the_pretraining_models_span_representation(pretraining_run, pretrained_head, source):
    serialization_dir, exported = pretraining_run
    archive = {
        "model.tar.gz": serialization_dir / "model.tar.gz",
        "serialization_dir": serialization_dir,
        "exported": exported,
    }[source]
    extractor = PretrainedSpanBoundarySpanExtractor(str(archive))
    assert (extractor.get_input_dim(), extractor.get_output_dim()) == (HIDDEN, HIDDEN)
    assert extractor.head.max_span_width == 6 and extractor.head.position_embeddings.embedding_dim == 8
    assert extractor.head.norm1.eps == extractor.head.norm2.eps == 1e-5
    sequence, spans, span_mask = states_and_spans()
    expected = pretrained_head.span_representation(sequence, spans, span_mask)
    actual = extractor(sequence, spans, span_indices_mask=span_mask)
    assert torch.equal(actual, expected)
    assert torch.equal(actual[0, 3], torch.zeros(HIDDEN)) and actual[0, 2].abs().sum() > 0


def test_archive_and_exported_directory_give_the_same_head(pretraining_run):
    serialization_dir, exported = pretraining_run
    from_archive = load_span_boundary_head(serialization_dir / "model.tar.gz").state_dict()
    from_export = load_span_boundary_head(exported).state_dict()
    assert from_archive.keys() == from_export.keys()
    assert all(torch.equal(from_archive[name], from_export[name]) for name in from_archive)
    assert json.loads((exported / SBO_HEAD_CONFIG).read_text()) == {
        "input_dim": HIDDEN,
        "position_embedding_dim": 8,
        "max_span_width": 6,
        "layer_norm_eps": 1e-5,
    }


def test_spans_wider_than_the_head_and_beyond_the_sequence(pretraining_run, pretrained_head):
    extractor = PretrainedSpanBoundarySpanExtractor(str(pretraining_run[1]))
    sequence = torch.randn(1, 12, HIDDEN)
    wide = extractor(sequence, torch.tensor([[[2, 10]]]))  # 9 positions, the head knows 6
    positions = torch.arange(6)
    left, right = sequence[:, 1].expand(6, -1), sequence[:, 11].expand(6, -1)
    expected = pretrained_head.from_boundaries(left, right, positions).mean(0)
    torch.testing.assert_close(wide[0, 0], expected)
    # allennlp pads span indices beyond the sequence in some models: clamped to the last token
    assert torch.equal(extractor(sequence, torch.tensor([[[11, 20]]])), extractor(sequence, torch.tensor([[[11, 11]]])))


def test_trainable_and_frozen(pretraining_run):
    trainable = PretrainedSpanBoundarySpanExtractor(str(pretraining_run[1]))
    frozen = PretrainedSpanBoundarySpanExtractor(str(pretraining_run[1]), trainable=False)
    assert all(parameter.requires_grad for parameter in trainable.parameters())
    assert not any(parameter.requires_grad for parameter in frozen.parameters())
    sequence, spans, span_mask = states_and_spans()
    sequence.requires_grad_(True)
    frozen(sequence, spans, span_indices_mask=span_mask).sum().backward()
    assert sequence.grad is not None and sequence.grad.abs().sum() > 0  # gradients still reach the encoder
    trainable(sequence, spans, span_indices_mask=span_mask).sum().backward()
    assert trainable.head.layer1.weight.grad.abs().sum() > 0


def test_registered_and_built_lazily_with_input_dim(pretraining_run):
    params = Params({"type": "pretrained_span_boundary", "archive": str(pretraining_run[1]), "trainable": False})
    extractor = Lazy(SpanExtractor, params=params).construct(input_dim=HIDDEN)
    assert isinstance(extractor, PretrainedSpanBoundarySpanExtractor) and not extractor.trainable


def test_mismatched_input_dim_is_a_clear_error(pretraining_run):
    archive = str(pretraining_run[0] / "model.tar.gz")
    with pytest.raises(
        UserInputError,
        match=rf"^{archive}: the span boundary head reads states of size 16, but "
        r"the model gives input_dim 32",
    ):
        PretrainedSpanBoundarySpanExtractor(archive, input_dim=32)


def test_archive_without_sbo_head_is_a_clear_error(tmp_path):
    serialization_dir = tmp_path / "no_sbo"
    train_model_from_file(str(PRETRAINING_CONFIG), str(serialization_dir), overrides='{"model.sbo_weight": 0}')
    archive = serialization_dir / "model.tar.gz"
    with pytest.raises(
        UserInputError,
        match=rf"^{archive}: the archived model has no span boundary objective "
        r"head .*sbo_weight: 0",
    ):
        load_span_boundary_head(archive)
    exported = export_encoder(str(archive), str(tmp_path / "exported"))
    assert (exported / "config.json").is_file() and not (exported / SBO_HEAD_WEIGHTS).exists()
    with pytest.raises(UserInputError, match="no span boundary head here: neither sbo_head_config.json"):
        load_span_boundary_head(exported)


def test_unreadable_sources_are_clear_errors(pretraining_run, tmp_path):
    with pytest.raises(UserInputError, match=rf"^{tmp_path / 'missing.tar.gz'}: no such file or directory"):
        load_span_boundary_head(tmp_path / "missing.tar.gz")
    (tmp_path / "notes.txt").write_text("not an archive")
    with pytest.raises(UserInputError, match="not a model archive"):
        load_span_boundary_head(tmp_path / "notes.txt")
    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes((pretraining_run[0] / "model.tar.gz").read_bytes()[:5000])
    with pytest.raises(UserInputError, match=rf"^{truncated}: cannot read the model archive"):
        load_span_boundary_head(truncated)
    (tmp_path / SBO_HEAD_CONFIG).write_text('{"input_dim": 4}')
    with pytest.raises(UserInputError, match=rf"^{tmp_path / SBO_HEAD_CONFIG}: not a span boundary head configuration"):
        load_span_boundary_head(tmp_path)


class TestSpanNerWithPretrainedSpanBoundary(ModelTestCase):
    """``fixtures/configs/ner/span_ner_pretrained_sbo_tiny.jsonnet`` on the tiny pre-training run."""

    @pytest.fixture(autouse=True)
    def pretrained(self, pretraining_run):
        self.exported = str(pretraining_run[1])

    def overrides(self, **changes) -> str:
        return json.dumps(
            {"model.encoder.model_name": self.exported, "model.span_extractor.archive": self.exported, **changes}
        )

    def entity_parameters(self) -> set:
        """The encoder's entity-only parameters: no gradient in a model that uses no entities."""
        encoder_params = Params.from_file(str(SPAN_NER_CONFIG), self.overrides())["model"]["encoder"]
        encoder = EntityAwareEncoder.from_params(encoder_params)
        return {
            f"encoder.{name}"
            for name, _ in encoder.named_parameters()
            if name.startswith(("entity_embeddings.", "self_attentions."))
        }

    def test_trains_saves_and_loads_with_the_frozen_head(self):
        model, _ = self.ensure_model_can_train_save_and_load(
            str(SPAN_NER_CONFIG), overrides=self.overrides(), gradients_to_ignore=self.entity_parameters()
        )
        assert isinstance(model.span_extractor, PretrainedSpanBoundarySpanExtractor)
        assert model.classifier.in_features == HIDDEN
        initial = load_span_boundary_head(self.exported).state_dict()
        trained = model.span_extractor.head.state_dict()
        assert all(torch.equal(initial[name], trained[name]) for name in initial)  # frozen: unchanged by training

    def test_trainable_head_is_updated_by_training(self):
        model, _ = self.ensure_model_can_train_save_and_load(
            str(SPAN_NER_CONFIG),
            overrides=self.overrides(**{"model.span_extractor.trainable": True}),
            gradients_to_ignore=self.entity_parameters(),
        )
        initial = load_span_boundary_head(self.exported).state_dict()
        trained = model.span_extractor.head.state_dict()
        assert not torch.equal(initial["layer1.weight"], trained["layer1.weight"])
