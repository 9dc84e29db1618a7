"""
The SemEval-2010 Task 8 reader: the task's own text format in, the same instances as the ``spanbert_tacred``
reader out (wordpieces with entity markers, subject/object spans, the directed relation label).
"""

import re
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple, cast

from allennlp.common.checks import ConfigurationError
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import MetadataField
from allennlp.data.instance import Instance

from spanbert_lib.common.errors import EmptyInputError, UserInputError
from spanbert_lib.common.known_labels import RECORD_SOURCE_KEY, record_source
from spanbert_lib.common.text_files import read_lines
from spanbert_lib.relation.dataset_readers.semeval2010_schema import split_label
from spanbert_lib.relation.dataset_readers.tacred import TacredReader
from spanbert_lib.relation.dataset_readers.tacred_example import TacredExample, TacredFormatError

# SemEval nominals have no entity type; every marker uses this one ([SUBJ-MISC] .. [/OBJ-MISC]).
SEMEVAL2010_ENTITY_TYPE = "MISC"

_RECORD_START = re.compile(r"^(?P<id>\d+)\t(?P<sentence>.*)$")
_ID_RANGE = re.compile(r"^(?P<path>.*)#ids=(?P<first>\d*)-(?P<last>\d*)$")
_TAG = re.compile(r"(</?e[12]>)")


@dataclass
class SemEvalRecord:
    """
    One example of a SemEval-2010 Task 8 file.

    # Parameters

    example_id : `int`
        The id before the tab.
    sentence : `str`
        The sentence with its ``<e1>``/``<e2>`` tags, outer quotes removed.
    line : `int`
        The 1-based line of the sentence.
    relation : `str`, optional (default = `None`)
        The label line (``Cause-Effect(e2,e1)``, ``Other``, ...); None in the test format.
    """

    example_id: int
    sentence: str
    line: int
    relation: Optional[str] = None


@dataclass(frozen=True)
class TaggedSentence:
    """
    The words of a sentence with ``<e1>``/``<e2>`` tags removed and the span of each nominal.

    # Parameters

    words : `List[str]`
        The whitespace-separated words, tags removed.
    e1_span : `Tuple[int, int]`
        Inclusive word span of e1.
    e2_span : `Tuple[int, int]`
        Inclusive word span of e2.
    """

    words: List[str]
    e1_span: Tuple[int, int]
    e2_span: Tuple[int, int]


def parse_tagged_sentence(sentence: str) -> TaggedSentence:
    """
    Splits ``The <e1>burst</e1> was caused by <e2>pressure</e2>.`` into whitespace-separated words
    (tags are word boundaries) and the word spans of e1 and e2. Raises ``ValueError`` unless each
    of the four tags occurs exactly once, each nominal is opened before it is closed, holds at
    least one word, and the two do not overlap.

    # Parameters

    sentence : `str`
        The tagged sentence.

    # Returns

    `TaggedSentence`
        Its words and the spans of the two nominals.
    """
    words: List[str] = []
    opened: Dict[str, int] = {}
    spans: Dict[str, Tuple[int, int]] = {}
    for piece in _TAG.split(sentence):
        if not _TAG.fullmatch(piece):
            words.extend(piece.split())
            continue
        name = piece.strip("</>")
        if name in spans or (not piece.startswith("</") and name in opened):
            raise ValueError(f"the tag {piece} occurs more than once")
        if piece.startswith("</"):
            if name not in opened:
                raise ValueError(f"{piece} comes before <{name}>")
            if len(words) == opened[name]:
                raise ValueError(f"<{name}> holds no word")
            spans[name] = (opened.pop(name), len(words) - 1)
        else:
            if opened:
                raise ValueError(f"<{name}> opens inside <{next(iter(opened))}>")
            opened[name] = len(words)
    missing = [f"<{name}>...</{name}>" for name in ("e1", "e2") if name not in spans]
    if missing:
        raise ValueError(f"the sentence lacks {' and '.join(missing)}")
    return TaggedSentence(words=words, e1_span=spans["e1"], e2_span=spans["e2"])


