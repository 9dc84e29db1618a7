"""
One error style for users of the ``allennlp`` command.

A data, configuration or archive problem the user can fix (a
:class:`~spanbert_lib.common.errors.UserInputError`, allennlp's ``ConfigurationError``, a missing
file, a jsonnet syntax error) reaches the terminal as one line on stderr::

    error: data/train.txt:12: invalid NER tag 'X-PER' (expected O, B-TYPE or I-TYPE; ...)

and the command exits with :data:`USER_ERROR_EXIT_CODE`, from every subcommand (``train``,
``evaluate`` and ``predict`` included), instead of a 20-130-line traceback. Any other exception
is a bug and keeps its traceback. ``SPANBERT_LIB_DEBUG=1`` shows the full traceback of user
errors too.

allennlp sometimes re-raises an error inside another one (a ``ConfigurationError`` raised while
handling a constructor's error, ...): the cause/context chain is searched for the
``UserInputError``. An error raised inside a data loader worker process (``num_workers > 0``)
reaches the main process only as text, in allennlp's ``WorkerError`` (``worker raised
InvalidEncodingError('...')`` and the worker's traceback): a ``UserInputError`` is recognised there
by its class name and shown as the same one line.

:func:`wrap_command_main` is applied by :mod:`spanbert_lib.safeguards.hooks` to
``allennlp.commands.main``, which the ``allennlp`` console script and ``python -m allennlp`` call.
"""

import ast
import contextlib
import functools
import os
import re
import sys
from traceback import walk_tb
from types import ModuleType
from typing import Callable, Iterator, Optional, Set, Tuple, Type

from spanbert_lib.safeguards.config_mistakes import JSONNET_ERROR_PREFIXES

DEBUG_ENVIRONMENT_VARIABLE = "SPANBERT_LIB_DEBUG"
USER_ERROR_EXIT_CODE = 1
_TRUE_VALUES = ("1", "true", "yes", "on")


def debug_enabled() -> bool:
    """True when ``SPANBERT_LIB_DEBUG`` asks for full tracebacks."""
    return os.environ.get(DEBUG_ENVIRONMENT_VARIABLE, "").strip().lower() in _TRUE_VALUES


