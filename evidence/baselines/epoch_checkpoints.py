"""
fastcoref's ``CorefTrainer`` loop resumed across processes at epoch boundaries, for the anchors' runs that take
longer than a session (LingMess: 6 epochs on LitBank are 155-180 minutes of one core).

After every ``every`` epochs (the learning curve's step when there is one, so that a resumed part predicts its
curve at the same epochs) the model, AdamW and learning-rate schedule states, the random generators, the steps
taken, the training losses and seconds so far and the curve's points are written to ``RUN/checkpoint/state.pt``
(whole, then renamed into place). A run started again with the same settings loads them and trains only the
remaining epochs: the trainer's own loop runs unchanged, with its ``AdamW``, ``get_linear_schedule_with_warmup``
and ``tqdm`` swapped for ones that restore the states and skip the epochs already done (its batches are built the
same way from the same seed, and it does not reshuffle them between epochs). A checkpoint of other settings is
refused. The checkpoint is removed when the run has written its results.
"""

import os
import random
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional

STATE_FILE = "state.pt"


class EpochCheckpoints:
    """
    ``out``: the run folder; ``every``: save after the epochs that are a multiple of it; ``identity``: the settings a
    resumed run must share (architecture, epochs, seed, files, encoder). :attr:`done` is the number of epochs a
    checkpoint holds (0 without one), :attr:`state` what it holds.
    """

    def __init__(self, out: Path, every: int, identity: Dict[str, Any]) -> None:
        self.folder, self.every, self.identity = out / "checkpoint", max(1, every), identity
        self.state: Optional[Dict[str, Any]] = self._load()
        self.done = self.state["epoch"] if self.state else 0
        self.steps = self.state["global_step"] if self.state else 0
        self.optimizer = self.scheduler = None
        self._restored_generators = False

    def _load(self) -> Optional[Dict[str, Any]]:
        import torch

        path = self.folder / STATE_FILE
        if not path.exists():
            return None
        state = torch.load(path, map_location="cpu", weights_only=False)
        if state.get("identity") != self.identity:
            raise SystemExit(
                f"{path}: a checkpoint of other settings ({state.get('identity')} against {self.identity}); "
                f"remove {self.folder} to train from the start"
            )
        print(f"resuming after epoch {state['epoch']} from {path}", flush=True)
        return state

    def install(self, trainer_module, trainer, saving: Callable[[], Dict[str, Any]]) -> None:
        """
        Swaps ``trainer_module``'s (``fastcoref.trainer``) optimizer, schedule and progress bars for resuming ones and
        loads the checkpoint's weights into ``trainer.model``. ``saving()`` gives what the adapter keeps beside the
        trainer's states (losses, seconds, curve points), stored with each checkpoint.
        """
        real_adamw, real_schedule, real_tqdm = (
            trainer_module.AdamW,
            trainer_module.get_linear_schedule_with_warmup,
            trainer_module.tqdm,
        )

        def adamw(*args, **kwargs):
            self.optimizer = real_adamw(*args, **kwargs)
            if self.state:
                self.optimizer.load_state_dict(self.state["optimizer"])
            return self.optimizer

        def schedule(*args, **kwargs):
            self.scheduler = real_schedule(*args, **kwargs)
            if self.state:
                self.scheduler.load_state_dict(self.state["scheduler"])
                # building the schedule set every group's rate to its first step's; the next step needs the saved one
                for group, rate in zip(self.scheduler.optimizer.param_groups, self.scheduler.get_last_lr()):
                    group["lr"] = rate
            return self.scheduler

        def progress(iterable=None, *args, desc: Optional[str] = None, **kwargs):
            if desc == "Epoch":
                return real_tqdm(self._epochs(iterable), *args, desc=desc, initial=self.done, total=len(iterable))
            if desc == "Iteration":
                return real_tqdm(self._steps(iterable, trainer, saving), *args, desc=desc, total=len(iterable))
            return real_tqdm(iterable, *args, desc=desc, **kwargs)

        trainer_module.AdamW = adamw
        trainer_module.get_linear_schedule_with_warmup = schedule
        trainer_module.tqdm = progress
        if self.state:
            trainer.model.load_state_dict(self.state["model"])

    def _epochs(self, epochs: Iterable[int]) -> Iterator[int]:
        for epoch in epochs:
            if epoch < self.done:
                continue
            if self.state and not self._restored_generators:
                restore_generators(self.state["generators"])
                self._restored_generators = True
            yield epoch

    def _steps(self, batches, trainer, saving: Callable[[], Dict[str, Any]]) -> Iterator:
        for batch in batches:
            yield batch
            self.steps += 1
        # the epoch's last step is done (and its curve point, which the trainer takes inside the step)
        self.done += 1
        if self.done % self.every == 0:
            self.save(trainer, saving())

    def save(self, trainer, extra: Dict[str, Any]) -> None:
        """Writes the checkpoint after :attr:`done` epochs, whole or not at all."""
        import torch

        self.folder.mkdir(parents=True, exist_ok=True)
        state = {
            "identity": self.identity,
            "epoch": self.done,
            "global_step": self.steps,
            "model": trainer.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "generators": generator_states(),
            "saved_at": time.strftime("%Y-%m-%d %H:%M:%S"),
            **extra,
        }
        partial = self.folder / f".{STATE_FILE}.partial"
        torch.save(state, partial)
        os.replace(partial, self.folder / STATE_FILE)
        print(f"checkpoint: epoch {self.done} saved to {self.folder / STATE_FILE}", flush=True)

    def earlier(self, key: str, default: Any) -> Any:
        """What the checkpoint's ``saving()`` kept under ``key`` (``default`` without a checkpoint)."""
        return self.state.get(key, default) if self.state else default

    def remove(self) -> None:
        for path in (self.folder / STATE_FILE, self.folder / f".{STATE_FILE}.partial"):
            path.unlink(missing_ok=True)
        if self.folder.exists() and not any(self.folder.iterdir()):
            self.folder.rmdir()


def generator_states() -> Dict[str, Any]:
    import numpy as np
    import torch

    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def restore_generators(states: Dict[str, Any]) -> None:
    import numpy as np
    import torch

    random.setstate(states["python"])
    np.random.set_state(states["numpy"])
    torch.set_rng_state(states["torch"])


def summed(earlier: Dict[str, float], now: Dict[str, float]) -> Dict[str, float]:
    """Two timing records (``wall_seconds``, ``cpu_seconds``) added up."""
    return {name: round(earlier.get(name, 0.0) + value, 2) for name, value in now.items()}


def offset_losses(losses: List[List[float]], steps_before: int) -> List[List[float]]:
    """``[step, loss]`` pairs of a resumed part numbered from the whole run's first step."""
    return [[step + steps_before, loss] for step, loss in losses]
