"""
Reading and writing CoNLL-2012 ``*_conll`` coreference files (OntoNotes, LitBank, and the files
of the reference scorer's test suite), accepting every file the reference scorer (v8.01)
accepts.

A file holds documents delimited by ``#begin document (KEY); part NNN`` (the part is optional)
and ``#end document``; sentences are separated by blank (or whitespace-only) lines. A token line
is split on any run of whitespace (tabs, spaces, trailing whitespace all allowed); OntoNotes
lines have these columns:

    0 doc key | 1 part | 2 word index | 3 word | 4 POS | 5 parse | 6 lemma | 7 frame |
    8 sense | 9 speaker | 10 named entity | 11.. predicate arguments | LAST coreference

but any line of at least two columns is read: only the LAST column is coreference, the word is
column 4 when a line has at least five columns (files with fewer, such as keys holding only the
document id and the coreference column, have no words), the speaker column 10 when present
before the last. The number of columns may differ from line to line.

The coreference column holds ``-``/``_`` (no mention) or parts ``(12`` (a mention of cluster 12
starts), ``12)`` (one ends) and ``(12)`` (a one-word mention), joined by ``|`` or written one
after another (``(1(2``, ``1)2)``, ``(2)(3``). Mentions are read exactly as the reference reads
them: per cell, one-word mentions first, then openings, then closings (each found and removed
left to right), a closing ending the most recently opened mention of its cluster; ``(N+M)``
(a split antecedent) is ignored.

Other text in the last column (``*`` when a file leaves the coreference column empty, a tag of
another column) is read as no mention, as the reference reads it, with one warning per file.
Like the reference, the reader refuses a closing bracket without an opening one and a mention
still open at ``#end document``; it also refuses what the reference would silently misread: a
token line outside a document, a ``#`` line inside one and a file that ends inside a document.
"""

import io
import logging
import os
import re
from dataclasses import dataclass, field
from typing import IO, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, TextIO, Tuple, Union

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.common.span_types import Span
from spanbert_lib.common.text_files import read_lines

logger = logging.getLogger(__name__)

Clusters = List[List[Span]]
DocumentId = Tuple[str, str]

WORD_COLUMN = 3
SPEAKER_COLUMN = 9
MIN_COLUMNS = 2
"""The fewest columns the reference scorer reads: a document id and the coreference column."""
MIN_COLUMNS_WITH_WORDS = WORD_COLUMN + 2
"""The fewest columns of a line that has a word (column 4) before the coreference column."""
EMPTY_COREF_CELLS = frozenset({"", "-", "_"})

_BEGIN_RE = re.compile(r"^#\s*begin document\s*(.*?)\s*$")
_END_RE = re.compile(r"^#\s*end document\b")
_NAME_WITH_PART_RE = re.compile(r"^\((.*)\);\s*part\s+(\S+)$")
_NAME_IN_PARENS_RE = re.compile(r"^\((.*)\);?$")
# the reference's patterns, applied in this order, each match removed before the next search
_SPLIT_ANTECEDENT_RE = re.compile(r"\((\d+\+\d)\)")
_SINGLE_RE = re.compile(r"\((\d+)\)")
_OPEN_RE = re.compile(r"\((\d+)")
_CLOSE_RE = re.compile(r"(\d+)\)")


class ConllFormatError(UserInputError):
    """A CoNLL file the scorer cannot read; the message reads ``FILE:LINE: problem``."""

    def __init__(self, source: str, line_number: int, problem: str) -> None:
        self.source = source
        self.line_number = line_number
        self.problem = problem
        super().__init__(problem, path=source, line=line_number)

    def __reduce__(self):  # picklable (e.g. raised in a data loader worker process)
        return type(self), (self.source, self.line_number, self.problem)


