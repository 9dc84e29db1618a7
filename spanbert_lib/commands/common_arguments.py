"""
Command-line arguments shared by the subcommands this library adds.

allennlp adds ``--include-package`` itself, after ``add_subparser``, to every subcommand whose
class keeps ``requires_plugins = True``, and ``allennlp.commands.main`` imports the named
packages before running the command. Subcommands that set ``requires_plugins = False`` (to start
without importing every plugin) get no such flag from allennlp; they call
:func:`add_include_package_argument` so that ``--include-package`` is accepted by every command.
"""

import argparse
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
