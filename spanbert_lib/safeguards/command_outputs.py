"""
allennlp's own commands write where they read no more, and their output files appear whole or not at all.

* ``allennlp predict``: ``--output-file`` (and any ``*_file`` / ``*_path`` of ``--predictor-args``, e.g.
  the QA predictor's ``predictions_file``) naming the input file or the archive is refused before the
  model is loaded; the output is written to a temporary file moved into place when every line was
  predicted (allennlp opened it with ``"w"`` first: a bad input line left it empty).
* ``allennlp evaluate``: the same for ``--output-file`` and ``--predictions-output-file`` (comma lists
  included); the evaluator's metrics and predictions files are moved into place when it succeeded.
* ``allennlp train``: ``-s`` naming an existing file, or, with ``--force`` (which deletes the directory
  first), a directory that holds the config file or the data, is refused. A run that fails before it
  saved anything (bad data, a missing model) leaves no serialization directory behind, so the same
  command works once the cause is fixed.
* Every metrics file (``metrics.json``, ``metrics_epoch_N.json``, ``evaluate``'s) and every
  ``model.tar.gz`` allennlp writes is written to a temporary file and moved into place.

See :mod:`spanbert_lib.safeguards.same_file` and :mod:`spanbert_lib.safeguards.atomic_files`.
"""

import contextlib
import functools
import inspect
import json
import os
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Iterable, List, Optional, Type

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.safeguards.atomic_files import AtomicTextFile, atomic_output_path
from spanbert_lib.safeguards.command_inputs import archive_inputs, config_file_inputs, config_inputs
from spanbert_lib.safeguards.same_file import (
    OutputOverInputError,
    expand_input_paths,
    refuse_output_over_input,
    same_output_file,
)

if TYPE_CHECKING:
    from allennlp.commands.predict import _PredictManager


def _shim(wrapper: Callable, wrapped: Callable) -> Callable:
    functools.update_wrapper(wrapper, wrapped)
    wrapper._spanbert_lib_command_outputs = True  # type: ignore[attr-defined]  # why: shim marker
    return wrapper


def _is_shim(function: Any) -> bool:
    return getattr(function, "_spanbert_lib_command_outputs", False)


def _comma_list(value: Optional[str]) -> List[str]:
    return [part for part in (value or "").split(",") if part]


def _predictor_file_arguments(predictor_args: Any) -> List[tuple]:
    """``(key, path)`` of the ``*_file`` / ``*_path`` string values of ``--predictor-args``."""
    if isinstance(predictor_args, str):
        try:
            predictor_args = json.loads(predictor_args) if predictor_args.strip() else {}
        except ValueError:
            return []
    if not isinstance(predictor_args, dict):
        return []
    return [
        (key, value)
        for key, value in predictor_args.items()
        if isinstance(value, str) and str(key).endswith(("_file", "_path"))
    ]


def check_predict_paths(args) -> None:
    """Refuses ``allennlp predict`` outputs that name its input file, the archive or what the archive names."""
    inputs = [args.input_file, *archive_inputs(args.archive_file)]
    refuse_output_over_input(args.output_file, inputs, "--output-file")
    for key, path in _predictor_file_arguments(getattr(args, "predictor_args", None)):
        refuse_output_over_input(path, inputs, f"--predictor-args {key}")


def check_evaluate_paths(args) -> None:
    """Refuses ``allennlp evaluate`` outputs that name an input file, the archive or what the archive names,
    and two outputs that are one file (also through a link)."""
    inputs = [*_comma_list(args.input_file), *archive_inputs(args.archive_file)]
    outputs = [("--output-file", path) for path in _comma_list(args.output_file)]
    outputs += [("--predictions-output-file", path) for path in _comma_list(args.predictions_output_file)]
    for option, path in outputs:
        refuse_output_over_input(path, inputs, option)
    for index, (option, path) in enumerate(outputs):
        for other_option, other in outputs[index + 1 :]:
            if same_output_file(path, other):
                raise OutputOverInputError(
                    f"is named as two outputs ({option} and {other_option}{'' if path == other else ': ' + other}); "
                    "nothing was written",
                    path=path,
                )