@dataclass
class ConllDocument:
    """
    One ``#begin document`` ... ``#end document`` block (one part of an OntoNotes document).

    ``clusters`` are lists of inclusive ``(start, end)`` word offsets counted over the whole
    document; clusters are ordered by the first appearance of their id, mentions by the word
    where they end (the order the reference scorer builds them in). Nested, duplicated and
    singleton mentions are kept as they are.
    """

    doc_key: str
    part: str
    sentences: List[List[str]]
    """Words per sentence; ``""`` for token lines without a word column (see ``has_words``)."""
    speakers: List[List[str]]
    genre: Optional[str]
    clusters: Clusters
    source_path: Optional[str] = None
    first_line: str = ""
    """The ``#begin document`` line as it was written (the writer repeats it)."""
    begin_line_number: int = 0
    """1-based line number of ``first_line`` in ``source_path``."""
    cluster_ids: List[str] = field(default_factory=list)
    """The cluster ids used in the file, parallel to ``clusters``."""
    raw_lines: List[List[str]] = field(default_factory=list, repr=False)
    """The token lines per sentence (without line ends), so a writer can keep every column."""
    token_line_numbers: List[int] = field(default_factory=list, repr=False)
    """1-based line number of every token, in document order."""
    has_words: bool = True
    """False when some token line has fewer than ``MIN_COLUMNS_WITH_WORDS`` columns."""

    @property
    def document_id(self) -> DocumentId:
        return (self.doc_key, self.part)

    @property
    def words(self) -> List[str]:
        return [word for sentence in self.sentences for word in sentence]

    @property
    def num_words(self) -> int:
        return sum(len(sentence) for sentence in self.sentences)

    @property
    def header(self) -> str:
        if self.first_line:
            return self.first_line
        return f"#begin document ({self.doc_key}); part {self.part}"

    def describe(self) -> str:
        """``document KEY part PART (FILE:LINE)`` for error messages."""
        where = f" ({self.source_path}:{self.begin_line_number})" if self.source_path else ""
        return f"document {self.doc_key!r} part {self.part!r}{where}"


def genre_of(doc_key: str) -> Optional[str]:
    """The first path component of an OntoNotes doc key (``bc/cctv/00/cctv_0000`` -> ``bc``);
    None for keys without ``/`` (e.g. LitBank's)."""
    return doc_key.split("/", 1)[0] if "/" in doc_key else None


def parse_document_name(name: str) -> DocumentId:
    """``(bc/cctv/00/cctv_0000); part 000`` -> ``("bc/cctv/00/cctv_0000", "000")``;
    names without a part get part ``""``."""
    match = _NAME_WITH_PART_RE.match(name)
    if match:
        return match.group(1), match.group(2)
    match = _NAME_IN_PARENS_RE.match(name)
    if match:
        return match.group(1), ""
    return name, ""


def split_columns(line: str) -> List[str]:
    """The columns of a token line: split on any run of whitespace, as the reference scorer's
    coreference column is the last non-empty field (a trailing tab or space adds no column)."""
    return line.split()


def _take_all(pattern: "re.Pattern", text: str) -> Tuple[List[str], str]:
    """Removes the leftmost match of ``pattern`` from ``text`` until none is left (text joined
    around a removed match is searched again, as the reference's ``while (s/...//)`` does);
    returns the captured groups in order and what remains."""
    found = []
    match = pattern.search(text)
    while match:
        found.append(match.group(1))
        text = text[: match.start()] + text[match.end() :]
        match = pattern.search(text)
    return found, text


class CoreferenceCell(NamedTuple):
    """What a coreference cell holds, each list in the order the reference scorer finds it."""

    singles: List[str]
    """Cluster ids of one-word mentions."""
    opens: List[str]
    """Cluster ids of mentions starting here."""
    closes: List[str]
    """Cluster ids of mentions ending here."""
    ignored: str
    """Other text (besides ``|`` separators), which the reference scorer ignores."""


