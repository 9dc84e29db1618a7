"""
Extracting model archives without letting a member write outside the extraction directory.

allennlp's ``archival.extracted_archive`` (used by ``load_archive``, hence by ``predict``,
``evaluate``, ``export-encoder`` and the ``pretrained`` initializer) calls
``tarfile.extractall`` with no filter: a crafted ``model.tar.gz`` with a member named
``../x``, an absolute path, or a link pointing outside, writes wherever it likes. Python's
``tarfile`` ``"data"`` filter (PEP 706) refuses exactly those members, plus device files.

An archive that is truncated, corrupt or no tar file at all, one without ``weights.th`` or
``config.json``, and one whose weights do not fit its model are refused naming the archive (not
``EOFError``, not the temporary directory it was extracted to).
"""

import functools
import gzip
import inspect
import logging
import lzma
import os
import shutil
import tarfile
import tempfile
import zlib
from contextlib import contextmanager
from typing import Dict, Iterator, Optional, Tuple, Union

from spanbert_lib.common.errors import UserInputError

logger = logging.getLogger(__name__)


class UnsafeArchiveError(UserInputError):
    """An archive member that would land outside the extraction directory, or is a link or device."""


class CorruptArchiveError(UserInputError):
    """A model archive that is truncated, corrupt, not a tar file, or lacks a file a model needs."""


# what tarfile / gzip / bz2 / lzma raise on a file that is cut short or not an archive
_UNREADABLE_ARCHIVE = (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError)


def extract_archive_safely(archive_path: Union[str, os.PathLike], target_dir: Union[str, os.PathLike]) -> None:
    """
    Extracts the tar archive ``archive_path`` (any compression) into ``target_dir``.

    # Parameters

    archive_path : `Union[str, os.PathLike]`
        The ``.tar``/``.tar.gz`` file.
    target_dir : `Union[str, os.PathLike]`
        An existing directory; nothing is written outside it.

    # Raises

    UnsafeArchiveError
        Naming the archive and the member, when a member's path leaves ``target_dir`` (``../``,
        absolute paths), or a member is a link pointing outside it, a device or a FIFO. Members
        extracted before the offending one stay in ``target_dir`` (the caller removes it).
    """
    archive = _open_archive(archive_path)
    try:
        with archive:
            archive.extractall(target_dir, filter="data")
    except tarfile.FilterError as error:
        member = error.tarinfo.name if error.tarinfo is not None else "?"
        raise UnsafeArchiveError(
            f"refusing to extract member {member!r}: {error} (a model archive holds only plain files and "
            f"directories under its own root)",
            path=archive_path,
        ) from error
    except _UNREADABLE_ARCHIVE as error:
        raise _unreadable(archive_path, error) from error


def _open_archive(archive_path: Union[str, os.PathLike]) -> tarfile.TarFile:
    """The open tar file; :class:`CorruptArchiveError` naming it when it is no tar file at all."""
    try:
        return tarfile.open(archive_path, "r:*")
    except _UNREADABLE_ARCHIVE as error:
        raise CorruptArchiveError(
            "not a model archive (a model.tar.gz or a serialization directory with config.json)", path=archive_path
        ) from error


def _unreadable(archive_path: Union[str, os.PathLike], error: BaseException) -> "CorruptArchiveError":
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return CorruptArchiveError(
        f"not a complete model archive: it is truncated or corrupt ({detail})", path=archive_path
    )


def check_archive_readable(archive_path: Union[str, os.PathLike]) -> None:
    """
    Reads a model archive through (a directory or a missing path is left to the caller).

    # Parameters

    archive_path : `Union[str, os.PathLike]`
        A ``model.tar.gz``.

    # Raises

    CorruptArchiveError
        Naming the archive when it is no tar file, or a truncated or corrupt one.
    """
    if not os.path.isfile(archive_path):
        return
    archive = _open_archive(archive_path)
    try:
        with archive:
            for _ in archive:
                pass
    except _UNREADABLE_ARCHIVE as error:
        raise _unreadable(archive_path, error) from error


@contextmanager
def extracted_archive(resolved_archive_file: Union[str, os.PathLike], cleanup: bool = True) -> Iterator[str]:
    """
    Drop-in for ``allennlp.models.archival.extracted_archive``: yields a new temporary
    directory holding the archive's files, extracted by :func:`extract_archive_safely`.
    The directory is removed on exit when ``cleanup`` is true, and always when extraction fails.
    """
    tempdir = tempfile.mkdtemp()
    try:
        logger.info("extracting archive file %s to temp dir %s", resolved_archive_file, tempdir)
        extract_archive_safely(resolved_archive_file, tempdir)
    except BaseException:
        shutil.rmtree(tempdir, ignore_errors=True)
        raise
    _remember_extraction(tempdir, resolved_archive_file)
    try:
        yield tempdir
    finally:
        if cleanup:
            logger.info("removing temporary unarchived model dir at %s", tempdir)
            shutil.rmtree(tempdir, ignore_errors=True)


