"""
A configuration "file" that is a directory is refused with one line before jsonnet reads it.

``Params.from_file`` hands the path to jsonnet's C++ reader, which on a directory aborts the whole
process (``SIGABRT``, "Something went wrong during jsonnet_evaluate_file, please report this:
basic_filebuf::underflow error reading the file: Is a directory"): no error message of the library's,
no clean exit status. ``allennlp train DIR``, ``masking-stats DIR ...`` and every other reader of a
config now get ``error: DIR: is a directory; give a configuration file (.json / .jsonnet)``.
"""

import functools
import os
from types import ModuleType

from spanbert_lib.common.errors import UserInputError


def refuse_directories(from_file):
    """``Params.from_file`` (the function under the classmethod) that checks its path first."""
    if getattr(from_file, "_spanbert_lib_shim", False):
        return from_file

    @functools.wraps(from_file)
    def from_file_checking_the_path(cls, params_file, *args, **kwargs):
        if isinstance(params_file, (str, os.PathLike)) and os.path.isdir(params_file):
            raise UserInputError(
                "is a directory; give a configuration file (.json / .jsonnet)", path=os.fspath(params_file)
            )
        return from_file(cls, params_file, *args, **kwargs)

    from_file_checking_the_path._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    return from_file_checking_the_path


def check_config_paths(module: ModuleType) -> None:
    """Shim for ``allennlp.common.params``."""
    params = module.Params
    params.from_file = classmethod(refuse_directories(params.from_file.__func__))