def parse_coreference_cell(cell: str) -> CoreferenceCell:
    """
    The mentions of a coreference cell, found as the reference scorer finds them:
    ``"(1(2"`` -> opens ``["1", "2"]``, ``"(2)(3"`` -> singles ``["2"]``, opens ``["3"]``,
    ``"1)|(4)"`` -> singles ``["4"]``, closes ``["1"]``; ``-``, ``_`` and ``""`` hold nothing.
    Text that is none of ``(N``, ``N)``, ``(N)``, ``(N+M)`` is returned in ``ignored``.
    """
    if cell in EMPTY_COREF_CELLS:
        return CoreferenceCell([], [], [], "")
    _, rest = _take_all(_SPLIT_ANTECEDENT_RE, cell)
    singles, rest = _take_all(_SINGLE_RE, rest)
    opens, rest = _take_all(_OPEN_RE, rest)
    closes, rest = _take_all(_CLOSE_RE, rest)
    return CoreferenceCell(singles, opens, closes, rest.replace("|", ""))


@dataclass
class _IgnoredText:
    """Coreference cells of one file with text the reference ignores (logged once per file)."""

    cells: int = 0
    first_line: int = 0
    first_cell: str = ""

    def add(self, line_number: int, cell: str) -> None:
        if not self.cells:
            self.first_line, self.first_cell = line_number, cell
        self.cells += 1


class _DocumentBuilder:
    """Accumulates one document's lines; raises ConllFormatError on malformed content."""

    def __init__(
        self, source: str, line_number: int, header: str, name: str, min_columns: int, ignored_text: _IgnoredText
    ) -> None:
        self.source = source
        self.ignored_text = ignored_text
        self.begin_line_number = line_number
        self.header = header
        self.doc_key, self.part = parse_document_name(name)
        self.min_columns = min_columns
        self.sentences: List[List[str]] = []
        self.speakers: List[List[str]] = []
        self.raw_lines: List[List[str]] = []
        self.token_line_numbers: List[int] = []
        self.has_words = True
        self._sentence: List[str] = []
        self._sentence_speakers: List[str] = []
        self._sentence_lines: List[str] = []
        self._num_words = 0
        self._cluster_index: Dict[str, int] = {}
        self._clusters: Clusters = []
        # cluster id -> stack of (start word, line number) of mentions still open
        self._open: Dict[str, List[Tuple[int, int]]] = {}

    def error(self, line_number: int, problem: str) -> ConllFormatError:
        return ConllFormatError(self.source, line_number, problem)

    def add_token_line(self, line: str, line_number: int) -> None:
        columns = split_columns(line)
        if len(columns) < self.min_columns:
            raise self.error(line_number, self._too_few_columns(len(columns)))
        if len(columns) >= MIN_COLUMNS_WITH_WORDS:
            self._sentence.append(columns[WORD_COLUMN])
        else:
            self._sentence.append("")
            self.has_words = False
        # the speaker column only exists on OntoNotes-like lines (LitBank fills it with '_')
        self._sentence_speakers.append(columns[SPEAKER_COLUMN] if len(columns) > SPEAKER_COLUMN + 1 else "-")
        self._sentence_lines.append(line)
        self.token_line_numbers.append(line_number)
        self._add_coreference(columns[-1], self._num_words, line_number)
        self._num_words += 1

    def _too_few_columns(self, found: int) -> str:
        if self.min_columns >= MIN_COLUMNS_WITH_WORDS:
            return (
                f"expected at least {self.min_columns} columns (the word in column "
                f"{WORD_COLUMN + 1}, coreference in the last), found {found} in document "
                f"{self.doc_key!r}"
            )
        return (
            f"expected at least {self.min_columns} columns (the document id, then "
            f"coreference in the last), found {found} in document {self.doc_key!r}"
        )

    def _cluster(self, cluster_id: str) -> List[Span]:
        index = self._cluster_index.get(cluster_id)
        if index is None:
            index = self._cluster_index[cluster_id] = len(self._clusters)
            self._clusters.append([])
        return self._clusters[index]

    def _add_coreference(self, cell: str, word: int, line_number: int) -> None:
        if cell in EMPTY_COREF_CELLS:
            return
        singles, opens, closes, ignored = parse_coreference_cell(cell)
        if ignored:
            self.ignored_text.add(line_number, cell)
        for cluster_id in singles:
            self._cluster(cluster_id).append((word, word))
        for cluster_id in opens:
            self._cluster(cluster_id)
            self._open.setdefault(cluster_id, []).append((word, line_number))
        for cluster_id in closes:
            stack = self._open.get(cluster_id)
            if not stack:
                raise self.error(
                    line_number,
                    f"unbalanced coreference brackets: '{cluster_id})' "
                    f"closes a mention of cluster {cluster_id} that "
                    f"was never opened",
                )
            start, _ = stack.pop()
            self._cluster(cluster_id).append((start, word))

    def end_sentence(self) -> None:
        if self._sentence:
            self.sentences.append(self._sentence)
            self.speakers.append(self._sentence_speakers)
            self.raw_lines.append(self._sentence_lines)
            self._sentence, self._sentence_speakers, self._sentence_lines = [], [], []

    def finish(self, line_number: int) -> ConllDocument:
        self.end_sentence()
        unclosed = [(opened_line, cluster_id) for cluster_id, stack in self._open.items() for _, opened_line in stack]
        if unclosed:
            opened_line, cluster_id = min(unclosed)
            raise self.error(
                line_number,
                f"unbalanced coreference brackets: a mention of "
                f"cluster {cluster_id} opened on line {opened_line} "
                f"is still open at the end of document "
                f"{self.doc_key!r}",
            )
        return ConllDocument(
            doc_key=self.doc_key,
            part=self.part,
            sentences=self.sentences,
            speakers=self.speakers,
            genre=genre_of(self.doc_key),
            clusters=self._clusters,
            source_path=self.source,
            first_line=self.header,
            begin_line_number=self.begin_line_number,
            cluster_ids=list(self._cluster_index),
            raw_lines=self.raw_lines,
            token_line_numbers=self.token_line_numbers,
            has_words=self.has_words,
        )


