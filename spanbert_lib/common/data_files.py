"""
Resolving a dataset path given in a config to a sorted list of files.

A path may be

* a file;
* a directory: the files in it matching ``pattern`` (e.g. ``*conll``);
* a glob pattern (``data/[1-7]*.conll``);
* several of the above separated by commas;

and any of these may end in ``#files=START:END`` to take a slice (Python semantics, either end
optional) of the sorted list, e.g. ``litbank/#files=:70`` for the first 70 files of a directory
and ``litbank/#files=70:80`` for the next 10 - the usual way corpora without an official split
(LitBank) are divided.
"""

import glob
import os
import re
from typing import List, Union

_FILE_SLICE = re.compile(r"^(?P<path>.*)#files=(?P<start>-?\d*):(?P<end>-?\d*)$")


def resolve_data_files(file_path: Union[str, os.PathLike], pattern: str = "*") -> List[str]:
    """
    The files a dataset path names (see the module docstring).

    # Parameters

    file_path : `Union[str, os.PathLike]`
        The dataset path.
    pattern : `str`, optional (default = `"*"`)
        Glob pattern of the files taken from a directory.

    # Returns

    `List[str]`
        The sorted files, without duplicates, sliced by a ``#files=`` suffix. Raises
        ``FileNotFoundError`` naming the part that matched nothing, and ``ValueError`` for a
        slice that selects no file.
    """
    spec = os.fspath(file_path)
    selection = slice(None)
    match = _FILE_SLICE.match(spec)
    if match:
        spec = match.group("path")
        selection = slice(
            int(match.group("start")) if match.group("start") else None,
            int(match.group("end")) if match.group("end") else None,
        )
    paths: List[str] = []
    for part in (piece.strip() for piece in spec.split(",")):
        if not part:
            continue
        if os.path.isdir(part):
            found = sorted(glob.glob(os.path.join(part, pattern)))
        elif glob.has_magic(part):
            found = sorted(glob.glob(part))
        else:
            found = [part] if os.path.isfile(part) else []
        if not found:
            raise FileNotFoundError(
                f"no data files found at {part!r} (a file, a directory of {pattern} files, "
                f"a glob pattern, or several separated by commas)"
            )
        paths.extend(found)
    paths = sorted(dict.fromkeys(paths))
    if not paths:
        raise FileNotFoundError(f"no data files named by {os.fspath(file_path)!r}")
    selected = paths[selection]
    if not selected:
        assert match is not None  # only a #files= slice can select none of the files found
        raise ValueError(
            f"{os.fspath(file_path)!r}: the slice #files={match.group('start')}:{match.group('end')} "
            f"selects none of the {len(paths)} files found"
        )
    return selected