def check_serialization_dir(serialization_dir: str, force: bool, inputs: Iterable[Optional[str]]) -> None:
    """
    Refuses a ``train -s`` that is an existing file, or, with ``--force``, a directory holding an input.

    # Parameters

    serialization_dir : `str`
        The ``-s`` argument.
    force : `bool`
        ``--force`` (the directory is deleted before training).
    inputs : `Iterable[Optional[str]]`
        The config file and data paths of the run.
    """
    directory = os.fspath(serialization_dir)
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UserInputError(
            "the serialization directory (-s) is an existing file, not a directory: nothing was written", path=directory
        )
    if not force:
        return
    if os.path.islink(directory):
        raise UserInputError(
            f"refusing --force: the serialization directory (-s) is a symbolic link (to {os.readlink(directory)}); "
            "nothing was deleted; give the directory itself or a new path",
            path=directory,
        )
    held = input_inside(directory, inputs)
    if held is not None:
        raise OutputOverInputError(
            f"refusing --force: it deletes the serialization directory, which holds the input {held}; "
            "nothing was deleted; choose another -s",
            path=directory,
        )


def input_inside(directory: str, inputs: Iterable[Optional[str]]) -> Optional[str]:
    """
    The first of ``inputs`` (paths, directories, globs or comma lists) that is ``directory`` or lies below it,
    through links too; None when none does or ``directory`` is not a directory (a command about to delete
    ``directory`` must refuse when this is not None).
    """
    if not os.path.isdir(directory):
        return None
    root = os.path.realpath(directory)
    for spec in inputs:
        for path in expand_input_paths(spec):
            real = os.path.realpath(path)
            if real == root or real.startswith(root + os.sep):
                return path
    return None


def atomic_predict_manager(manager: Type["_PredictManager"]) -> None:
    """``_PredictManager`` whose ``--output-file`` replaces the old file only after every prediction."""
    if _is_shim(manager.__init__):
        return
    original_init, original_run = manager.__init__, manager.run
    parameters = inspect.signature(original_init).parameters
    output_index = list(parameters).index("output_file")

    def __init__(self, *args, **kwargs):
        positional = list(args)
        if len(positional) >= output_index:
            output_file, positional[output_index - 1] = positional[output_index - 1], None
        else:
            output_file, kwargs["output_file"] = kwargs.get("output_file"), None
        original_init(self, *positional, **kwargs)
        self._output_file = AtomicTextFile(output_file) if output_file is not None else None

    def run(self) -> None:
        try:
            original_run(self)
        except BaseException:
            if isinstance(self._output_file, AtomicTextFile):
                self._output_file.discard()
            raise

    manager.__init__ = _shim(__init__, original_init)  # type: ignore[method-assign]  # why: monkeypatch of a method
    manager.run = _shim(run, original_run)  # type: ignore[method-assign]  # why: monkeypatch of a method


def _checking_first(function: Callable, check: Callable[[Any], None]) -> Callable:
    if _is_shim(function):
        return function

    def checked(args, *rest, **kwargs):
        check(args)
        return function(args, *rest, **kwargs)

    return _shim(checked, function)


def wrap_predict_outputs(module: ModuleType) -> None:
    """Shim for ``allennlp.commands.predict``."""
    checked = _checking_first(module._predict, check_predict_paths)
    module._predict = checked  # type: ignore[attr-defined]  # why: monkeypatch
    atomic_predict_manager(module._PredictManager)


def wrap_evaluate_outputs(module: ModuleType) -> None:
    """Shim for ``allennlp.commands.evaluate``."""
    checked = _checking_first(module.evaluate_from_args, check_evaluate_paths)
    module.evaluate_from_args = checked  # type: ignore[attr-defined]  # why: monkeypatch


def wrap_evaluator_outputs(module: ModuleType) -> None:
    """Shim for ``allennlp.evaluation.evaluator``: the metrics and predictions files move into place at the end."""
    evaluator = module.SimpleEvaluator
    original = evaluator.__call__
    if _is_shim(original):
        return
    signature = inspect.signature(original)

    def __call__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        with contextlib.ExitStack() as outputs:
            for name in ("metrics_output_file", "predictions_output_file"):
                path = bound.arguments.get(name)
                if path is not None:
                    bound.arguments[name] = outputs.enter_context(atomic_output_path(path))
            return original(*bound.args, **bound.kwargs)

    evaluator.__call__ = _shim(__call__, original)


