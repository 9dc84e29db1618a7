"""
A training run killed with SIGKILL (mid-epoch, and during a checkpoint save) and resumed with
``--recover`` ends with exactly the metrics and weights of an uninterrupted run.
"""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from spanbert_lib.safeguards.epoch_loss_ledger import EpochLossLedger
from spanbert_lib.safeguards.exact_resume import ResumableDataLoader, ResumePoint
from spanbert_lib.safeguards.random_states import (
    capture_global_random_states,
    capture_metric_states,
    restore_global_random_states,
    restore_metric_states,
)
from spanbert_lib.safeguards.safe_torch_io import atomic_save, load_weights_only
from tests import REPO_ROOT

CONFIG = REPO_ROOT / "fixtures" / "configs" / "pretraining" / "spanbert_tiny.jsonnet"
KILLER = Path(__file__).with_name("training_killer.py")
# 28 shuffled batches an epoch, a checkpoint every 4 batches (e0_b28 included) and at each epoch's end.
OVERRIDES = json.dumps(
    {
        "data_loader": {"batch_size": 16, "shuffle": True},
        "trainer": {"num_epochs": 2, "checkpointer": {"save_every_num_batches": 4}},
    }
)


def train(serialization_dir: Path, *extra: str, kill: tuple = ()) -> subprocess.CompletedProcess:
    command = (
        [str(Path(sys.executable).with_name("allennlp"))] if not kill else [sys.executable, str(KILLER), *kill, "--"]
    )
    command += ["train", str(CONFIG), "-s", str(serialization_dir), "-o", OVERRIDES, *extra]
    return subprocess.run(
        command,
        cwd=str(REPO_ROOT),
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
    )


def comparable_metrics(path: Path) -> dict:
    metrics = json.loads(path.read_text())
    return {key: value for key, value in metrics.items() if "duration" not in key and "memory" not in key}


@pytest.mark.slow
def test_killed_and_recovered_run_ends_exactly_as_an_uninterrupted_one(tmp_path):
    uninterrupted = train(tmp_path / "uninterrupted")
    assert uninterrupted.returncode == 0, uninterrupted.stderr[-4000:]

    run = tmp_path / "interrupted"
    # Killed during the save of e1_b0 (after epoch 0's validation): its model state was renamed into
    # place, its training state written and fsynced under a temporary name but never renamed.
    killed = train(run, kill=("--kill-before-rename", "training_state_e1_b0.th"))
    assert killed.returncode == -9, killed.stderr[-4000:]
    assert (run / "model_state_e1_b0.th").exists() and not (run / "training_state_e1_b0.th").exists()
    assert any(path.name.startswith(".training_state_e1_b0.th.partial-") for path in run.iterdir())
    (run / "metrics_epoch_0.json").unlink()  # the resumed run must produce epoch 0's metrics itself
    # Resumed from e0_b28 (after epoch 0's last batch: the whole epoch is replayed, then validated),
    # and killed as the 10th batch of epoch 1 starts: newest checkpoint e1_b8.
    killed = train(run, "--recover", kill=("--kill-at-training-batch", "10"))
    assert killed.returncode == -9, killed.stderr[-4000:]
    log = killed.stdout + killed.stderr
    assert "skipping checkpoint e1_b0" in log and "recovering from the older checkpoint e0_b28" in log
    assert not any(".partial-" in path.name for path in run.iterdir())

    resumed = train(run, "--recover")
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    assert "reinstated the random states and running metrics of checkpoint e1_b8" in resumed.stdout + resumed.stderr

    for name in ("metrics.json", "metrics_epoch_0.json", "metrics_epoch_1.json"):
        expected = comparable_metrics(tmp_path / "uninterrupted" / name)
        assert "training_loss" in expected and "validation_loss" in expected
        assert comparable_metrics(run / name) == expected, name
    expected_weights = load_weights_only(tmp_path / "uninterrupted" / "best.th")
    weights = load_weights_only(run / "best.th")
    assert expected_weights.keys() == weights.keys()
    assert all(torch.equal(weights[name], value) for name, value in expected_weights.items())


