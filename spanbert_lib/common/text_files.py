"""
Reading UTF-8 text files so that a decoding error names the file, the line and the byte offset.

Every reader of this library opens its text through these helpers instead of ``open(path)``:
Python's own ``UnicodeDecodeError`` names neither the file nor the line.
"""

import os
from typing import BinaryIO, Iterator, Tuple, Union

from spanbert_lib.common.errors import InvalidEncodingError

PathLike = Union[str, os.PathLike]
ENCODING_ERRORS = ("strict", "replace")


def decoded_lines(handle: BinaryIO, path: PathLike, encoding_errors: str = "strict") -> Iterator[Tuple[int, str]]:
    """
    The lines of a UTF-8 byte stream. A leading BOM is dropped.

    # Parameters

    handle : `BinaryIO`
        The stream, opened in binary mode.
    path : `PathLike`
        Its file, named in errors.
    encoding_errors : `str`, optional (default = `"strict"`)
        ``"strict"``: an invalid byte raises :class:`InvalidEncodingError` naming ``path``, the
        line and the absolute byte offset; ``"replace"``: it becomes U+FFFD.

    # Returns

    `Iterator[Tuple[int, str]]`
        ``(1-based line number, line without its line ending)`` for each line.
    """
    if encoding_errors not in ENCODING_ERRORS:
        raise ValueError(f"encoding_errors must be one of {ENCODING_ERRORS}, got {encoding_errors!r}")
    offset = 0
    for line_number, raw in enumerate(handle, start=1):
        try:
            line = raw.decode("utf-8", errors=encoding_errors)
        except UnicodeDecodeError as error:
            raise _encoding_error(path, raw, error, offset, line_number) from None
        if line_number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        offset += len(raw)
        yield line_number, line.rstrip("\r\n")


def read_lines(path: PathLike, encoding_errors: str = "strict") -> Iterator[Tuple[int, str]]:
    """
    Streams the lines of a UTF-8 file (see :func:`decoded_lines`).

    # Parameters

    path : `PathLike`
        The file.
    encoding_errors : `str`, optional (default = `"strict"`)
        ``"strict"`` or ``"replace"``, as for :func:`decoded_lines`.

    # Returns

    `Iterator[Tuple[int, str]]`
        ``(1-based line number, line without its line ending)`` for each line.
    """
    with open(path, "rb") as handle:
        yield from decoded_lines(handle, path, encoding_errors)


def read_text(path: PathLike, encoding_errors: str = "strict") -> str:
    """
    A whole UTF-8 file as one string (for JSON and other whole-file formats); a BOM is dropped,
    line endings are kept.

    # Parameters

    path : `PathLike`
        The file.
    encoding_errors : `str`, optional (default = `"strict"`)
        ``"strict"``: a decoding error (:class:`InvalidEncodingError`) names the file, line and
        byte offset; ``"replace"``: invalid bytes become U+FFFD.

    # Returns

    `str`
        The text.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        text = data.decode("utf-8", errors=encoding_errors)
    except UnicodeDecodeError as error:
        line_start = data.rfind(b"\n", 0, error.start) + 1
        line_end = data.find(b"\n", error.start)
        raw_line = data[line_start:] if line_end < 0 else data[line_start : line_end + 1]
        line_number = data.count(b"\n", 0, error.start) + 1
        local = UnicodeDecodeError(
            error.encoding, raw_line, error.start - line_start, error.end - line_start, error.reason
        )
        raise _encoding_error(path, raw_line, local, line_start, line_number) from None
    return text[1:] if text.startswith("\ufeff") else text


def _encoding_error(
    path: PathLike, raw_line: bytes, error: UnicodeDecodeError, line_offset: int, line_number: int
) -> InvalidEncodingError:
    bad = raw_line[error.start : error.end]
    return InvalidEncodingError(
        f"invalid UTF-8 byte(s) {bad!r} at byte offset {line_offset + error.start}; convert the file to UTF-8",
        path=path,
        line=line_number,
    )
