"""
The training loop's running loss sums, kept where a checkpoint can save them and a resumed epoch
can continue them.

allennlp's ``GradientDescentTrainer._train_epoch`` sums the batch losses of an epoch in a local
variable and passes the sum to ``allennlp.training.util.get_metrics`` after every batch. A run
resumed mid-epoch restarts that sum at 0.0, so the epoch's ``training_loss`` covers only the
batches after the checkpoint. The ``carry_epoch_loss`` shim makes ``get_metrics`` consult the
active :class:`EpochLossLedger`, which records the sums and, after a resume, continues the
checkpoint's sum with the very additions of the uninterrupted run.
"""

from typing import Optional, Tuple


class EpochLossLedger:
    """
    The training loop's running loss sums of the current epoch, as passed to ``get_metrics``
    after each batch, and, in an epoch resumed mid-way, the sums carried over from the checkpoint.
    """

    def __init__(self) -> None:
        self.loss_sum = 0.0
        self.reg_loss_sum: Optional[float] = None
        self._carried_reg_loss: Optional[float] = None
        self.carrying = False

    def carry(self, loss_sum: float, reg_loss_sum: Optional[float]) -> None:
        """Continues the sums of a checkpoint taken mid-epoch, until the epoch's final ``get_metrics``."""
        self.loss_sum, self._carried_reg_loss, self.carrying = loss_sum, reg_loss_sum, True

    def totals(
        self, total_loss: float, total_reg_loss: Optional[float], batch_loss: Optional[float], reset: bool
    ) -> Tuple[float, Optional[float]]:
        """The totals ``get_metrics`` should use, given those the training loop passed."""
        if self.carrying:
            if batch_loss is not None:
                # The loop's own sum restarted at 0.0; continuing the carried sum batch by batch
                # performs the very additions of the uninterrupted run.
                self.loss_sum += batch_loss
            total_loss = self.loss_sum
            if total_reg_loss is not None and self._carried_reg_loss is not None:
                # Equal up to float rounding only (the loop adds the regulariser per batch, not per group).
                total_reg_loss = self._carried_reg_loss + total_reg_loss
            if reset:
                self.carrying = False
        if not reset:
            self.loss_sum, self.reg_loss_sum = total_loss, total_reg_loss
        return total_loss, total_reg_loss


_active_ledger: Optional[EpochLossLedger] = None


def activate(ledger: EpochLossLedger) -> None:
    """Makes ``get_metrics`` consult ``ledger`` (the running trainer's)."""
    global _active_ledger
    _active_ledger = ledger


def deactivate(ledger: EpochLossLedger) -> None:
    global _active_ledger
    if _active_ledger is ledger:
        _active_ledger = None


def carry_epoch_loss(module) -> None:
    """
    Shim for ``allennlp.training.util``: ``get_metrics`` of the training loop (model in train mode)
    consults the running trainer's ledger. Idempotent.
    """
    original = module.get_metrics
    if getattr(original, "_spanbert_lib_shim", False):
        return

    def get_metrics(model, total_loss, total_reg_loss, batch_loss, batch_reg_loss, num_batches, reset=False):
        # The trainer calls get_metrics for training with the model in train mode, for validation
        # (in _validation_loss and after it) in eval mode.
        if _active_ledger is not None and model.training:
            total_loss, total_reg_loss = _active_ledger.totals(total_loss, total_reg_loss, batch_loss, reset)
        return original(model, total_loss, total_reg_loss, batch_loss, batch_reg_loss, num_batches, reset)

    get_metrics._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    get_metrics.__doc__ = original.__doc__
    module.get_metrics = get_metrics