def parse_numbered_lines(
    numbered_lines: Iterable[Tuple[int, str]], source: str = "<string>", min_columns: int = MIN_COLUMNS
) -> Iterator[ConllDocument]:
    """
    Yields the documents of ``(line number, line)`` pairs lazily (see :func:`parse_conll_lines`).
    """
    if min_columns < MIN_COLUMNS:
        raise ValueError(f"min_columns must be at least {MIN_COLUMNS}, got {min_columns}")
    builder: Optional[_DocumentBuilder] = None
    ignored_text = _IgnoredText()
    line_number = 0
    for line_number, line in numbered_lines:
        line = line.rstrip("\r\n")
        if not line.strip():
            if builder is not None:
                builder.end_sentence()
            continue
        begin = _BEGIN_RE.match(line)
        if begin:
            if builder is not None:
                raise ConllFormatError(
                    source,
                    line_number,
                    f"'#begin document' inside document {builder.doc_key!r} "
                    f"begun on line {builder.begin_line_number}, which has "
                    f"no '#end document'",
                )
            builder = _DocumentBuilder(source, line_number, line.rstrip(), begin.group(1), min_columns, ignored_text)
        elif _END_RE.match(line):
            if builder is None:
                raise ConllFormatError(source, line_number, "'#end document' without a matching '#begin document'")
            yield builder.finish(line_number)
            builder = None
        elif line.startswith("#"):
            if builder is not None:
                raise ConllFormatError(
                    source, line_number, f"unexpected '#' line inside document {builder.doc_key!r}: {line[:60]!r}"
                )
        elif builder is None:
            raise ConllFormatError(
                source, line_number, "token line outside a document (no '#begin document' before it)"
            )
        else:
            builder.add_token_line(line, line_number)
    if builder is not None:
        raise ConllFormatError(
            source,
            line_number,
            f"missing '#end document': document {builder.doc_key!r} begun "
            f"on line {builder.begin_line_number} runs to the end of the file",
        )
    if ignored_text.cells:
        logger.warning(
            "%s:%d: %d coreference cell(s) hold text that is no mention bracket, "
            "e.g. %r; it is read as no mention, as the reference scorer reads it "
            "(is coreference the last column?)",
            source,
            ignored_text.first_line,
            ignored_text.cells,
            ignored_text.first_cell,
        )


