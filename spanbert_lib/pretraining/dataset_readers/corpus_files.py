"""
Plain-text corpora: expanding a path into ``.txt`` files and streaming documents out of them.

A corpus path is a single file, a directory (every ``*.txt`` below it, recursively) or a glob
pattern (``data/**/*.txt``); files are visited in sorted order so every reader, worker and run
sees the same document sequence. Documents are either one per file (``"file"``) or blocks of
consecutive non-blank lines separated by one or more blank lines (``"blank_line"``).

Files are decoded as UTF-8 line by line from bytes (a leading BOM is dropped), so a decoding error
can name the file, the line and the absolute byte offset of the bad byte.
"""
import glob
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, List, Tuple, Union

DOCUMENT_SEPARATORS = ("blank_line", "file")
ENCODING_ERRORS = ("strict", "replace")
_GLOB_CHARS = set("*?[")


class CorpusDecodingError(ValueError):
    """A corpus file is not valid UTF-8 (raised with ``encoding_errors="strict"``)."""


@dataclass(frozen=True)
class Document:
    """One document of a corpus: its text and where it came from (for messages)."""

    text: str
    path: str
    index_in_file: int  # 0-based position of the document within its file
    first_line: int  # 1-based line number of the document's first line


@dataclass
class CorpusFileStats:
    """What the document iterator saw; filled in while iterating."""

    files: int = 0
    documents: int = 0
    # file name -> number of empty / whitespace-only documents skipped in it (a file that is
    # empty or whitespace-only counts as one such document)
    empty_documents: Counter = field(default_factory=Counter)


def expand_text_paths(path: Union[str, os.PathLike]) -> List[Path]:
    """
    The files a corpus path stands for: the file itself, every ``*.txt`` file under a directory
    (recursively) or the files matching a glob pattern (``**`` allowed), sorted.

    Raises ``FileNotFoundError`` naming the path when nothing matches.
    """
    path_str = os.fspath(path)
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


def _decoded_lines(handle: BinaryIO, path: str, encoding_errors: str) -> Iterator[Tuple[int, str]]:
    """(1-based line number, line without its line ending) for each line of a UTF-8 file."""
    offset = 0
    for line_number, raw in enumerate(handle, start=1):
        try:
            line = raw.decode("utf-8", errors=encoding_errors)
        except UnicodeDecodeError as error:
            bad = raw[error.start : error.end]
            raise CorpusDecodingError(
                f"{path}: invalid UTF-8 byte(s) {bad!r} at byte offset {offset + error.start} "
                f"(line {line_number}). Convert the file to UTF-8, or set "
                f'encoding_errors="replace" to substitute U+FFFD for undecodable bytes.'
            ) from None
        if line_number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        offset += len(raw)
        yield line_number, line.rstrip("\r\n")


def iter_documents(
    files: Iterable[Union[str, os.PathLike]],
    document_separator: str = "blank_line",
    encoding_errors: str = "strict",
    stats: CorpusFileStats = None,
) -> Iterator[Document]:
    """
    Streams the non-empty documents of ``files`` in order; at most one file's current document is
    held in memory. Empty and whitespace-only documents are not yielded but counted in ``stats``.

    With ``"blank_line"`` a document's text is its lines joined with ``"\\n"``; with ``"file"`` it
    is the whole file (line endings normalised to ``"\\n"``).
    """
    if document_separator not in DOCUMENT_SEPARATORS:
        raise ValueError(
            f"document_separator must be one of {DOCUMENT_SEPARATORS}, got {document_separator!r}"
        )
    if encoding_errors not in ENCODING_ERRORS:
        raise ValueError(f"encoding_errors must be one of {ENCODING_ERRORS}, got {encoding_errors!r}")
    stats = stats if stats is not None else CorpusFileStats()
    for file in files:
        path = os.fspath(file)
        stats.files += 1
        yielded = 0
        with open(path, "rb") as handle:
            lines = _decoded_lines(handle, path, encoding_errors)
            if document_separator == "file":
                numbered = list(lines)
                text = "\n".join(line for _, line in numbered)
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
