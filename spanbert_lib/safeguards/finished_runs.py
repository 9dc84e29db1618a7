"""
``allennlp train --recover`` on a run that already finished changes nothing.

allennlp recovers from the last checkpoint, finds no epoch left to train, and then writes
``metrics.json`` again from that empty training (a handful of keys instead of the run's results) and
archives ``model.tar.gz`` again. A run counts as finished when its ``model.tar.gz`` and final
``metrics.json`` exist and the ``trainer.num_epochs`` asked for is not larger than the run's own: then
``--recover`` says so and returns (exit status 0) without writing anything.

Asking for more epochs (``-o '{"trainer.num_epochs": N}'`` with ``N`` larger than the run's) continues the
run from its last checkpoint up to ``N`` epochs: allennlp's check that the recovered configuration is
the saved one accepts a larger ``trainer.num_epochs`` (and nothing else that differs).
"""

import functools
import inspect
import logging
import os
from types import ModuleType
from typing import Any, Dict, Optional

from spanbert_lib.common.json_files import read_json_object

logger = logging.getLogger(__name__)

# GradientDescentTrainer's default
DEFAULT_NUM_EPOCHS = 20
NUM_EPOCHS_KEY = "trainer.num_epochs"


def _num_epochs(config: Any) -> int:
    trainer: Any = config.get("trainer") if hasattr(config, "get") else None
    value = trainer.get("num_epochs") if hasattr(trainer, "get") else None
    return int(value) if isinstance(value, int) else DEFAULT_NUM_EPOCHS


def finished_run(serialization_dir: str, params: Any) -> Optional[str]:
    """
    Why recovering ``serialization_dir`` with ``params`` would train nothing, or None.

    # Parameters

    serialization_dir : `str`
        The run's directory.
    params : `Params`
        The configuration ``--recover`` was given (overrides applied).

    # Returns

    `Optional[str]`
        A one-line explanation when the run finished and no more epochs are asked for; None otherwise.
    """
    archive = os.path.join(serialization_dir, "model.tar.gz")
    metrics = read_json_object(os.path.join(serialization_dir, "metrics.json"))
    saved = read_json_object(os.path.join(serialization_dir, "config.json"))
    if metrics is None or saved is None or not os.path.isfile(archive):
        return None
    saved_epochs = _num_epochs(saved)
    if _num_epochs(params) > saved_epochs:
        return None
    trained = metrics.get("epoch")
    if isinstance(trained, int):
        trained_text = f"{trained + 1} epoch{'s' if trained else ''}"
    else:
        trained_text = "all epochs"
    return (
        f"{serialization_dir}: this training run is finished ({trained_text} of {saved_epochs}; model.tar.gz and "
        "metrics.json are written): nothing to recover and nothing was changed. To train it longer, ask for more "
        f"epochs: --recover -o '{{\"{NUM_EPOCHS_KEY}\": {saved_epochs + 1}}}'"
    )


def _more_epochs_only(params: Any, saved: Dict[str, Any]) -> Optional[int]:
    """The saved ``num_epochs`` when ``params`` differs from ``saved`` only by asking for more epochs."""
    from allennlp.common import Params

    asked, flat_saved = params.as_flat_dict(), Params(saved).as_flat_dict()
    differing = {key for key in asked.keys() | flat_saved.keys() if asked.get(key) != flat_saved.get(key)}
    saved_epochs = _num_epochs(saved)
    if differing and differing <= {NUM_EPOCHS_KEY} and _num_epochs(params) > saved_epochs:
        return saved_epochs
    return None


def skip_finished_runs(module: ModuleType) -> None:
    """Shim for ``allennlp.commands.train``: ``train_model`` returns at once for a finished run (module docstring)."""
    original = module.train_model
    if getattr(original, "_spanbert_lib_finished_runs", False):
        return
    signature = inspect.signature(original)

    @functools.wraps(original)
    def train_model(*args, **kwargs):
        arguments = signature.bind(*args, **kwargs).arguments
        serialization_dir = os.fspath(arguments["serialization_dir"])
        if arguments.get("recover") and not arguments.get("force"):
            message = finished_run(serialization_dir, arguments["params"])
            if message is not None:
                print(message, flush=True)
                return _finished_model(serialization_dir, arguments)
        return original(*args, **kwargs)

    train_model._spanbert_lib_finished_runs = True  # type: ignore[attr-defined]  # why: shim marker
    module.train_model = train_model  # type: ignore[attr-defined]  # why: monkeypatch


def _finished_model(serialization_dir: str, arguments: Dict[str, Any]):
    """
    What ``train_model`` returns for the finished run: its archived model when ``return_model=True`` is
    asked for explicitly, else None (loading it would only cost time: ``allennlp train`` drops it).
    """
    if arguments.get("return_model") is not True or arguments.get("dry_run"):
        return None
    from allennlp.models.archival import load_archive

    return load_archive(os.path.join(serialization_dir, "model.tar.gz")).model


def accept_more_epochs(module: ModuleType) -> None:
    """
    Shim for ``allennlp.training.util``: ``create_serialization_dir`` lets ``--recover`` ask for a larger
    ``trainer.num_epochs`` than the run's (module docstring).
    """
    original = module.create_serialization_dir
    if getattr(original, "_spanbert_lib_more_epochs", False):
        return

    @functools.wraps(original)
    def create_serialization_dir(params, serialization_dir, recover: bool, force: bool) -> None:
        saved = read_json_object(os.path.join(serialization_dir, "config.json")) if recover else None
        saved_epochs = _more_epochs_only(params, saved) if saved is not None else None
        if saved_epochs is None:
            return original(params, serialization_dir, recover, force)
        logger.info(
            "continuing %s from its last checkpoint up to %d epochs (it was configured for %d)",
            serialization_dir,
            _num_epochs(params),
            saved_epochs,
        )
        as_saved = params.duplicate()
        as_saved.params["trainer"]["num_epochs"] = saved_epochs
        return original(as_saved, serialization_dir, recover, force)

    create_serialization_dir._spanbert_lib_more_epochs = True  # type: ignore[attr-defined]  # why: shim marker
    module.create_serialization_dir = create_serialization_dir  # type: ignore[attr-defined]  # why: monkeypatch