def parse_conll_lines(
    lines: Iterable[str], source: str = "<string>", min_columns: int = MIN_COLUMNS
) -> Iterator[ConllDocument]:
    """
    Yields the documents of an iterable of lines (e.g. ``io.StringIO``) lazily.

    # Parameters

    lines : `Iterable[str]`
        The file's lines, with or without line ends.
    source : `str`, optional (default = `"<string>"`)
        Names the input in error messages.
    min_columns : `int`, optional (default = `MIN_COLUMNS`, 2)
        The fewest columns a token line may have; `MIN_COLUMNS_WITH_WORDS` (5) for readers
        that need the word column.
    """
    yield from parse_numbered_lines(enumerate(lines, start=1), source, min_columns)


def iter_conll_documents(path: Union[str, os.PathLike], min_columns: int = MIN_COLUMNS) -> Iterator[ConllDocument]:
    """Yields the documents of a UTF-8 CoNLL file one at a time (the file is read lazily);
    invalid UTF-8 raises ``InvalidEncodingError`` naming the file, line and byte offset."""
    yield from parse_numbered_lines(read_lines(path), source=os.fspath(path), min_columns=min_columns)


def read_conll_documents(path: Union[str, os.PathLike], min_columns: int = MIN_COLUMNS) -> List[ConllDocument]:
    return list(iter_conll_documents(path, min_columns=min_columns))


# ---------------------------------------------------------------------------------- writing


def _check_clusters(clusters: Sequence[Sequence[Span]], num_words: int, what: str) -> List[List[Span]]:
    checked = []
    for cluster in clusters:
        spans = []
        for span in cluster:
            start, end = int(span[0]), int(span[1])
            if not 0 <= start <= end < num_words:
                raise ValueError(
                    f"{what}: mention ({start}, {end}) is outside the document's {num_words} words or has start > end"
                )
            spans.append((start, end))
        checked.append(spans)
    return checked


def _check_bracketable(cluster_index: int, cluster: List[Span], what: str) -> None:
    """Two multi-word mentions of one cluster that cross (s1 < s2 <= e1 < e2) cannot be written
    with brackets: a closing bracket always ends the latest opened mention of its cluster."""
    open_ends: List[Span] = []
    for start, end in sorted((s for s in cluster if s[0] < s[1]), key=lambda s: (s[0], -s[1])):
        while open_ends and open_ends[-1][1] < start:
            open_ends.pop()
        if open_ends and open_ends[-1][1] < end:
            raise ValueError(
                f"{what}: mentions {open_ends[-1]} and {(start, end)} of cluster "
                f"{cluster_index} cross each other and cannot be written in CoNLL "
                f"bracket notation"
            )
        open_ends.append((start, end))


def coreference_cells(num_words: int, clusters: Sequence[Sequence[Span]], what: str = "clusters") -> List[str]:
    """
    The coreference column (one cell per word) for ``clusters``, cluster ``i`` written as id
    ``i``. Per cell: openings (longest mention first), one-word mentions, closings (shortest
    first); ``-`` where no mention starts or ends.
    """
    checked = _check_clusters(clusters, num_words, what)
    opens: List[List[Tuple[int, int]]] = [[] for _ in range(num_words)]
    singles: List[List[int]] = [[] for _ in range(num_words)]
    closes: List[List[Tuple[int, int]]] = [[] for _ in range(num_words)]
    for index, cluster in enumerate(checked):
        _check_bracketable(index, cluster, what)
        for start, end in cluster:
            if start == end:
                singles[start].append(index)
            else:
                opens[start].append((-end, index))
                closes[end].append((-start, index))
    cells = []
    for word in range(num_words):
        parts = [f"({index}" for _, index in sorted(opens[word])]
        parts += [f"({index})" for index in singles[word]]
        parts += [f"{index})" for _, index in sorted(closes[word])]
        cells.append("|".join(parts) if parts else "-")
    return cells