def split_id_range(file_path: str) -> Tuple[str, Optional[Tuple[Optional[int], Optional[int]]]]:
    """
    A data path split into the file and its inclusive ``#ids=FIRST-LAST`` range.

    # Parameters

    file_path : `str`
        The data path, with or without the ``#ids=`` suffix.

    # Returns

    `Tuple[str, Optional[Tuple[Optional[int], Optional[int]]]]`
        ``"train.txt#ids=1-5600"`` -> ``("train.txt", (1, 5600))``; either end may be left out
        (``#ids=5601-`` -> ``(5601, None)``); a path without ``#ids=`` selects every example
        (range ``None``).
    """
    match = _ID_RANGE.match(file_path)
    if match is None:
        if "#ids=" in file_path:
            raise ConfigurationError(
                f"{file_path!r}: write the id range as #ids=FIRST-LAST (inclusive, "
                "either end optional), e.g. train.txt#ids=1-5600"
            )
        return file_path, None
    first = int(match.group("first")) if match.group("first") else None
    last = int(match.group("last")) if match.group("last") else None
    if first is not None and last is not None and first > last:
        raise ConfigurationError(f"{file_path!r}: the id range {first}-{last} is empty")
    return match.group("path"), (first, last)


def read_semeval_records(path: str) -> Iterator[SemEvalRecord]:
    """
    The examples of a file in the task's format: ``ID<TAB>"sentence"``, optionally followed by the
    relation line and a ``Comment:`` line; blank lines are ignored, so the training/key format and
    the test format (sentence lines only) both read. Raises :class:`UserInputError` naming the
    file and line of a malformed line, an unknown label, a second label or a repeated id.

    # Parameters

    path : `str`
        The file.

    # Returns

    `Iterator[SemEvalRecord]`
        Its examples in file order.
    """
    record: Optional[SemEvalRecord] = None
    seen_ids: Dict[int, int] = {}
    for line_number, line in read_lines(path):
        start = _RECORD_START.match(line)
        if start is not None:
            if record is not None:
                yield record
            example_id = int(start.group("id"))
            if example_id in seen_ids:
                raise UserInputError(
                    f"example id {example_id} was already used on line {seen_ids[example_id]}",
                    path=path,
                    line=line_number,
                )
            seen_ids[example_id] = line_number
            sentence = start.group("sentence").strip()
            if len(sentence) >= 2 and sentence[0] == sentence[-1] == '"':
                sentence = sentence[1:-1]
            record = SemEvalRecord(example_id=example_id, sentence=sentence, line=line_number)
        elif not line.strip() or line.startswith("Comment:"):
            continue
        elif record is None:
            raise UserInputError(
                f"expected an example line 'ID<TAB>\"sentence with <e1>..</e1> and <e2>..</e2>\"', got {line[:80]!r}",
                path=path,
                line=line_number,
            )
        elif record.relation is not None:
            raise UserInputError(
                f"example {record.example_id} already has the label {record.relation!r} "
                f"(line {record.line + 1}); unexpected line {line[:80]!r}",
                path=path,
                line=line_number,
            )
        else:
            label = line.strip()
            try:
                split_label(label)
            except ValueError as error:
                raise UserInputError(f"example {record.example_id}: {error}", path=path, line=line_number) from None
            record.relation = label
    if record is not None:
        yield record