# temporary extraction directory -> its archive, for naming the archive when a file is missing from it
_EXTRACTIONS: Dict[str, str] = {}
_EXTRACTIONS_KEPT = 32


def _remember_extraction(tempdir: str, archive: Union[str, os.PathLike]) -> None:
    while len(_EXTRACTIONS) >= _EXTRACTIONS_KEPT:
        _EXTRACTIONS.pop(next(iter(_EXTRACTIONS)))
    _EXTRACTIONS[os.path.realpath(tempdir)] = os.fspath(archive)
    _EXTRACTIONS[os.path.abspath(tempdir)] = os.fspath(archive)


def _member_of_extraction(error: FileNotFoundError) -> Optional[Tuple[str, str]]:
    """
    ``(archive, member)`` when the missing file lies in a directory an archive was extracted to (named by
    the error's ``filename``, or in its message: allennlp's ``cached_path`` says "file PATH not found").
    """
    candidates = [os.fspath(error.filename)] if error.filename else []
    candidates += str(error).split()
    for candidate in candidates:
        for tempdir, archive in _EXTRACTIONS.items():
            for form in (candidate, os.path.realpath(candidate)):
                if form.startswith(tempdir + os.sep):
                    return archive, os.path.relpath(form, tempdir)
    return None


# how torch's load_state_dict and allennlp's Model._load say that weights do not fit a model
_WEIGHTS_DO_NOT_FIT = ("Error(s) in loading state_dict", "Error loading state dict for")


def _weights_mismatch(message: str) -> str:
    """``"3 missing and 70 unexpected parameters, e.g. missing 'x'"`` from allennlp's message, else its first line."""
    counts = {}
    for line in message.splitlines():
        for kind in ("Missing keys", "Unexpected keys"):
            if line.strip().startswith(kind + ":"):
                counts[kind] = _literal_list(line.split(":", 1)[1])
    if not counts:
        return message.strip().splitlines()[0][:200]
    missing, unexpected = counts.get("Missing keys", []), counts.get("Unexpected keys", [])
    example = (
        f", e.g. missing {missing[0]!r}" if missing else f", e.g. unexpected {unexpected[0]!r}" if unexpected else ""
    )
    return f"{len(missing)} missing and {len(unexpected)} unexpected parameters{example}"


def _literal_list(text: str) -> list:
    """A Python list literal of strings, or [] when ``text`` is none."""
    import ast

    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return []
    return list(value) if isinstance(value, (list, tuple)) else []


def naming_the_archive(load_archive):
    """
    ``load_archive`` whose errors about a file missing from the archive, or weights that do not fit its
    model, name the archive instead of a temporary directory or a page of parameter names.
    """
    if getattr(load_archive, "_spanbert_lib_shim", False):
        return load_archive
    signature = inspect.signature(load_archive)

    @functools.wraps(load_archive)
    def load_archive_naming_it(*args, **kwargs):
        try:
            return load_archive(*args, **kwargs)
        except FileNotFoundError as error:
            found = _member_of_extraction(error)
            if found is None:
                raise
            archive, member = found
            if member in ("weights.th", "best.th"):  # allennlp looks for weights.th, then best.th
                member = "weights.th (its trained weights)"
            raise CorruptArchiveError(
                f"the archive holds no {member} (a model archive of allennlp train holds config.json, weights.th "
                "and vocabulary/)",
                path=archive,
            ) from error
        except RuntimeError as error:
            if not str(error).startswith(_WEIGHTS_DO_NOT_FIT):
                raise
            arguments = signature.bind(*args, **kwargs).arguments
            weights_file = arguments.get("weights_file")
            weights = f"the weights of --weights-file {weights_file}" if weights_file else "its weights"
            raise CorruptArchiveError(
                f"{weights} do not fit the model its config.json describes ({_weights_mismatch(str(error))})",
                path=arguments["archive_file"],
            ) from error

    load_archive_naming_it._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    return load_archive_naming_it


def safe_archive_extraction(module) -> None:
    """
    Shim for ``allennlp.models.archival``: ``extracted_archive`` extracts with the ``"data"`` filter, and
    ``load_archive`` names the archive in its errors (:func:`naming_the_archive`).
    """
    module.extracted_archive = extracted_archive
    module.load_archive = naming_the_archive(module.load_archive)


def data_filter_by_default(_=None) -> None:
    """
    Shim run on the first ``import allennlp``: every ``TarFile.extractall``/``extract`` of the
    process that names no filter uses ``"data"``, as Python 3.14 does by default. Covers the
    archives that allennlp's ``cached_path(..., extract_archive=True)`` and ``archive_surgery`` open.
    """
    tarfile.TarFile.extraction_filter = staticmethod(tarfile.data_filter)