def _replace_last_column(line: str, cell: str) -> str:
    """``line`` with its coreference column (the last whitespace-separated one) replaced by
    ``cell``, trailing whitespace kept. A line ending in a tab after a field without mentions
    has an empty last column (LitBank: ``..._<TAB>``): ``cell`` goes there."""
    stripped = line.rstrip()
    cut = max(stripped.rfind(" "), stripped.rfind("\t"))
    if line.endswith("\t") and not any(parse_coreference_cell(stripped[cut + 1 :])[:3]):
        return line + cell
    return stripped[: cut + 1] + cell + line[len(stripped) :]


def format_conll_document(document: ConllDocument, clusters: Optional[Sequence[Sequence[Span]]] = None) -> str:
    """
    The document as CoNLL text with its coreference column replaced by ``clusters``
    (default: the document's own clusters). Other columns are kept from ``raw_lines`` when the
    document was read from a file; otherwise 12 tab-separated columns are written with ``-``
    for the unknown ones.
    """
    cells = coreference_cells(
        document.num_words, document.clusters if clusters is None else clusters, what=document.describe()
    )
    out = [document.header]
    word = 0
    have_raw = len(document.raw_lines) == len(document.sentences) and all(
        len(raw) == len(sentence) for raw, sentence in zip(document.raw_lines, document.sentences)
    )
    part_column = str(int(document.part)) if document.part.isdigit() else (document.part or "0")
    for sentence_index, sentence in enumerate(document.sentences):
        for position, token in enumerate(sentence):
            if have_raw:
                out.append(_replace_last_column(document.raw_lines[sentence_index][position], cells[word]))
            else:
                speaker = "-"
                if sentence_index < len(document.speakers) and position < len(document.speakers[sentence_index]):
                    speaker = document.speakers[sentence_index][position] or "-"
                out.append(
                    "\t".join(
                        [
                            document.doc_key,
                            part_column,
                            str(position),
                            token,
                            "-",
                            "-",
                            "-",
                            "-",
                            "-",
                            speaker,
                            "*",
                            cells[word],
                        ]
                    )
                )
            word += 1
        out.append("")
    out.append("#end document")
    return "\n".join(out) + "\n"


ClustersForDocuments = Union[Sequence[Sequence[Sequence[Span]]], Mapping[DocumentId, Sequence[Sequence[Span]]]]


def write_conll_documents(
    destination: Union[str, os.PathLike, TextIO],
    documents: Iterable[ConllDocument],
    clusters: Optional[ClustersForDocuments] = None,
) -> None:
    """
    Writes ``documents`` (same keys, parts, words and other columns) with the coreference
    column replaced by ``clusters``: a sequence parallel to ``documents`` or a mapping from
    ``(doc_key, part)``; None writes each document's own clusters.
    """
    documents = list(documents)
    if clusters is not None and not isinstance(clusters, Mapping) and len(clusters) != len(documents):
        raise ValueError(f"got clusters for {len(clusters)} documents but {len(documents)} documents")

    def clusters_for(index: int, document: ConllDocument):
        if clusters is None:
            return None
        if isinstance(clusters, Mapping):
            if document.document_id not in clusters:
                raise KeyError(f"no clusters given for {document.describe()}")
            return clusters[document.document_id]
        return clusters[index]

    def write(stream: IO[str]) -> None:
        for index, document in enumerate(documents):
            stream.write(format_conll_document(document, clusters_for(index, document)))

    if isinstance(destination, (str, os.PathLike)):
        with open(destination, "w", encoding="utf-8") as stream:
            write(stream)
    else:
        write(destination)


def conll_text(documents: Iterable[ConllDocument], clusters: Optional[ClustersForDocuments] = None) -> str:
    """``write_conll_documents`` into a string."""
    buffer = io.StringIO()
    write_conll_documents(buffer, documents, clusters)
    return buffer.getvalue()
