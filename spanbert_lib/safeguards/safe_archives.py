"""
Extracting model archives without letting a member write outside the extraction directory.

allennlp's ``archival.extracted_archive`` (used by ``load_archive``, hence by ``predict``,
``evaluate``, ``export-encoder`` and the ``pretrained`` initializer) calls
``tarfile.extractall`` with no filter: a crafted ``model.tar.gz`` with a member named
``../x``, an absolute path, or a link pointing outside, writes wherever it likes. Python's
``tarfile`` ``"data"`` filter (PEP 706) refuses exactly those members, plus device files.
"""

import logging
import os
import shutil
import tarfile
import tempfile
from contextlib import contextmanager
from typing import Iterator, Union

from spanbert_lib.common.errors import UserInputError

logger = logging.getLogger(__name__)


class UnsafeArchiveError(UserInputError):
    """An archive member that would land outside the extraction directory, or is a link or device."""


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
    with tarfile.open(archive_path, "r:*") as archive:
        try:
            archive.extractall(target_dir, filter="data")
        except tarfile.FilterError as error:
            member = error.tarinfo.name if error.tarinfo is not None else "?"
            raise UnsafeArchiveError(
                f"refusing to extract member {member!r}: {error} (a model archive holds only plain files and "
                f"directories under its own root)",
                path=archive_path,
            ) from error


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
    try:
        yield tempdir
    finally:
        if cleanup:
            logger.info("removing temporary unarchived model dir at %s", tempdir)
            shutil.rmtree(tempdir, ignore_errors=True)


def safe_archive_extraction(module) -> None:
    """Shim for ``allennlp.models.archival``: ``extracted_archive`` extracts with the ``"data"`` filter."""
    module.extracted_archive = extracted_archive


def data_filter_by_default(_=None) -> None:
    """
    Shim run on the first ``import allennlp``: every ``TarFile.extractall``/``extract`` of the
    process that names no filter uses ``"data"``, as Python 3.14 does by default. Covers the
    archives that allennlp's ``cached_path(..., extract_archive=True)`` and ``archive_surgery`` open.
    """
    tarfile.TarFile.extraction_filter = staticmethod(tarfile.data_filter)
