"""
Options of allennlp's ``predict`` and ``evaluate`` that make no sense are refused with one line.

allennlp takes ``--batch-size`` as any integer: ``predict --batch-size 0`` predicted nothing and exited
0 (``lazy_groups_of`` made no group), ``--batch-size -1`` ended in ``islice``'s ``ValueError``
traceback; ``--cuda-device -2`` reached torch; ``--predictor-args`` that are not a JSON object ended in
a ``JSONDecodeError`` traceback; ``predict --silent`` without ``--output-file`` printed a notice and
exited 0 having predicted nothing. They are checked before the model is loaded.
"""

import functools
import json
from types import ModuleType
from typing import Callable, Optional

from spanbert_lib.common.errors import UserInputError


def check_numeric_options(args) -> None:
    """
    Raises :class:`UserInputError` for a ``--batch-size`` below 1 or a ``--cuda-device`` below -1.

    # Parameters

    args : `argparse.Namespace`
        The parsed arguments of ``allennlp predict`` or ``allennlp evaluate``.
    """
    batch_size: Optional[int] = getattr(args, "batch_size", None)
    if batch_size is not None and batch_size < 1:
        raise UserInputError(f"--batch-size must be a positive integer, got {batch_size}")
    cuda_device = getattr(args, "cuda_device", None)
    if isinstance(cuda_device, int) and cuda_device < -1:
        raise UserInputError(f"--cuda-device must be -1 (the CPU) or a GPU index, got {cuda_device}")


def check_predict_arguments(args) -> None:
    """
    :func:`check_numeric_options`, then ``--predictor-args`` must be a JSON object and ``--silent`` needs
    ``--output-file``.

    # Parameters

    args : `argparse.Namespace`
        The parsed arguments of ``allennlp predict``.
    """
    check_numeric_options(args)
    predictor_args = getattr(args, "predictor_args", "") or ""
    if predictor_args.strip():
        try:
            parsed = json.loads(predictor_args)
        except ValueError as error:
            raise UserInputError(f"--predictor-args is not valid JSON: {error}") from None
        if not isinstance(parsed, dict):
            raise UserInputError("--predictor-args must be a JSON object of the predictor's arguments")
    if getattr(args, "silent", False) and not getattr(args, "output_file", None):
        raise UserInputError("--silent without --output-file would predict nothing: give --output-file FILE")


def _checked(function: Callable, check: Callable[[object], None]) -> Callable:
    if getattr(function, "_spanbert_lib_option_checks", False):
        return function

    @functools.wraps(function)
    def checked(args, *rest, **kwargs):
        check(args)
        return function(args, *rest, **kwargs)

    checked._spanbert_lib_option_checks = True  # type: ignore[attr-defined]  # why: shim marker
    return checked


def check_predict_options(module: ModuleType) -> None:
    """Shim for ``allennlp.commands.predict``."""
    checked = _checked(module._predict, check_predict_arguments)
    module._predict = checked  # type: ignore[attr-defined]  # why: monkeypatch


def check_evaluate_options(module: ModuleType) -> None:
    """Shim for ``allennlp.commands.evaluate``."""
    checked = _checked(module.evaluate_from_args, check_numeric_options)
    module.evaluate_from_args = checked  # type: ignore[attr-defined]  # why: monkeypatch
