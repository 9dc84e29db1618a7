"""
No command writes where it reads: an output path that names one of the command's input files (the
same file, also through a symbolic or hard link: compared by device and inode) is refused with one
line before anything is opened for writing.

Inputs are given as the commands take them: a file, a directory, a glob pattern, a comma list of
these, optionally ending in a ``#selector`` (``#files=:70``, ``#articles=2:4``, ...). A directory
stands for every file below it.
"""

import glob
import os
import re
from typing import Dict, Iterable, Iterator, List, Optional, Set, Tuple, Union

from spanbert_lib.common.errors import UserInputError

# "#files=START:END", "#articles=..." and the like, which the readers take after a path
_SELECTOR = re.compile(r"#[A-Za-z_]+=[^,/]*$")
# a directory given as input is walked for at most this many files (a corpus directory is not unbounded)
MAX_FILES_WALKED = 100_000

FileIdentity = Tuple[int, int]


class OutputOverInputError(UserInputError):
    """An output path that is one of the command's inputs."""


def _identity(path: str) -> Optional[FileIdentity]:
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino


def same_output_file(first: str, second: str) -> bool:
    """
    Whether two output paths write one file: the same path once links are resolved, or (for existing files)
    the same device and inode (a hard link).
    """
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    identity = _identity(first)
    return identity is not None and identity == _identity(second)


def expand_input_paths(spec: Union[str, os.PathLike, None]) -> List[str]:
    """
    The existing files and directories an input argument names.

    # Parameters

    spec : `Union[str, os.PathLike, None]`
        A path, glob pattern or comma list of them, optionally ending in a ``#selector``; None or
        ``"-"`` (standard input) names nothing.

    # Returns

    `List[str]`
        The existing paths among them (globs expanded), in order.
    """
    if spec is None or spec == "-":
        return []
    text = os.fspath(spec)
    if os.path.exists(text):
        return [text]
    text = _SELECTOR.sub("", text)
    paths: List[str] = []
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        if os.path.exists(part):
            paths.append(part)
        elif glob.has_magic(part):
            paths.extend(sorted(glob.glob(part)))
    return paths


def _files_below(paths: Iterable[str]) -> Iterator[str]:
    for path in paths:
        yield path
        if os.path.isdir(path):
            walked = 0
            for directory, _, names in os.walk(path):
                for name in names:
                    walked += 1
                    if walked > MAX_FILES_WALKED:
                        return
                    yield os.path.join(directory, name)


def _identities(inputs: Iterable[str]) -> dict:
    found: Dict[FileIdentity, str] = {}
    for path in _files_below(inputs):
        identity = _identity(path)
        if identity is not None:
            found.setdefault(identity, path)
    return found


def refuse_output_over_input(output: Optional[str], inputs: Iterable[Optional[str]], option: str) -> None:
    """
    Raises :class:`OutputOverInputError` when the file ``output`` is one of ``inputs``.

    # Parameters

    output : `Optional[str]`
        The output file (None or ``"-"``: nothing is checked). A path that does not exist yet is
        no input.
    inputs : `Iterable[Optional[str]]`
        The command's input arguments (see :func:`expand_input_paths`).
    option : `str`
        How the user gave the output (``"--output-file"``), for the message.
    """
    if output is None or output == "-":
        return
    output_identity = _identity(output)
    if output_identity is None:
        return
    expanded = [path for spec in inputs for path in expand_input_paths(spec)]
    same = _identities(expanded).get(output_identity)
    if same is not None:
        how = "" if os.path.abspath(same) == os.path.abspath(output) else f" (through a link: {same})"
        raise OutputOverInputError(
            f"refusing to write {option} over an input of the command{how}: nothing was written; "
            "choose another output path",
            path=output,
        )


def refuse_output_directory_over_inputs(
    output_dir: Optional[str], inputs: Iterable[Union[str, os.PathLike, None]], option: str
):
    """
    Raises :class:`OutputOverInputError` when the directory ``output_dir`` is an input directory or
    directly holds an input file (files written there could replace it).

    # Parameters

    output_dir : `Optional[str]`
        The output directory (None or a path that does not exist yet: nothing is checked).
    inputs : `Iterable[Union[str, os.PathLike, None]]`
        The command's input arguments (see :func:`expand_input_paths`).
    option : `str`
        How the user gave the output directory, for the message.
    """
    if output_dir is None:
        return
    output_identity = _identity(output_dir)
    if output_identity is None or not os.path.isdir(output_dir):
        return
    for path in (path for spec in inputs for path in expand_input_paths(spec)):
        candidates: Set[Optional[FileIdentity]] = {_identity(path)}
        if not os.path.isdir(path):
            candidates.add(_identity(os.path.dirname(os.path.abspath(path))))
        if output_identity in candidates:
            raise OutputOverInputError(
                f"refusing to write {option} into the directory of the input {path}: its files could be "
                "replaced; nothing was written; choose a new directory",
                path=output_dir,
            )
