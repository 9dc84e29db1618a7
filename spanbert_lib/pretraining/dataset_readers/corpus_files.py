"""
Plain-text corpora: expanding a path into ``.txt`` files and streaming documents out of them.

A corpus path is a single file, a directory (every ``*.txt`` below it, recursively), a glob
pattern (``data/**/*.txt``) or several of these separated by commas; files are visited in sorted
order so every reader, worker and run sees the same document sequence. Documents are either one per
file (``"file"``) or blocks of consecutive non-blank lines separated by one or more blank lines
(``"blank_line"``).

Files are decoded as UTF-8 line by line with :func:`spanbert_lib.common.text_files.decoded_lines`, so
a decoding error (:class:`~spanbert_lib.common.errors.InvalidEncodingError`) names the file, the
line and the absolute byte offset of the bad byte.
"""

import glob
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, List, Optional, Tuple, Union

from spanbert_lib.common.errors import InvalidEncodingError
from spanbert_lib.common.text_files import ENCODING_ERRORS, decoded_lines

DOCUMENT_SEPARATORS = ("blank_line", "file")
_GLOB_CHARS = set("*?[")


@dataclass(frozen=True)
class Document:
    """
    One document of a corpus: its text and where it came from (for messages).

    # Parameters

    text : `str`
        The document's text.
    path : `str`
        The file it comes from.
    index_in_file : `int`
        0-based position of the document within its file.
    first_line : `int`
        1-based line number of the document's first line.
    """

    text: str
    path: str
    index_in_file: int  # 0-based position of the document within its file
    first_line: int  # 1-based line number of the document's first line


@dataclass
class CorpusFileStats:
    """
    What the document iterator saw; filled in while iterating.

    # Parameters

    files : `int`, optional (default = `0`)
        Files opened.
    documents : `int`, optional (default = `0`)
        Non-empty documents yielded.
    empty_documents : `Counter`, optional (default = `Counter()`)
        File name -> empty / whitespace-only documents skipped in it (an empty or
        whitespace-only file counts as one such document).
    """

    files: int = 0
    documents: int = 0
    # file name -> number of empty / whitespace-only documents skipped in it (a file that is
    # empty or whitespace-only counts as one such document)
    empty_documents: Counter = field(default_factory=Counter)


def expand_text_paths(path: Union[str, os.PathLike]) -> List[Path]:
    """
    The files a corpus path stands for: the file itself, every ``*.txt`` file under a directory
    (recursively), the files matching a glob pattern (``**`` allowed), or the union of several
    such paths separated by commas (``a.txt,b.txt,more/``).

    # Parameters

    path : `Union[str, os.PathLike]`
        The corpus path.

    # Returns

    `List[Path]`
        The files, sorted, without duplicates. Raises ``FileNotFoundError`` naming the part that
        matches nothing.
    """
    path_str = os.fspath(path)
    if Path(path_str).expanduser().is_file():  # a file whose name contains a comma
        return [Path(path_str).expanduser()]
    parts = [part.strip() for part in path_str.split(",") if part.strip()]
    if not parts:
        raise FileNotFoundError(f"Corpus path {path_str!r} names no file.")
    files = {file for part in parts for file in _expand_one_path(part)}
    return sorted(files)


def _expand_one_path(path_str: str) -> List[Path]:
    candidate = Path(path_str).expanduser()
    if candidate.is_file():
        return [candidate]
    if candidate.is_dir():
        files = sorted(p for p in candidate.rglob("*.txt") if p.is_file())
        if not files:
            raise FileNotFoundError(f"Corpus directory {path_str!r} contains no *.txt files.")
        return files
    if _GLOB_CHARS & set(path_str):
        files = sorted(Path(p) for p in glob.glob(os.path.expanduser(path_str), recursive=True))
        files = [p for p in files if p.is_file()]
        if not files:
            raise FileNotFoundError(f"Corpus glob pattern {path_str!r} matches no files.")
        return files
    raise FileNotFoundError(
        f"Corpus path {path_str!r} is neither a file, a directory nor a glob pattern matching files."
    )


def _corpus_lines(handle, path: str, encoding_errors: str) -> Iterator[Tuple[int, str]]:
    """:func:`~spanbert_lib.common.text_files.decoded_lines`, with the corpus readers' own remedy in the error."""
    try:
        yield from decoded_lines(handle, path, encoding_errors)
    except InvalidEncodingError as error:
        raise InvalidEncodingError(
            f'{error.message}, or set encoding_errors="replace" to substitute U+FFFD for undecodable bytes',
            path=error.path,
            line=error.line,
        ) from None


def iter_documents(
    files: Iterable[Union[str, os.PathLike]],
    document_separator: str = "blank_line",
    encoding_errors: str = "strict",
    stats: Optional[CorpusFileStats] = None,
) -> Iterator[Document]:
    """
    Streams the non-empty documents of ``files`` in order; at most one file's current document is
    held in memory. Empty and whitespace-only documents are not yielded but counted in ``stats``.

    # Parameters

    files : `Iterable[Union[str, os.PathLike]]`
        The files, read in this order.
    document_separator : `str`, optional (default = `"blank_line"`)
        With ``"blank_line"`` a document's text is its lines joined with ``"\\n"``; with
        ``"file"`` it is the whole file (line endings normalised to ``"\\n"``, blank lines kept as
        paragraph breaks): the choice for a directory of books, where a blank line separates
        paragraphs, not documents.
    encoding_errors : `str`, optional (default = `"strict"`)
        ``"strict"``: invalid UTF-8 raises an error naming the file, line and byte offset;
        ``"replace"``: undecodable bytes become U+FFFD.
    stats : `CorpusFileStats`, optional (default = `None`)
        Filled in while iterating (a fresh one, not returned, when None).

    # Returns

    `Iterator[Document]`
        The non-empty documents, in file order.
    """
    if document_separator not in DOCUMENT_SEPARATORS:
        raise ValueError(f"document_separator must be one of {DOCUMENT_SEPARATORS}, got {document_separator!r}")
    if encoding_errors not in ENCODING_ERRORS:
        raise ValueError(f"encoding_errors must be one of {ENCODING_ERRORS}, got {encoding_errors!r}")
    stats = stats if stats is not None else CorpusFileStats()
    for file in files:
        path = os.fspath(file)
        stats.files += 1
        yielded = 0
        with open(path, "rb") as handle:
            lines = _corpus_lines(handle, path, encoding_errors)
            if document_separator == "file":
                text = "\n".join(line for _, line in lines)
                if text.strip():
                    yielded += 1
                    yield Document(text, path, 0, 1)
            else:
                block: List[str] = []
                first_line = 0
                for line_number, line in lines:
                    if line.strip():
                        if not block:
                            first_line = line_number
                        block.append(line)
                    elif block:
                        yield Document("\n".join(block), path, yielded, first_line)
                        yielded += 1
                        block = []
                if block:
                    yield Document("\n".join(block), path, yielded, first_line)
                    yielded += 1
        stats.documents += yielded
        if yielded == 0:
            stats.empty_documents[path] += 1
