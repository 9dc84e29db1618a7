"""
``--recover`` that ends exactly where an uninterrupted run with the same seed ends.

allennlp's trainer checkpoints the model, optimizer, schedulers and metric tracker, and on
``--recover`` replays the data loader from the start of the run (reading, not training) up to
the checkpoint, so the data order is reproduced from the seeded start. What it does not keep:

* the random states at the checkpoint (dropout, the masking generator, ...): the resumed run
  continues from the states the replay left, which the skipped forward passes never advanced;
* the running sums of a checkpoint taken mid-epoch: the resumed epoch's ``training_loss`` and
  the model's training metrics then cover only the batches after the checkpoint.

:class:`ExactResumeCallback`, which the ``add_exact_resume_callback`` shim adds to every
``GradientDescentTrainer``, saves both in the checkpoint (as the state of a trainer callback,
allennlp's own extension point) together with the random states at the start of the current
epoch, and reinstates them at the exact point of the replay where the checkpoint was taken:

* start of epoch E of a checkpoint ``e{E}_b{J}``: the epoch-start states (so the epoch's
  shuffle is drawn from the same state even when the model draws from Python's generator);
* after the J-th batch of epoch E is read (before the next is): every random state of the
  checkpoint, the model's metric sums and the epoch's running loss sums.

Holds for in-process data loading (``num_workers: 0``) on one process (distributed runs resume
as allennlp does), provided that the batches of the epochs replayed in full are drawn as in the
original run (allennlp's loaders shuffle with Python's ``random``; models draw from torch's
generators).
"""

import logging
from typing import Any, Callable, Dict, Iterator, Optional

from allennlp.training.callbacks.callback import TrainerCallback

from spanbert_lib.safeguards import epoch_loss_ledger
from spanbert_lib.safeguards.epoch_loss_ledger import EpochLossLedger
from spanbert_lib.safeguards.random_states import (
    capture_global_random_states,
    capture_metric_states,
    capture_model_random_states,
    restore_global_random_states,
    restore_metric_states,
    restore_model_random_states,
)

logger = logging.getLogger(__name__)

STATE_VERSION = 1


class ResumePoint:
    """
    Where in the replay of a resumed run to reinstate a checkpoint's states.

    # Parameters

    epoch : `int`
        The checkpoint's epoch.
    batches : `int`
        Batches of that epoch the checkpoint had trained on.
    epoch_start_states : `Optional[Dict[str, Any]]`
        The random states recorded when that epoch started, if any.
    on_reached : `Callable[[], None]`
        Called once, when the replay reaches the point.
    on_epoch_fully_replayed : `Callable[[], None]`
        Called when the replay has gone through the whole epoch.
    """

    def __init__(
        self,
        epoch: int,
        batches: int,
        epoch_start_states: Optional[Dict[str, Any]],
        on_reached: Callable[[], None],
        on_epoch_fully_replayed: Callable[[], None],
    ) -> None:
        self.epoch, self.batches = epoch, batches
        self.epoch_start_states = epoch_start_states
        self.on_reached, self.on_epoch_fully_replayed = on_reached, on_epoch_fully_replayed
        self.reached = False

    def reach(self) -> None:
        if not self.reached:
            self.reached = True
            self.on_reached()


class ResumableDataLoader:
    """
    Wraps the trainer's data loader. Records the global random states as each epoch starts
    (before the inner loader is iterated) and, on a resumed run, reinstates states at a
    :class:`ResumePoint`. Everything else is the inner loader's.

    # Parameters

    inner : `DataLoader`
        The trainer's data loader.
    """

    def __init__(self, inner) -> None:
        self.inner = inner
        self.epochs_started = 0
        self.epoch_start_states: Optional[Dict[str, Any]] = None
        self.resume_point: Optional[ResumePoint] = None

    def __len__(self) -> int:
        return len(self.inner)

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not yet set (copy, unpickling)
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __iter__(self) -> Iterator[Any]:
        epoch = self.epochs_started
        self.epochs_started += 1
        point = self.resume_point if self.resume_point is not None and self.resume_point.epoch == epoch else None
        return self._batches(point)

    def _batches(self, point: Optional[ResumePoint]) -> Iterator[Any]:
        # A generator: nothing here runs before the trainer asks for the epoch's first batch.
        if point is not None and point.batches == 0:
            point.reach()
        elif point is not None and point.epoch_start_states is not None:
            restore_global_random_states(point.epoch_start_states)
        self.epoch_start_states = capture_global_random_states()
        produced = 0
        for batch in self.inner:
            yield batch
            produced += 1
            if point is not None and produced == point.batches:
                point.reach()  # the trainer asks for the next batch only after the checkpoint was taken
        if point is not None and point.batches > 0:
            point.reach()  # the last gradient-accumulation group was shorter
            if produced <= point.batches:
                point.on_epoch_fully_replayed()