def test_global_random_states_survive_a_weights_only_round_trip(tmp_path):
    random.seed(1), np.random.seed(2), torch.manual_seed(3)
    np.random.standard_normal()  # leaves a cached gaussian in numpy's state
    atomic_save(capture_global_random_states(), tmp_path / "states.th")
    expected = (random.random(), np.random.standard_normal(), torch.rand(3))
    restore_global_random_states(load_weights_only(tmp_path / "states.th"))
    drawn = (random.random(), np.random.standard_normal(), torch.rand(3))
    assert drawn[:2] == expected[:2] and torch.equal(drawn[2], expected[2])


def test_ledger_continues_the_checkpoint_sum_with_the_same_additions():
    batch_losses = [0.1, 0.2, 0.3, 1e16, 1.0, -1e16, 0.7]
    uninterrupted = 0.0
    for loss in batch_losses:
        uninterrupted += loss
    ledger = EpochLossLedger()
    total = 0.0
    for loss in batch_losses[:4]:  # the original run, until the checkpoint
        total += loss
        ledger.totals(total, None, loss, reset=False)
    checkpoint_sum = ledger.loss_sum

    resumed = EpochLossLedger()
    resumed.carry(checkpoint_sum, None)
    restarted = 0.0  # allennlp's local sum after a resume
    for loss in batch_losses[4:]:
        restarted += loss
        per_batch, _ = resumed.totals(restarted, None, loss, reset=False)
    final, _ = resumed.totals(restarted, None, None, reset=True)
    assert final == per_batch == uninterrupted
    assert checkpoint_sum + restarted != uninterrupted  # what adding the sums afterwards would give
    assert resumed.totals(5.0, None, None, reset=True) == (5.0, None)  # the next epoch is not carried


