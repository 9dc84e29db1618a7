"""
Output files that appear complete or not at all: each is written to a hidden temporary file in the
same directory and moved into place with ``os.replace`` only when the command succeeded, so a run
that fails (bad input, a crash, Ctrl-C) leaves an existing file exactly as it was and no partial file.

Temporary names are ``.NAME.partial-PID-XXXX`` plus the file's own extension (``plot.png`` ->
``.plot.png.partial-4242-k2j9.png``: tools that choose a format by extension still see it; ``NAME`` is
shortened when the whole would pass the file system's limit on a name). A temporary file of ``NAME`` whose
process has ended (a run killed with SIGKILL) is removed the next time ``NAME`` is written. A new file gets
the permissions ``open()`` would give it; a replaced file keeps its own. An output that is a symbolic
link replaces the file it points to (the link stays). A stream (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``,
a named pipe, a terminal) is never replaced: what was written is appended to it, so ``--output-file /dev/stdout``
with the shell appending to a log (``>> log.txt``) keeps the log's earlier content.
"""

import contextlib
import os
import shutil
import stat
import tempfile
from typing import IO, Iterator, Optional, Union

from spanbert_lib.common.errors import UserInputError

PathLike = Union[str, os.PathLike]


def _extension(name: str) -> str:
    stem, extension = os.path.splitext(name)
    if os.path.splitext(stem)[1] in (".tar",):
        extension = os.path.splitext(stem)[1] + extension
    return extension