class ExactResumeCallback(TrainerCallback):
    """
    Saves in each checkpoint what an exact resume needs beyond allennlp's own state, and
    reinstates it when the trainer resumes from that checkpoint. Added to every
    ``GradientDescentTrainer`` by the ``add_exact_resume_callback`` shim; nothing to configure.

    # Parameters

    serialization_dir : `str`
        The trainer's serialization directory.
    """

    def __init__(self, serialization_dir: str) -> None:
        super().__init__(serialization_dir)
        self.trainer = None
        self.ledger = EpochLossLedger()
        self.data_loader: Optional[ResumableDataLoader] = None
        self._checkpoint_state: Optional[Dict[str, Any]] = None

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        self.trainer = trainer
        epoch_loss_ledger.activate(self.ledger)
        if not isinstance(trainer.data_loader, ResumableDataLoader):
            trainer.data_loader = ResumableDataLoader(trainer.data_loader)
        self.data_loader = trainer.data_loader
        if self._checkpoint_state is not None:
            self._plan_resume(self._checkpoint_state)

    def on_end(
        self,
        trainer,
        metrics: Optional[Dict[str, Any]] = None,
        epoch: Optional[int] = None,
        is_primary: bool = True,
        **kwargs,
    ) -> None:
        epoch_loss_ledger.deactivate(self.ledger)
        if isinstance(trainer.data_loader, ResumableDataLoader):
            trainer.data_loader = trainer.data_loader.inner

    def state_dict(self) -> Dict[str, Any]:
        trainer = self.trainer
        if trainer is None:  # a checkpoint taken before training started
            return {}
        batches_in_epoch = trainer._batches_in_epoch_completed
        state: Dict[str, Any] = {
            "version": STATE_VERSION,
            "position": {"epochs_completed": trainer._epochs_completed, "batches_in_epoch_completed": batches_in_epoch},
            "random": capture_global_random_states(),
            "model_random": capture_model_random_states(trainer.model),
        }
        if batches_in_epoch > 0:
            assert self.data_loader is not None  # set with self.trainer, in on_start
            state["epoch_start_random"] = self.data_loader.epoch_start_states
            state["metrics"] = capture_metric_states(trainer.model)
            state["loss_sums"] = {"loss": self.ledger.loss_sum, "reg_loss": self.ledger.reg_loss_sum}
        return state

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        if state_dict.get("version") != STATE_VERSION:
            logger.warning(
                "the checkpoint holds no random states (saved without exact resume): the resumed run "
                "will not match an uninterrupted one exactly"
            )
            return
        self._checkpoint_state = state_dict

    def _plan_resume(self, state: Dict[str, Any]) -> None:
        trainer, data_loader = self.trainer, self.data_loader
        assert trainer is not None and data_loader is not None  # on_start sets both before it calls this
        if trainer._distributed:
            # Only the primary's states are saved; reinstating them in every worker would give all
            # workers the same dropout and masks.
            logger.info("distributed training resumes as allennlp does (random states not reinstated)")
            return
        epoch, batches = trainer._start_after_epochs_completed, trainer._start_after_batches_in_epoch_completed
        saved = state["position"]
        if (saved["epochs_completed"], saved["batches_in_epoch_completed"]) != (epoch, batches):
            logger.warning(
                "the checkpoint's random states were taken at e%d_b%d, its trainer state at e%d_b%d: "
                "not reinstating them",
                saved["epochs_completed"],
                saved["batches_in_epoch_completed"],
                epoch,
                batches,
            )
            return
        if trainer._checkpointer is not None:
            # Without this the next save_every_num_batches checkpoint counts from the resume point
            # rather than from the checkpoint, and lands elsewhere than in the original run.
            trainer._checkpointer._last_save_num_epochs_completed = epoch
            trainer._checkpointer._last_save_num_batches_in_epoch_completed = batches
        data_loader.resume_point = ResumePoint(
            epoch,
            batches * trainer._num_gradient_accumulation_steps,
            state.get("epoch_start_random"),
            on_reached=lambda: self._reinstate(state),
            on_epoch_fully_replayed=self._report_replayed_epoch,
        )

    def _reinstate(self, state: Dict[str, Any]) -> None:
        assert self.trainer is not None  # called back by the data loader that on_start gave the trainer
        restore_global_random_states(state["random"])
        restore_model_random_states(self.trainer.model, state["model_random"])
        if "metrics" in state:
            restore_metric_states(self.trainer.model, state["metrics"])
            self.ledger.carry(state["loss_sums"]["loss"], state["loss_sums"]["reg_loss"])
        logger.info(
            "reinstated the random states and running metrics of checkpoint e%d_b%d",
            state["position"]["epochs_completed"],
            state["position"]["batches_in_epoch_completed"],
        )

    def _report_replayed_epoch(self) -> None:
        # Checkpoint after the epoch's last batch (its end-of-epoch checkpoint was lost): allennlp
        # reports no training metrics for an epoch whose batches were all skipped, although the
        # carried sums and metrics hold them in full. One batch less counts as skipped.
        assert self.trainer is not None  # called back by the data loader that on_start gave the trainer
        self.trainer._start_after_batches_in_epoch_completed -= 1