def _exception_chain(error: Optional[BaseException]) -> Iterator[BaseException]:
    """``error``, then its explicit cause or implicit context, and so on (each once)."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ if error.__cause__ is not None else error.__context__


def find_user_error(error: BaseException) -> Optional[BaseException]:
    """
    The exception whose message the user should see as one line, or None for a bug.

    The first :class:`UserInputError` anywhere in the cause/context chain of ``error``; else a
    Hugging Face model path that did not load (:mod:`~spanbert_lib.safeguards.model_paths`) or a
    configuration mistake that allennlp raised as a bare ``TypeError``, ``ValueError`` or jsonnet error
    (a setting unknown or of the wrong type, an ``-o`` key or text that does not fit:
    :mod:`~spanbert_lib.safeguards.config_mistakes`); else
    ``error`` itself when it is allennlp's ``ConfigurationError``, a ``FileNotFoundError``, a
    directory given for a file (or the reverse), a permission error or a jsonnet error in a
    configuration file (only at the top: raised while handling something else, they may hide a bug).
    """
    from spanbert_lib.common.errors import UserInputError
    from spanbert_lib.safeguards.config_mistakes import configuration_mistake
    from spanbert_lib.safeguards.model_paths import model_path_error

    for link in _exception_chain(error):
        if isinstance(link, UserInputError):
            return link
        from_worker = _user_error_from_worker(link)
        if from_worker is not None:
            return from_worker
    for link in _exception_chain(error):
        from_model_path = model_path_error(link)
        if from_model_path is not None:
            return from_model_path
        from_configuration = configuration_mistake(link)
        if from_configuration is not None:
            return from_configuration
    if isinstance(error, ModuleNotFoundError):
        return _included_package_error(error)
    if isinstance(error, FileNotFoundError):
        return error
    if isinstance(error, (IsADirectoryError, NotADirectoryError, PermissionError)):
        return _file_kind_error(error)
    if isinstance(error, RuntimeError) and str(error).startswith(JSONNET_ERROR_PREFIXES):
        return error  # _jsonnet.evaluate_file: "STATIC ERROR: config.jsonnet:2:1: expected a comma ..."
    configuration_error = sys.modules.get("allennlp.common.checks")
    if configuration_error is not None and isinstance(error, configuration_error.ConfigurationError):
        return error
    return None


_FILE_KIND_PROBLEMS = {
    IsADirectoryError: "is a directory where a file is expected",
    NotADirectoryError: "is not a directory (a file stands where a directory is expected)",
    PermissionError: "permission denied",
}


def _file_kind_error(error: OSError) -> BaseException:
    """``PATH: is a directory where a file is expected`` (and the like) for an ``OSError`` naming a file."""
    from spanbert_lib.common.errors import UserInputError

    if error.filename is None:
        return error
    problem = next(text for kind, text in _FILE_KIND_PROBLEMS.items() if isinstance(error, kind))
    return UserInputError(problem, path=error.filename)


def _included_package_error(error: ModuleNotFoundError) -> Optional[BaseException]:
    """``--include-package NAME: ...`` when allennlp failed to import a package named on the command line."""
    from spanbert_lib.common.errors import UserInputError

    for frame, _ in walk_tb(error.__traceback__):
        if frame.f_code.co_name == "import_module_and_submodules" and "allennlp" in frame.f_code.co_filename:
            package = frame.f_locals.get("package_name")
            what = "no such module" if error.name == package else f"importing it failed: {error}"
            return UserInputError(f"--include-package {package}: {what} (is it installed or on PYTHONPATH?)")
    return None


_WORKER_ERROR_FIRST_LINE = re.compile(r"^worker raised (?P<name>[A-Za-z_]\w*)\((?P<args>.*)\)$")


def _user_error_from_worker(error: BaseException) -> Optional[BaseException]:
    """
    The :class:`UserInputError` that a data loader worker raised, rebuilt from allennlp's
    ``WorkerError`` text (its first line is ``worker raised REPR``), or None.
    """
    if type(error).__name__ != "WorkerError" or not error.args or not isinstance(error.args[0], str):
        return None
    from spanbert_lib.common.errors import UserInputError

    match = _WORKER_ERROR_FIRST_LINE.match(error.args[0].split("\n", 1)[0])
    if match is None or match["name"] not in _subclass_names(UserInputError):
        return None
    try:
        message = ast.literal_eval(f"({match['args']},)")[0]
    except (ValueError, SyntaxError, IndexError):
        return None
    return UserInputError(message) if isinstance(message, str) else None


def _subclass_names(cls: type) -> Set[str]:
    names = {cls.__name__}
    subclass: type
    for subclass in cls.__subclasses__():
        names |= _subclass_names(subclass)
    return names


def one_line_message(error: BaseException, describe: Callable[[BaseException], str] = str) -> str:
    """``error: MESSAGE`` (``describe(error)``) with the message's line breaks folded into spaces."""
    message = " ".join(part.strip() for part in describe(error).splitlines() if part.strip())
    return f"error: {message or type(error).__name__}"


def report_user_errors(main: Callable[..., None]) -> Callable[..., None]:
    """
    ``main`` that prints a user error (see :func:`find_user_error`) as one line on stderr and
    exits with :data:`USER_ERROR_EXIT_CODE`; other exceptions and ``SystemExit`` pass through.
    """
    if getattr(main, "_spanbert_lib_shim", False):
        return main

    @functools.wraps(main)
    def main_reporting_user_errors(*args, **kwargs):
        try:
            return main(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - re-raised unless it is a user error
            user_error = find_user_error(error)
            if user_error is None or debug_enabled():
                raise
            sys.stdout.flush()
            print(one_line_message(user_error), file=sys.stderr, flush=True)
            sys.exit(USER_ERROR_EXIT_CODE)

    main_reporting_user_errors._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    return main_reporting_user_errors


@contextlib.contextmanager
def errors_as_one_line(
    error_types: Tuple[Type[BaseException], ...], describe: Callable[[BaseException], str] = str
) -> Iterator[None]:
    """
    A subcommand's own guard (also when its function is called without the ``allennlp`` entry point): an
    exception of ``error_types`` raised inside is printed as ``error: describe(error)`` on stderr, one line as
    the entry point prints it (:func:`one_line_message`), and ends the program with :data:`USER_ERROR_EXIT_CODE`,
    unless :func:`debug_enabled` (then it propagates).
    """
    try:
        yield
    except error_types as error:
        if debug_enabled():
            raise
        sys.stdout.flush()
        print(one_line_message(error, describe), file=sys.stderr, flush=True)
        raise SystemExit(USER_ERROR_EXIT_CODE) from None


def wrap_command_main(module: ModuleType) -> None:
    """Shim for ``allennlp.commands``: its ``main`` reports user errors as one line."""
    module.main = report_user_errors(module.main)  # type: ignore[attr-defined]  # why: monkeypatch
