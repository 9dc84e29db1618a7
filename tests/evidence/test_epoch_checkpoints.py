"""evidence/baselines/epoch_checkpoints.py on a stand-in for fastcoref's trainer module (its loop's shape, the same
module-level AdamW / get_linear_schedule_with_warmup / tqdm it swaps): a run stopped after a checkpoint and started
again ends with the weights, losses and learning rates of the run that never stopped."""

import types
from pathlib import Path

import pytest
import torch
from tqdm.auto import tqdm
from transformers import get_linear_schedule_with_warmup

from evidence.baselines import epoch_checkpoints as checkpoints

EPOCHS, BATCHES = 4, 3


class Stopped(Exception):
    """Stands in for the session's end killing the process."""


def trainer_module():
    """A module shaped like ``fastcoref.trainer``: names the checkpoints swap, and a trainer whose ``train`` runs the
    same nesting of epoch and step loops (warm-up then linear decay, dropout, no reshuffling between epochs)."""
    module = types.SimpleNamespace(
        AdamW=torch.optim.AdamW, get_linear_schedule_with_warmup=get_linear_schedule_with_warmup, tqdm=tqdm
    )

    class Trainer:
        def __init__(self, stop_after_steps=None):
            torch.manual_seed(0)
            self.model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.5), torch.nn.Linear(8, 1))
            generator = torch.Generator().manual_seed(1)
            self.batches = [torch.randn(5, 4, generator=generator) for _ in range(BATCHES)]
            self.stop_after_steps, self.losses, self.rates = stop_after_steps, [], []

        def train(self):
            optimizer = module.AdamW(self.model.parameters(), lr=0.1)
            scheduler = module.get_linear_schedule_with_warmup(optimizer, 2, EPOCHS * BATCHES)
            steps = 0
            for _ in module.tqdm(range(EPOCHS), desc="Epoch"):
                for batch in module.tqdm(self.batches, desc="Iteration"):
                    if steps == self.stop_after_steps:
                        raise Stopped
                    self.rates.append(optimizer.param_groups[0]["lr"])
                    loss = self.model(batch).pow(2).mean()
                    self.losses.append(loss.item())
                    loss.backward()
                    optimizer.step()
                    scheduler.step()
                    self.model.zero_grad()
                    steps += 1

    return module, Trainer


def run(out: Path, stop_after_steps=None, identity=None):
    module, trainer_class = trainer_module()
    trainer = trainer_class(stop_after_steps)
    saved = checkpoints.EpochCheckpoints(out, 1, identity or {"seed": "1"})
    saved.install(module, trainer, lambda: {"losses": saved.earlier("losses", []) + trainer.losses})
    trainer.train()
    return trainer, saved


def test_a_stopped_run_resumes_exactly_where_its_checkpoint_left_it(tmp_path):
    straight, _ = run(tmp_path / "straight")
    with pytest.raises(Stopped):
        run(tmp_path / "stopped", stop_after_steps=2 * BATCHES + 1)  # one step into epoch 3
    resumed, saved = run(tmp_path / "stopped")
    assert saved.done == EPOCHS and saved.steps == EPOCHS * BATCHES
    assert resumed.rates == straight.rates[2 * BATCHES :]  # the schedule goes on from epoch 3, not from its start
    assert saved.earlier("losses", []) + resumed.losses == straight.losses
    for (name, trained), (_, again) in zip(straight.model.state_dict().items(), resumed.model.state_dict().items()):
        torch.testing.assert_close(again, trained, rtol=0, atol=0, msg=name)
    saved.remove()
    assert not (tmp_path / "stopped" / "checkpoint").exists()


def test_a_checkpoint_of_other_settings_is_refused(tmp_path):
    with pytest.raises(Stopped):
        run(tmp_path, stop_after_steps=BATCHES + 1)
    with pytest.raises(SystemExit, match="a checkpoint of other settings"):
        run(tmp_path, identity={"seed": "2"})


def test_summed_timings_and_offset_losses():
    assert checkpoints.summed(
        {"wall_seconds": 1.0, "cpu_seconds": 2.0}, {"wall_seconds": 0.5, "cpu_seconds": 1.25}
    ) == {
        "wall_seconds": 1.5,
        "cpu_seconds": 3.25,
    }
    assert checkpoints.offset_losses([[10, 2.5], [20, 1.5]], 140) == [[150, 2.5], [160, 1.5]]