def wrap_train_paths(module: ModuleType) -> None:
    """Shim for ``allennlp.commands.train``: checks ``-s`` against the config file and the data."""
    from_file, train_model = module.train_model_from_file, module.train_model
    if not _is_shim(from_file):
        from_file_signature = inspect.signature(from_file)

        def train_model_from_file(*args, **kwargs):
            bound = from_file_signature.bind(*args, **kwargs)
            arguments = bound.arguments
            check_serialization_dir(
                arguments["serialization_dir"],
                arguments.get("force", False),
                config_file_inputs(arguments["parameter_filename"], arguments.get("overrides", "")),
            )
            return from_file(*args, **kwargs)

        shim = _shim(train_model_from_file, from_file)
        module.train_model_from_file = shim  # type: ignore[attr-defined]  # why: monkeypatch
    if not _is_shim(train_model):
        signature = inspect.signature(train_model)

        def checked_train_model(*args, **kwargs):
            arguments = signature.bind(*args, **kwargs).arguments
            serialization_dir = os.fspath(arguments["serialization_dir"])
            check_serialization_dir(
                serialization_dir, arguments.get("force", False), config_inputs(arguments["params"].as_dict(quiet=True))
            )
            existed = os.path.isdir(serialization_dir)
            fresh = not existed or arguments.get("force", False) or not os.listdir(serialization_dir)
            try:
                return train_model(*args, **kwargs)
            except BaseException:
                if fresh and not arguments.get("recover", False):
                    remove_run_that_saved_nothing(serialization_dir, keep_directory=existed)
                raise

        module.train_model = _shim(checked_train_model, train_model)  # type: ignore[attr-defined]  # why: monkeypatch


# what a run leaves that is worth keeping: with none of these, a failed run's directory holds only its set-up
_SAVED_WORK = ("model_state_e*", "training_state_e*", "best.th", "model.tar.gz", "metrics_epoch_*.json")


def remove_run_that_saved_nothing(serialization_dir: str, keep_directory: bool) -> bool:
    """
    Removes what a failed ``train`` wrote to a serialization directory it started empty, when it saved no
    checkpoint, weights, archive or epoch metrics: without this, running the same command again after
    fixing the data is refused ("already exists and is not empty").

    # Parameters

    serialization_dir : `str`
        The run's directory.
    keep_directory : `bool`
        Empty the directory (it existed, empty, before the run) instead of removing it.

    # Returns

    `bool`
        Whether anything was removed.
    """
    import glob
    import shutil

    if not os.path.isdir(serialization_dir):
        return False
    pattern_root = glob.escape(serialization_dir)
    if any(glob.glob(os.path.join(pattern_root, pattern)) for pattern in _SAVED_WORK):
        return False
    _detach_log_files(serialization_dir)
    for name in os.listdir(serialization_dir):
        path = os.path.join(serialization_dir, name)
        shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
    if not keep_directory:
        os.rmdir(serialization_dir)
    return True


def _detach_log_files(directory: str) -> None:
    """Closes and removes the logging handlers that write into ``directory`` (allennlp's ``out.log``)."""
    import logging

    root = os.path.realpath(directory) + os.sep
    loggers = [logging.getLogger()] + [
        logger for logger in logging.Logger.manager.loggerDict.values() if isinstance(logger, logging.Logger)
    ]
    for logger in loggers:
        for handler in list(logger.handlers):
            filename = getattr(handler, "baseFilename", None)
            if filename and os.path.realpath(filename).startswith(root):
                logger.removeHandler(handler)
                handler.close()


def atomic_metrics_files(module: ModuleType) -> None:
    """Shim for ``allennlp.common.util``: ``dump_metrics`` writes a temporary file and moves it into place."""
    original = module.dump_metrics
    if _is_shim(original):
        return

    def dump_metrics(file_path, metrics, log: bool = False) -> None:
        if not file_path:
            return original(file_path, metrics, log=log)
        with atomic_output_path(file_path) as temporary:
            original(temporary, metrics, log=log)

    module.dump_metrics = _shim(dump_metrics, original)  # type: ignore[attr-defined]  # why: monkeypatch


def atomic_model_archives(module: ModuleType) -> None:
    """Shim for ``allennlp.models.archival``: ``archive_model`` writes a temporary file and moves it into place."""
    original = module.archive_model
    if _is_shim(original):
        return
    signature = inspect.signature(original)

    def archive_model(*args, **kwargs) -> str:
        bound = signature.bind(*args, **kwargs)
        archive_path = bound.arguments.get("archive_path")
        if archive_path is None:
            archive_path = os.path.join(bound.arguments["serialization_dir"], "model.tar.gz")
        elif os.path.isdir(archive_path):
            archive_path = os.path.join(archive_path, "model.tar.gz")
        with atomic_output_path(archive_path) as temporary:
            bound.arguments["archive_path"] = temporary
            original(*bound.args, **bound.kwargs)
        return str(archive_path)

    module.archive_model = _shim(archive_model, original)  # type: ignore[attr-defined]  # why: monkeypatch