@DatasetReader.register("spanbert_semeval2010_task8")
class SemEval2010Task8Reader(TacredReader):
    """
    Reads SemEval-2010 Task 8 files (``ID<TAB>"The <e1>burst</e1> was caused by <e2>pressure</e2>."``,
    then the label line such as ``Cause-Effect(e2,e1)`` or ``Other``, a ``Comment:`` line and a blank
    line; label-less files in the test format read too).

    e1 is shown to the encoder as the subject and e2 as the object, both with the untyped
    ``MISC`` markers, through the entity schemes of the ``spanbert_tacred`` reader
    (:mod:`~spanbert_lib.relation.dataset_readers.entity_schemes`): with
    ``typed_entity_markers`` (the default here, since the nominals' words carry the relation)
    ``[CLS] the [SUBJ-MISC] burst [/SUBJ-MISC] was caused by [OBJ-MISC] pressure [/OBJ-MISC] . [SEP]``;
    with ``entity_mask`` each nominal becomes its one marker. The label keeps the direction
    (``Cause-Effect(e2,e1)`` is its own class). Instances have the fields of the ``spanbert_tacred``
    reader, so ``spanbert_relation_classifier`` and the ``spanbert_tacred`` predictor work unchanged.

    A subset of a file is chosen by id in the path: ``train.txt#ids=1-5600`` reads examples 1 to
    5600 (inclusive; either end may be left out, ``#ids=5601-``), so one file serves as training
    and development data.

    # Parameters

    model_name : `str`
        The Hugging Face tokenizer (a local directory).
    entity_scheme : `str`, optional (default = `"typed_entity_markers"`)
        ``"typed_entity_markers"``, ``"entity_mask"`` or ``"plain"``.
    max_seq_length : `int`, optional (default = `128`)
        Wordpieces per example including ``[CLS]``/``[SEP]``; longer sentences are cut around
        the two nominals.
    tokenizer_kwargs : `Dict[str, Any]`, optional (default = `None`)
        As for the ``spanbert_tacred`` reader.
    token_indexers : `Dict[str, TokenIndexer]`, optional (default = `None`)
        As for the ``spanbert_tacred`` reader.
    """

    def __init__(self, model_name: str, entity_scheme: str = "typed_entity_markers", **kwargs) -> None:
        super().__init__(model_name, entity_scheme=entity_scheme, **kwargs)

    def _read(self, file_path: str) -> Iterator[Instance]:
        path, id_range = split_id_range(str(file_path))
        records = list(read_semeval_records(path))
        if id_range is not None:
            first, last = id_range
            records = [
                r
                for r in records
                if (first is None or r.example_id >= first) and (last is None or r.example_id <= last)
            ]
        if not records:
            selection = "" if id_range is None else " with an id in the range " + file_path.rpartition("#ids=")[2]
            raise EmptyInputError(f"no SemEval-2010 Task 8 example{selection}", path=path)
        for record in self.shard_iterable(records):
            yield self._record_to_instance(record.sentence, record.relation, record.example_id, path, record.line)

    def text_to_instance(  # type: ignore[override]  # why: a tagged sentence, not TacredReader's tokens
        self,
        sentence: str,
        relation: Optional[str] = None,
        example_id: Optional[Any] = None,
    ) -> Instance:
        """
        One instance from a tagged sentence.

        # Parameters

        sentence : `str`
            The sentence with ``<e1>..</e1>`` and ``<e2>..</e2>`` tags.
        relation : `str`, optional (default = `None`)
            The gold label, if known.
        example_id : `Any`, optional (default = `None`)
            Id kept in the metadata (as a string).

        # Returns

        `Instance`
            The fields of the ``spanbert_tacred`` reader's instances.
        """
        if relation is not None:
            try:
                split_label(relation)
            except ValueError as error:
                raise UserInputError(str(error), record=None if example_id is None else str(example_id)) from None
        return self._record_to_instance(sentence, relation, example_id, None, None)

    def _record_to_instance(
        self,
        sentence: str,
        relation: Optional[str],
        example_id: Optional[Any],
        path: Optional[str],
        line: Optional[int],
    ) -> Instance:
        record = None if example_id is None else str(example_id)
        try:
            tagged = parse_tagged_sentence(sentence)
        except ValueError as error:
            raise UserInputError(f"{error}: {sentence[:120]!r}", path=path, line=line, record=record) from None
        example = TacredExample(
            example_id=record or "<input>",
            words=tagged.words,
            ptb_words=tagged.words,
            subj_start=tagged.e1_span[0],
            subj_end=tagged.e1_span[1],
            obj_start=tagged.e2_span[0],
            obj_end=tagged.e2_span[1],
            subj_type=SEMEVAL2010_ENTITY_TYPE,
            obj_type=SEMEVAL2010_ENTITY_TYPE,
            relation=relation,
            source=path or "<input>",
            position=line or 0,
        )
        try:
            instance = self._example_to_instance(example)
        except TacredFormatError as error:
            message = str(error)
            prefix = example.where() + ": "
            raise UserInputError(
                message[len(prefix) :] if message.startswith(prefix) else message, path=path, line=line, record=record
            ) from None
        # where an unknown gold label is reported from: file and line of the sentence
        metadata = cast(MetadataField, instance["metadata"]).metadata
        metadata[RECORD_SOURCE_KEY] = record_source(path, line, record)
        return instance
