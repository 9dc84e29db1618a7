"""
Continued pre-training of a PRETRAINED encoder, as the main job composes it: an encoder with weights
(``encoder: {model_name: ...}``, no ``config``) + the MLM head tied to its word embeddings + a new SBO head,
built from a config, trained, saved and loaded; ``freeze_encoder`` trains the heads only.
"""

import copy
import itertools
import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.models.archival import load_archive
from allennlp.training.optimizers import Optimizer
from safetensors.torch import load_file

from tests import REPO_ROOT, TINY_BERT_DIR

CONFIG = REPO_ROOT / "fixtures" / "configs" / "pretraining" / "spanbert_tiny.jsonnet"
CORPUS = REPO_ROOT / "fixtures" / "corpus" / "story_the_cartographers_daughter.txt"
PRETRAINED_WEIGHTS = load_file(str(TINY_BERT_DIR / "model.safetensors"))


def pretrained_config(tmp_path, **model_settings) -> str:
    """The fixture pre-training config with the tiny BERT's own weights as the encoder (no ``config``)."""
    params = Params.from_file(str(CONFIG)).as_dict()
    params["model"]["encoder"] = {"model_name": str(TINY_BERT_DIR)}
    params["model"].update(model_settings)
    params["train_data_path"] = params["validation_data_path"] = str(CORPUS)
    path = tmp_path / "pretrained.json"
    path.write_text(json.dumps(params))
    return str(path)


def encoder_weights(model) -> dict:
    return {name: tensor.detach().clone() for name, tensor in model.encoder.state_dict().items()}


def assert_pretrained(weights: dict) -> None:
    """Every weight the tiny BERT's file holds is in ``weights`` unchanged."""
    assert PRETRAINED_WEIGHTS
    for name, tensor in PRETRAINED_WEIGHTS.items():
        name = name.removeprefix("bert.")
        assert torch.equal(weights[name], tensor), f"{name} differs from the pretrained weights"


class TestPretrainedEncoderWithTiedHeads(ModelTestCase):
    def test_train_save_and_load(self, tmp_path):
        config = pretrained_config(tmp_path)
        self.set_up_model(config, str(CORPUS))
        assert_pretrained(encoder_weights(self.model))  # loaded, not freshly initialised
        embeddings = self.model.encoder.get_input_embeddings().weight
        assert self.model.mlm_head.decoder.embedding.weight is embeddings  # tied, not copied
        assert self.model.sbo_decoder.embedding.weight is embeddings
        self.ensure_model_can_train_save_and_load(config)


def _train_steps(config: str, steps: int):
    """The model the config builds, and the same model after ``steps`` optimizer steps with the config's optimizer."""
    params = Params.from_file(config)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(itertools.islice(reader.read(str(CORPUS)), 8 * steps))
    model = Model.from_params(vocab=Vocabulary(), params=params.pop("model"))
    initial = copy.deepcopy(model)
    trained = [[name, parameter] for name, parameter in model.named_parameters() if parameter.requires_grad]
    optimizer = Optimizer.from_params(model_parameters=trained, params=params["trainer"].pop("optimizer"))
    model.train()
    for step in range(steps):
        batch = Batch(instances[8 * step : 8 * (step + 1)])
        batch.index_instances(Vocabulary())
        optimizer.zero_grad()
        model(**batch.as_tensor_dict())["loss"].backward()
        optimizer.step()
    return initial, model


def _changed(before: torch.nn.Module, after: torch.nn.Module) -> set:
    after_parameters = dict(after.named_parameters())
    return {name for name, value in before.named_parameters() if not torch.equal(value, after_parameters[name])}


def test_frozen_encoder_stays_as_loaded_while_the_heads_train(tmp_path):
    initial, model = _train_steps(pretrained_config(tmp_path, freeze_encoder=True), steps=3)
    changed = _changed(initial, model)
    assert not {name for name in changed if name.startswith("encoder.")}
    assert any(name.startswith("mlm_head.") for name in changed) and any(
        name.startswith("sbo_head.") for name in changed
    )
    assert_pretrained(encoder_weights(model))
    assert model.training and not model.encoder.training  # no dropout in the frozen encoder


def test_adapted_encoder_trains_with_the_heads(tmp_path):
    initial, model = _train_steps(pretrained_config(tmp_path), steps=3)
    changed = _changed(initial, model)
    assert "encoder.embeddings.word_embeddings.weight" in changed  # also through the tied decoders
    assert {name for name in changed if name.startswith("encoder.encoder.layer.")}
    assert any(name.startswith("sbo_head.") for name in changed)


def test_frozen_run_archives_the_pretrained_encoder(tmp_path):
    """Through `allennlp train`, as the main job trains its frozen baseline: the archived encoder is the loaded one."""
    overrides = {"model.freeze_encoder": True, "trainer.num_epochs": 1, "data_loader.batches_per_epoch": 3}
    train_model_from_file(pretrained_config(tmp_path), str(tmp_path / "run"), overrides=json.dumps(overrides))
    archived = load_archive(str(tmp_path / "run" / "model.tar.gz")).model
    assert_pretrained(encoder_weights(archived))
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["training_mlm_accuracy"] >= 0.0 and metrics["training_loss"] > 0.0


@pytest.mark.parametrize("freeze", [True, False])
def test_trained_parameter_count(tmp_path, freeze):
    params = Params.from_file(pretrained_config(tmp_path, freeze_encoder=freeze))
    model = Model.from_params(vocab=Vocabulary(), params=params.pop("model"))
    trained = {name for name, parameter in model.named_parameters() if parameter.requires_grad}
    assert any(name.startswith("encoder.") for name in trained) != freeze
    assert {"mlm_head.dense.weight", "mlm_head.decoder.bias", "sbo_decoder.bias"} <= trained