class ShufflingLoader:
    """Draws from Python's generator when iterated, like allennlp's loaders when shuffling."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.events = []

    def __len__(self) -> int:
        return self.size

    def __iter__(self):
        order = list(range(self.size))
        random.shuffle(order)
        for index in order:
            self.events.append(("produce", index))
            yield index


def test_resumable_loader_reinstates_states_between_the_checkpointed_batch_and_the_next():
    inner = ShufflingLoader(6)
    loader = ResumableDataLoader(inner)
    random.seed(0)
    list(loader)  # epoch 0, replayed in full
    reached = []
    loader.resume_point = ResumePoint(
        1,
        2,
        epoch_start_states=None,
        on_reached=lambda: inner.events.append(("reached", None)) or reached.append(1),
        on_epoch_fully_replayed=lambda: reached.append("fully"),
    )
    inner.events.clear()
    batches = list(loader)
    assert [event for event, _ in inner.events] == ["produce", "produce", "reached"] + ["produce"] * 4
    assert reached == [1] and sorted(batches) == list(range(6))
    assert len(loader) == 6


def test_resumable_loader_restores_the_epoch_start_states_before_the_shuffle():
    inner = ShufflingLoader(8)
    loader = ResumableDataLoader(inner)
    random.seed(5)
    original_order = list(loader)
    epoch_start = loader.epoch_start_states
    random.seed(123)  # the replay left Python's generator elsewhere
    resumed = ResumableDataLoader(inner)
    resumed.resume_point = ResumePoint(0, 3, epoch_start, on_reached=lambda: None, on_epoch_fully_replayed=lambda: None)
    assert list(resumed) == original_order


def test_resumable_loader_reports_an_epoch_replayed_in_full():
    calls = []
    loader = ResumableDataLoader([10, 11, 12])
    loader.resume_point = ResumePoint(
        0, 3, None, on_reached=lambda: calls.append("reached"), on_epoch_fully_replayed=lambda: calls.append("fully")
    )
    assert list(loader) == [10, 11, 12]
    assert calls == ["reached", "fully"]


def test_metric_states_of_helper_objects_are_saved_and_restored(tmp_path):
    from allennlp.training.metrics import Average, CategoricalAccuracy

    class Scores:
        def __init__(self) -> None:
            self.accuracy = CategoricalAccuracy()
            self.mean = Average()

    class Head(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scores = Scores()
            self.by_name = {"extra": Average()}

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.head = Head()

    net = Net()
    net.head.scores.accuracy(torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]), torch.tensor([1, 1, 1]))
    net.head.scores.mean(2.0), net.head.scores.mean(3.5), net.head.by_name["extra"](7.0)
    net.head.scores.mean._total_value = np.float64(net.head.scores.mean._total_value)  # refused by weights_only
    net.head.by_name["extra"].unsaveable = object()
    atomic_save(capture_metric_states(net), tmp_path / "metrics.th")
    fresh = Net()
    restore_metric_states(fresh, load_weights_only(tmp_path / "metrics.th"))
    assert fresh.head.scores.accuracy.get_metric() == pytest.approx(2 / 3)
    assert fresh.head.scores.mean.get_metric() == 2.75
    assert fresh.head.by_name["extra"].get_metric() == 7.0


def test_pretraining_model_masking_generator_state_round_trip(tmp_path):
    from allennlp.common import Params
    from allennlp.data import Vocabulary
    from allennlp.models import Model

    model = Model.from_params(vocab=Vocabulary(), params=Params.from_file(str(CONFIG))["model"])
    model.train()
    generator = model._generator(torch.device("cpu"))
    torch.rand(5, generator=generator)
    atomic_save(model.random_state_dict(), tmp_path / "random.th")
    expected = torch.rand(5, generator=generator)

    fresh = Model.from_params(vocab=Vocabulary(), params=Params.from_file(str(CONFIG))["model"])
    fresh.train()
    fresh.load_random_state_dict(load_weights_only(tmp_path / "random.th"))
    assert torch.equal(torch.rand(5, generator=fresh._generator(torch.device("cpu"))), expected)


def test_compat_modules_import_before_allennlp_without_cycles():
    """A user may import these modules first; the shims they register must still apply."""
    code = (
        "import spanbert_lib.safeguards.exact_resume, spanbert_lib.safeguards.atomic_checkpoints, "
        "spanbert_lib.safeguards.safe_archives, spanbert_lib.safeguards.safe_torch_io, "
        "spanbert_lib.safeguards.random_states\n"
        "from allennlp.training.gradient_descent_trainer import GradientDescentTrainer\n"
        "from allennlp.training.checkpointer import Checkpointer\n"
        "from allennlp.models import archival\n"
        "print(GradientDescentTrainer.__init__._spanbert_lib_shim, Checkpointer.load_checkpoint.__name__, "
        "archival.extracted_archive.__module__)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=str(REPO_ROOT)
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    assert completed.stdout.split() == [
        "True",
        "load_newest_complete_checkpoint",
        "spanbert_lib.safeguards.safe_archives",
    ]


def test_only_training_calls_of_get_metrics_use_the_ledger():
    from allennlp.training import util as training_util

    from spanbert_lib.safeguards import epoch_loss_ledger

    class NoMetrics(torch.nn.Module):
        def get_metrics(self, reset: bool = False) -> dict:
            return {}

    model = NoMetrics()
    ledger = EpochLossLedger()
    ledger.carry(10.0, None)
    epoch_loss_ledger.activate(ledger)
    try:
        model.eval()  # validation: untouched although the ledger carries
        assert training_util.get_metrics(model, 3.0, None, 3.0, None, 1)["loss"] == 3.0
        model.train()
        assert training_util.get_metrics(model, 2.0, None, 2.0, None, 1)["loss"] == 12.0
        assert training_util.get_metrics(model, 2.0, None, None, None, 2, reset=True)["loss"] == 6.0
        assert training_util.get_metrics(model, 4.0, None, None, None, 2, reset=True)["loss"] == 2.0
    finally:
        epoch_loss_ledger.deactivate(ledger)
