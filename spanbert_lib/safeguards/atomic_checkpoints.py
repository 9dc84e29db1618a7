"""
``--recover`` from the newest checkpoint that loads, not merely the newest one on disk.

allennlp's ``Checkpointer.load_checkpoint`` takes the newest ``model_state_e*_b*.th`` and
``torch.load``\\ s it and its ``training_state`` twin; when a kill left one of them truncated
(allennlp wrote them in place) or missing (killed between the two saves), recovery dies with
``EOFError`` / "PytorchStreamReader failed" although an older complete checkpoint sits beside
it. Saves are atomic now (:func:`spanbert_lib.safeguards.safe_torch_io.atomic_save`), and
:func:`load_newest_complete_checkpoint` replaces ``load_checkpoint``: it tries checkpoints
newest first, logs each one it skips and why, and removes temporary files a killed save left.
"""

import glob
import logging
import os
from typing import TYPE_CHECKING, List, Optional

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.safeguards.safe_torch_io import UnsafeCheckpointError, load_weights_only, partial_file_prefix

if TYPE_CHECKING:
    from allennlp.training.trainer import TrainerCheckpoint

logger = logging.getLogger(__name__)


def remove_partial_files(serialization_dir: str) -> List[str]:
    """Removes the temporary files of interrupted atomic checkpoint saves; returns their paths."""
    removed = []
    for pattern in ("model_state_e*_b*.th", "training_state_e*_b*.th"):
        prefix_pattern = partial_file_prefix(pattern) + "*"
        for path in glob.glob(os.path.join(glob.escape(serialization_dir), prefix_pattern)):
            os.remove(path)
            removed.append(path)
    for path in removed:
        logger.warning("removed %s, left by a checkpoint save that did not finish", path)
    return removed


def _short_reason(error: Exception) -> str:
    """``Type: first sentence`` of a load error (torch's "PytorchStreamReader failed ..." runs on for lines)."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {text.split('. ')[0]}" if text else type(error).__name__


def load_newest_complete_checkpoint(checkpointer) -> Optional["TrainerCheckpoint"]:
    """
    Replacement of ``Checkpointer.load_checkpoint``: the model and training state of the newest
    checkpoint whose two files both load, or ``None`` when the directory holds no checkpoint.

    # Raises

    UnsafeCheckpointError
        When a checkpoint file holds pickled code: that is never silently skipped.
    UserInputError
        When checkpoints exist but none of them loads; it names every file that does not load, and why.
    """
    from allennlp.training.trainer import TrainerCheckpoint

    serialization_dir = checkpointer._serialization_dir
    remove_partial_files(serialization_dir)
    skipped = []
    for point in sorted(checkpointer._find_all_checkpoints(), reverse=True):
        states, failures = [], []
        for path in (checkpointer._model_state_path(*point), checkpointer._training_state_path(*point)):
            try:
                # Loaded on the CPU; load_state_dict moves parameters to the model's device.
                states.append(load_weights_only(path, map_location="cpu"))
            except UnsafeCheckpointError:
                raise
            except Exception as error:  # truncated, empty or missing: torch raises several types
                failures.append(f"{os.path.basename(path)}: {_short_reason(error)}")
        if failures:
            reason = "; ".join(failures)
            logger.warning(
                "skipping checkpoint e%d_b%d in %s, it does not load (%s)",
                point[0],
                point[1],
                serialization_dir,
                reason,
            )
            skipped.append(f"e{point[0]}_b{point[1]} ({reason})")
            continue
        if skipped:
            logger.warning("recovering from the older checkpoint e%d_b%d", *point)
        return TrainerCheckpoint(*states)
    if skipped:
        raise UserInputError(f"no checkpoint could be loaded: {'; '.join(skipped)}", path=serialization_dir)
    return None


def recover_from_newest_complete_checkpoint(module) -> None:
    """Shim for ``allennlp.training.checkpointer``: see the module docstring. Idempotent."""
    module.Checkpointer.load_checkpoint = load_newest_complete_checkpoint
