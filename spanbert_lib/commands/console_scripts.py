"""
The console scripts ``spanbert-coref-score`` and ``spanbert-squad-eval`` (``setup.py`` entry points):
``allennlp coref-score`` / ``allennlp squad-eval`` without allennlp's command machinery, which takes
seconds to import (torch, transformers, every plugin) for a scoring that takes milliseconds.

Each runs the subcommand's own code (:mod:`~spanbert_lib.commands.coref_score_cli`,
:mod:`~spanbert_lib.commands.squad_eval_cli`: one argument definition, one function), as the ``allennlp``
entry point runs it: allennlp's log format and ``ALLENNLP_LOG_LEVEL`` / ``ALLENNLP_DEBUG``, defaults shown
in ``--help``, ``--include-package`` imported (allennlp is imported then only), user errors as one
``error:`` line with exit status 1 (:func:`~spanbert_lib.safeguards.user_errors.report_user_errors`). So
the standard output, output files, exit status and error lines are the subcommand's; only the program
name in usage lines differs (``spanbert-coref-score`` for ``allennlp coref-score``, of the same length).

The task packages' ``__init__`` modules import their models and predictors (torch, allennlp) for
registration; the scoring modules need none of it. The scripts therefore import the task packages they
use as bare packages (:func:`use_bare_packages`), which is only right in a process that never needs
their models: these scripts' own.
"""

import argparse
import importlib.util
import logging
import os
import sys
from typing import Any, Callable, List, Optional

COREF_SCORE_PROG = "spanbert-coref-score"
SQUAD_EVAL_PROG = "spanbert-squad-eval"
_LOG_FORMAT = "%(asctime)s - %(levelname)s - %(name)s - %(message)s"


class ParserWithDefaultsInHelp(argparse.ArgumentParser):
    """
    An argument parser that appends ``(default = VALUE)`` to the help of options with a meaningful
    default, as the parser of every ``allennlp`` subcommand does (``allennlp.commands``), so that
    ``--help`` reads the same.
    """

    _actions_without_default = {"help", "store_true", "store_false", "store_const"}

    def add_argument(self, *args, **kwargs):
        default = kwargs.get("default")
        meaningful = default is not None and not (isinstance(default, (str, list, tuple, set)) and not default)
        if kwargs.get("action") not in self._actions_without_default and meaningful:
            kwargs["help"] = f"{kwargs.get('help', '')} (default = {default})"
        return super().add_argument(*args, **kwargs)


def use_bare_packages(*names: str) -> None:
    """
    Registers each package (not imported yet) in ``sys.modules`` without running its ``__init__``, so that
    its submodules can be imported on their own.

    # Parameters

    *names : `str`
        Dotted package names, parents first (``"spanbert_lib.coref"``, ``"spanbert_lib.coref.metrics"``).
    """
    for name in names:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.submodule_search_locations is None:
            raise ImportError(f"{name} is not a package")
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, package)


def configure_logging() -> None:
    """The logging of ``allennlp``'s entry point (``allennlp/__main__.py``): same format and level variables."""
    if os.environ.get("ALLENNLP_DEBUG"):
        level = logging.DEBUG
    else:
        level = logging._nameToLevel.get(os.environ.get("ALLENNLP_LOG_LEVEL", "INFO"), logging.INFO)
    logging.basicConfig(format=_LOG_FORMAT, level=level)


def run_command(
    prog: str, description: str, add_arguments: Callable[[argparse.ArgumentParser], Any], argv: Optional[List[str]]
) -> None:
    """
    Parses ``argv`` with the subcommand's arguments and runs its function as ``allennlp`` would.

    # Parameters

    prog : `str`
        The program name for usage lines.
    description : `str`
        The subcommand's description.
    add_arguments : `Callable[[argparse.ArgumentParser], Any]`
        The subcommand's argument definition (sets ``func``).
    argv : `Optional[List[str]]`
        The arguments; None: ``sys.argv[1:]``.
    """
    from spanbert_lib.commands.common_arguments import import_included_packages
    from spanbert_lib.safeguards.user_errors import report_user_errors

    parser = ParserWithDefaultsInHelp(prog=prog, description=description)
    add_arguments(parser)
    args = parser.parse_args(argv)

    def run() -> None:
        if getattr(args, "include_package", None):
            import_included_packages(args)
        args.func(args)

    report_user_errors(run)()


def coref_score(argv: Optional[List[str]] = None) -> None:
    """``spanbert-coref-score``: ``allennlp coref-score`` (see the module docstring)."""
    configure_logging()
    use_bare_packages("spanbert_lib.coref", "spanbert_lib.coref.dataset_readers", "spanbert_lib.coref.metrics")
    from spanbert_lib.commands import coref_score_cli

    run_command(COREF_SCORE_PROG, coref_score_cli.DESCRIPTION, coref_score_cli.add_arguments, argv)


def squad_eval(argv: Optional[List[str]] = None) -> None:
    """``spanbert-squad-eval``: ``allennlp squad-eval`` (see the module docstring)."""
    configure_logging()
    use_bare_packages("spanbert_lib.qa", "spanbert_lib.qa.metrics")
    from spanbert_lib.commands import squad_eval_cli

    run_command(SQUAD_EVAL_PROG, squad_eval_cli.DESCRIPTION, squad_eval_cli.add_arguments, argv)
