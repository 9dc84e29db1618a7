"""Weights-only loads everywhere allennlp reads weights or checkpoints; atomic saves; recovery fallback."""

import io
import logging
import os
from pathlib import Path

import pytest
import torch

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.safeguards.safe_torch_io import UnsafeCheckpointError, atomic_save, load_weights_only
from tests.safeguards.archive_builders import write_model_archive


class CreatesMarkerWhenUnpickled:
    """A pickle payload: unpickling it with a full unpickler creates ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return Path.touch, (self.marker,)


def payload_weights(marker: Path) -> dict:
    return {"weight": torch.zeros(2), "payload": CreatesMarkerWhenUnpickled(marker)}


def test_the_payload_does_run_under_a_full_unpickler(tmp_path):
    """The payload is real: what the tests below refuse would otherwise have run."""
    marker = tmp_path / "payload_ran"
    buffer = io.BytesIO()
    torch.save(payload_weights(marker), buffer)
    buffer.seek(0)
    torch.load(buffer, weights_only=False)
    assert marker.exists()


def test_archive_with_a_pickle_payload_is_refused_and_the_payload_never_runs(tmp_path, monkeypatch):
    from allennlp.models.archival import load_archive

    # Would switch torch's *default* to full unpickling; an explicit weights_only=True still wins.
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "payload_ran"
    archive = write_model_archive(tmp_path / "model.tar.gz", weights=payload_weights(marker))
    with pytest.raises(UnsafeCheckpointError) as raised:
        load_archive(str(archive))
    assert raised.value.path.endswith("weights.th")
    assert "refusing to load: the file holds pickled Python objects" in str(raised.value)
    assert not marker.exists()


def test_every_allennlp_module_with_torch_file_io_loads_weights_only(tmp_path, monkeypatch):
    import importlib

    from spanbert_lib.safeguards.hooks import MODULES_WITH_TORCH_FILE_IO

    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "payload_ran"
    weights = tmp_path / "weights.th"
    torch.save(payload_weights(marker), weights)
    for name in MODULES_WITH_TORCH_FILE_IO:
        if name.endswith("fairscale_fsdp_accelerator"):
            continue  # needs fairscale's FSDP; bound the same way when imported
        module = importlib.import_module(name)
        with pytest.raises(UnsafeCheckpointError):
            module.torch.load(str(weights), map_location="cpu")
        assert module.torch.save is atomic_save, name
    from allennlp.nn.util import read_state_dict

    with pytest.raises(UnsafeCheckpointError):
        read_state_dict(weights)
    assert not marker.exists()


def test_weights_only_load_reads_plain_state(tmp_path):
    state = {"weight": torch.arange(3.0), "step": 4, "names": ["a", "b"], "nested": {"x": (1, 2.5, None)}}
    path = tmp_path / "state.th"
    atomic_save(state, path)
    loaded = load_weights_only(path, map_location="cpu")
    assert torch.equal(loaded["weight"], state["weight"])
    assert {key: value for key, value in loaded.items() if key != "weight"} == {
        key: value for key, value in state.items() if key != "weight"
    }


def test_atomic_save_leaves_the_old_file_when_the_write_fails(tmp_path):
    path = tmp_path / "model_state_e0_b2.th"
    atomic_save({"weight": torch.ones(2)}, path)

    class Unpicklable:
        def __reduce__(self):
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        atomic_save({"weight": Unpicklable()}, path)
    assert torch.equal(load_weights_only(path)["weight"], torch.ones(2))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model_state_e0_b2.th"]


def write_checkpoint(directory: Path, epoch: int, batch: int, value: float) -> None:
    atomic_save({"weight": torch.full((2,), value)}, directory / f"model_state_e{epoch}_b{batch}.th")
    atomic_save(
        {"version": 1, "epochs_completed": epoch, "batches_in_epoch_completed": batch},
        directory / f"training_state_e{epoch}_b{batch}.th",
    )


def test_recovery_skips_truncated_empty_and_half_saved_checkpoints(tmp_path, caplog):
    from allennlp.training.checkpointer import Checkpointer

    write_checkpoint(tmp_path, 0, 2, 1.0)
    write_checkpoint(tmp_path, 0, 4, 2.0)
    # e1_b0: model state cut short by a kill, training state empty (allennlp wrote in place).
    write_checkpoint(tmp_path, 1, 0, 3.0)
    model_state = tmp_path / "model_state_e1_b0.th"
    model_state.write_bytes(model_state.read_bytes()[:100])
    (tmp_path / "training_state_e1_b0.th").write_bytes(b"")
    # e1_b2: killed between the model state and the training state.
    atomic_save({"weight": torch.full((2,), 4.0)}, tmp_path / "model_state_e1_b2.th")
    # A temporary file of a save that did not finish.
    partial = tmp_path / ".training_state_e1_b2.th.partial-abc123"
    partial.write_bytes(b"half")

    with caplog.at_level(logging.WARNING):
        state = Checkpointer(tmp_path).load_checkpoint()
    assert torch.equal(state.model_state["weight"], torch.full((2,), 2.0))
    assert state.trainer_state["batches_in_epoch_completed"] == 4
    assert "skipping checkpoint e1_b2" in caplog.text and "skipping checkpoint e1_b0" in caplog.text
    assert "recovering from the older checkpoint e0_b4" in caplog.text
    assert not partial.exists()


def test_recovery_with_no_loadable_checkpoint_names_them_all(tmp_path):
    from allennlp.training.checkpointer import Checkpointer

    (tmp_path / "model_state_e0_b2.th").write_bytes(b"")
    (tmp_path / "training_state_e0_b2.th").write_bytes(b"")
    with pytest.raises(UserInputError, match=r"no checkpoint could be loaded: e0_b2 \("):
        Checkpointer(tmp_path).load_checkpoint()
    assert Checkpointer(tmp_path / "empty").load_checkpoint() is None


def test_recovery_refuses_a_checkpoint_with_a_pickle_payload(tmp_path, monkeypatch):
    from allennlp.training.checkpointer import Checkpointer

    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "payload_ran"
    write_checkpoint(tmp_path, 0, 2, 1.0)
    torch.save(payload_weights(marker), tmp_path / "model_state_e1_b0.th")
    torch.save({"version": 1}, tmp_path / "training_state_e1_b0.th")
    with pytest.raises(UnsafeCheckpointError):
        Checkpointer(tmp_path).load_checkpoint()
    assert not marker.exists()


def test_checkpointer_saves_atomically(tmp_path, monkeypatch):
    """Each checkpoint file appears under its final name only once complete (written, fsynced, renamed)."""
    from allennlp.training.checkpointer import Checkpointer
    from allennlp.training.trainer import TrainerCheckpoint

    renames = []
    original_replace = os.replace

    def recording_replace(source, destination):
        renames.append((Path(source).name, Path(destination).name, Path(source).stat().st_size))
        assert not Path(destination).exists()
        original_replace(source, destination)

    monkeypatch.setattr(os, "replace", recording_replace)

    class Trainer:
        def get_checkpoint_state(self):
            return TrainerCheckpoint(
                {"weight": torch.ones(3)}, {"version": 1, "epochs_completed": 1, "batches_in_epoch_completed": 0}
            )

    Checkpointer(tmp_path).save_checkpoint(Trainer())
    assert [(source.split(".partial-")[0], destination) for source, destination, _ in renames] == [
        (".model_state_e1_b0.th", "model_state_e1_b0.th"),
        (".training_state_e1_b0.th", "training_state_e1_b0.th"),
    ]
    assert all(size > 0 for _, _, size in renames)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model_state_e1_b0.th", "training_state_e1_b0.th"]


def test_override_weights_file_of_pretrained_transformers_is_loaded_weights_only(tmp_path, monkeypatch, tiny_bert_dir):
    from allennlp.common import cached_transformers

    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "payload_ran"
    weights = tmp_path / "override.th"
    torch.save(payload_weights(marker), weights)
    real_load = torch.load
    with pytest.raises(UnsafeCheckpointError):
        cached_transformers.get(str(tiny_bert_dir), False, override_weights_file=str(weights))
    assert not marker.exists()
    assert torch.load is real_load