def _default_mode(directory: bool = False) -> int:
    """The permissions ``open()`` (``os.makedirs`` for a directory) gives a new file under the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return (0o777 if directory else 0o666) & ~umask


PARTIAL_MARKER = ".partial-"
_STREAM_DIRECTORIES = ("/dev/", "/proc/")


def _name_max(directory: str) -> int:
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def partial_prefix(path: str) -> str:
    """``.NAME.partial-``: the start of the temporary names of ``path`` (``NAME`` shortened to leave room)."""
    parent = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(os.path.normpath(path))
    # room for the pid, the random part and the extension
    room = _name_max(parent) - len(PARTIAL_MARKER) - 1 - 24 - len(_extension(name))
    return f".{name[: max(room, 1)]}{PARTIAL_MARKER}"


def _process_ended(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False


def remove_stale_partials(path: str) -> None:
    """Removes the temporary files (directories) of ``path`` left by a process that has ended."""
    parent = os.path.dirname(os.path.abspath(path))
    prefix = partial_prefix(path)
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            if not entry.name.startswith(prefix):
                continue
            pid_text = entry.name[len(prefix) :].split("-", 1)[0]
            if pid_text.isdigit() and int(pid_text) != os.getpid() and _process_ended(int(pid_text)):
                _remove(entry.path)


def _temporary_sibling(path: str, directory: bool = False) -> str:
    """A new temporary file (directory) beside ``path``; :class:`UserInputError` when none can be made there."""
    parent = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(os.path.normpath(path))
    if not directory and os.path.isdir(path):
        raise UserInputError("is a directory; the output must be a file path", path=path)
    if not os.path.isdir(parent):
        raise UserInputError(f"cannot write the output: its directory {parent} does not exist", path=path)
    remove_stale_partials(path)
    prefix = f"{partial_prefix(path)}{os.getpid()}-"
    try:
        if directory:
            return tempfile.mkdtemp(prefix=prefix, dir=parent)
        descriptor, temporary = tempfile.mkstemp(prefix=prefix, suffix=_extension(name), dir=parent)
    except OSError as error:
        raise UserInputError(f"cannot write the output in {parent}: {error.strerror}", path=path) from error
    os.close(descriptor)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        mode = _default_mode()
    os.chmod(temporary, mode)
    return temporary


def is_stream(path: PathLike) -> bool:
    """
    Whether ``path`` is a stream to append to rather than a file to replace: a path under ``/dev/`` or
    ``/proc/`` (also through links: ``/dev/stdout`` -> ``/proc/self/fd/1``), or an existing path that is neither a
    regular file nor a directory (a named pipe, a terminal).
    """
    text = os.path.abspath(os.fspath(path))
    for _ in range(40):  # the kernel's own limit on links followed
        if text.startswith(_STREAM_DIRECTORIES):
            return True
        if not os.path.islink(text):
            break
        text = os.path.join(os.path.dirname(text), os.readlink(text))
        text = os.path.abspath(text)
    try:
        mode = os.stat(text).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _file_to_replace(path: PathLike) -> Optional[str]:
    """The regular file an output path stands for (a symbolic link's target), or None for a stream."""
    if is_stream(path):
        return None
    text = os.fspath(path)
    return os.path.realpath(text) if os.path.islink(text) else text


def _append_to_stream(source: str, stream: PathLike) -> None:
    with open(source, "rb") as written, open(stream, "ab") as target:
        shutil.copyfileobj(written, target)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.remove(path)


@contextlib.contextmanager
def atomic_output_path(path: PathLike) -> Iterator[str]:
    """
    A temporary path to write ``path``'s new content to; moved over ``path`` when the block ends
    without an exception, removed otherwise.

    # Parameters

    path : `PathLike`
        The output file. Its directory must exist.

    # Returns

    `Iterator[str]`
        The temporary file (exists, empty).
    """
    target = _file_to_replace(path)
    if target is None:  # a stream: written whole at the end, appended, never truncated
        descriptor, temporary = tempfile.mkstemp(prefix="spanbert_lib-output-", suffix=_extension(os.fspath(path)))
        os.close(descriptor)
        try:
            yield temporary
            _append_to_stream(temporary, path)
        finally:
            _remove(temporary)
        return
    temporary = _temporary_sibling(target)
    try:
        yield temporary
        os.replace(temporary, target)
    except BaseException:
        _remove(temporary)
        raise


class AtomicTextFile:
    """
    A text file opened for writing whose content replaces ``path`` on :meth:`close` (see the module
    docstring); :meth:`discard` drops it instead.

    # Parameters

    path : `PathLike`
        The output file.
    encoding : `str`, optional (default = `"utf-8"`)
        The text encoding.
    """

    def __init__(self, path: PathLike, encoding: str = "utf-8") -> None:
        target = _file_to_replace(path)
        self.path = target if target is not None else os.fspath(path)
        self._temporary: Optional[str] = _temporary_sibling(target) if target is not None else None
        # a stream is appended to (opening it "w" would truncate the file a shell's ">>" appends to)
        self._handle: IO[str] = open(self._temporary or self.path, "w" if self._temporary else "a", encoding=encoding)

    @property
    def closed(self) -> bool:
        return self._handle.closed

    def write(self, text: str) -> int:
        return self._handle.write(text)

    def flush(self) -> None:
        self._handle.flush()

    def close(self) -> None:
        """Moves the written content over ``path`` (once)."""
        if self._temporary is None:
            self._handle.close()
            return
        temporary, self._temporary = self._temporary, None
        try:
            self._handle.close()
            os.replace(temporary, self.path)
        except BaseException:
            _remove(temporary)
            raise

    def discard(self) -> None:
        """Drops what was written; ``path`` stays as it was."""
        if self._temporary is None:
            with contextlib.suppress(OSError):
                self._handle.close()
            return
        temporary, self._temporary = self._temporary, None
        with contextlib.suppress(OSError):
            self._handle.close()
        _remove(temporary)

    def __enter__(self) -> "AtomicTextFile":
        return self

    def __exit__(self, error_type, error, traceback) -> None:
        if error_type is None:
            self.close()
        else:
            self.discard()


@contextlib.contextmanager
def atomic_output_directory(path: PathLike) -> Iterator[str]:
    """
    A temporary directory to write ``path``'s files to. When the block ends without an exception it
    becomes ``path`` (renamed, when ``path`` does not exist) or its files replace their namesakes in
    ``path`` one by one (files of ``path`` it does not hold stay); otherwise it is removed.

    # Parameters

    path : `PathLike`
        The output directory. Its parent must exist (it is created when missing).

    # Returns

    `Iterator[str]`
        The temporary directory (exists, empty).
    """
    target = os.fspath(path)
    if os.path.exists(target) and not os.path.isdir(target):
        raise NotADirectoryError(f"{target} is a file, not a directory")
    os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
    temporary = _temporary_sibling(target, directory=True)
    try:
        yield temporary
        if os.path.isdir(target):
            _merge_into(temporary, target)
            _remove(temporary)
        else:
            os.chmod(temporary, _default_mode(directory=True))
            os.rename(temporary, target)
    except BaseException:
        _remove(temporary)
        raise


def _merge_into(source: str, target: str) -> None:
    for name in os.listdir(source):
        source_path, target_path = os.path.join(source, name), os.path.join(target, name)
        if os.path.isdir(source_path) and os.path.isdir(target_path):
            _merge_into(source_path, target_path)
        else:
            if os.path.isdir(target_path):
                shutil.rmtree(target_path)
            os.replace(source_path, target_path)


@contextlib.contextmanager
def atomic_replaced_directory(path: PathLike) -> Iterator[str]:
    """
    A temporary directory to write the whole new content of ``path`` to. When the block ends without an
    exception it takes the place of ``path`` (an existing ``path`` is moved aside, then removed, so the
    directory never mixes old and new files); otherwise it is removed and ``path`` stays as it was. The caller
    decides whether the files of an existing ``path`` may go.

    # Parameters

    path : `PathLike`
        The output directory. Its parent is created when missing.

    # Returns

    `Iterator[str]`
        The temporary directory (exists, empty).
    """
    target = os.fspath(path)
    if os.path.exists(target) and not os.path.isdir(target):
        raise UserInputError("is an existing file, not a directory: nothing was written", path=target)
    os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
    temporary = _temporary_sibling(target, directory=True)
    try:
        yield temporary
        mode = os.stat(target).st_mode & 0o7777 if os.path.isdir(target) else _default_mode(directory=True)
        os.chmod(temporary, mode)
        if os.path.isdir(target):
            replaced = f"{temporary}-replaced"
            os.rename(target, replaced)
            os.rename(temporary, target)
            _remove(replaced)
        else:
            os.rename(temporary, target)
    except BaseException:
        _remove(temporary)
        raise
