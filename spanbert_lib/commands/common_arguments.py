"""
Command-line arguments shared by the subcommands this library adds.

allennlp adds ``--include-package`` itself, after ``add_subparser``, to every subcommand whose
class keeps ``requires_plugins = True``, and ``allennlp.commands.main`` imports the named
packages before running the command. Subcommands that set ``requires_plugins = False`` (to start
without importing every plugin) get no such flag from allennlp; they call
:func:`add_include_package_argument` so that ``--include-package`` is accepted by every command.
"""

import argparse
import math
from typing import Iterable

INCLUDE_PACKAGE_FLAG = "--include-package"


def add_include_package_argument(subparser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """
    Adds allennlp's ``--include-package PACKAGE`` (repeatable) to a parser unless it has it.

    Only for subcommands with ``requires_plugins = False``: for the others allennlp adds the same
    flag after ``add_subparser`` returns, and adding it here too would be a conflict.

    # Parameters

    subparser : `argparse.ArgumentParser`
        The subcommand's parser; changed in place.

    # Returns

    `argparse.ArgumentParser`
        ``subparser`` itself.
    """
    if INCLUDE_PACKAGE_FLAG not in subparser._option_string_actions:
        subparser.add_argument(
            INCLUDE_PACKAGE_FLAG, type=str, action="append", default=[], help="additional packages to include"
        )
    return subparser


def import_included_packages(args: argparse.Namespace) -> None:
    """
    Imports (with their submodules) the packages named by ``--include-package``.

    ``allennlp.commands.main`` already does this for ``allennlp SUBCOMMAND``; call it from
    stand-alone entry points (``python -m ...``) that parse their own arguments.

    # Parameters

    args : `argparse.Namespace`
        The parsed arguments (no ``include_package`` attribute: nothing is imported).
    """
    from allennlp.common.util import import_module_and_submodules

    packages: Iterable[str] = getattr(args, "include_package", None) or []
    for package in packages:
        import_module_and_submodules(package)


def positive_int(text: str) -> int:
    """
    argparse ``type`` of an option that must be an integer of at least 1.

    # Parameters

    text : `str`
        The option's value.

    # Returns

    `int`
        The integer; ``argparse.ArgumentTypeError`` otherwise (argparse names the option).
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """argparse ``type`` of an integer option of at least 0 (see :func:`positive_int`)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value}")
    return value


def finite_float(text: str) -> float:
    """argparse ``type`` of a float option that must be a finite number (not nan / inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def port_number(text: str) -> int:
    """argparse ``type`` of a TCP port: an integer from 0 (any free port) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, got {value}")
    return value
