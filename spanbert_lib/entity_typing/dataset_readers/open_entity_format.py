"""
Open Entity / UFET records: a sentence, one mention in it, and its types.

Two record formats are accepted (in one file: a JSON list, or JSON lines):

* LUKE / ERNIE preprocessing: ``{"sent": str, "start": int, "end": int, "labels": [str, ...]}``
  where ``start``/``end`` are character offsets of the mention in ``sent`` (end exclusive);
  an optional ``"mention"`` string must equal ``sent[start:end]``; other keys (``ents``) are
  ignored;
* UFET (Choi et al. 2018): ``{"left_context_token": [str], "mention_span": str,
  "right_context_token": [str], "y_str": [str]}``; the sentence is the tokens and the mention
  joined with single spaces.

``labels`` / ``y_str`` may be absent (no gold types).
"""

import json
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Tuple

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.common.text_files import read_text


class EntityTypingFormatError(UserInputError):
    """Bad entity-typing input; the message names the file and record."""


@dataclass
class MentionExample:
    """
    One mention in its sentence, whichever format it came in.

    # Parameters

    sentence : `str`
        The sentence.
    start : `int`
        First character of the mention in ``sentence``.
    end : `int`
        One past its last character.
    labels : `Optional[List[str]]`
        Gold types without duplicates; None when the record has none.
    where : `str`
        ``file: record N`` (and line for JSON lines), for messages.
    index : `int`, optional (default = `0`)
        The record's number in its file.
    """

    sentence: str
    start: int
    end: int
    labels: Optional[List[str]]
    where: str
    index: int = 0

    @property
    def mention(self) -> str:
        """The mention's text, ``sentence[start:end]``."""
        return self.sentence[self.start : self.end]


def _strings(value: Any, key: str, where: str) -> List[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise EntityTypingFormatError(f"{where}: {key!r} must be a list of strings, got {value!r}")
    return value


def _labels(record: dict, key: str, where: str) -> Optional[List[str]]:
    if key not in record or record[key] is None:
        return None
    return list(dict.fromkeys(_strings(record[key], key, where)))


def parse_mention_record(record: Any, where: str, index: int = 0) -> MentionExample:
    """
    Checks one record in either format (see the module docstring).

    # Parameters

    record : `Any`
        The parsed JSON record.
    where : `str`
        Its location, named by every error (:class:`EntityTypingFormatError`).
    index : `int`, optional (default = `0`)
        The record's number in its file.

    # Returns

    `MentionExample`
        The sentence, the mention's character offsets and the gold types.
    """
    if not isinstance(record, dict):
        raise EntityTypingFormatError(f"{where}: expected a JSON object, got {type(record).__name__}")
    if "sent" in record:
        sentence, start, end = record["sent"], record.get("start"), record.get("end")
        if not isinstance(sentence, str) or not sentence.strip():
            raise EntityTypingFormatError(f"{where}: 'sent' is empty or not a string: {sentence!r}")
        if isinstance(start, bool) or isinstance(end, bool) or not isinstance(start, int) or not isinstance(end, int):
            raise EntityTypingFormatError(
                f"{where}: 'start' and 'end' must be integer character offsets, got {start!r}, {end!r}"
            )
        if not 0 <= start < end <= len(sentence):
            raise EntityTypingFormatError(
                f"{where}: mention offsets [{start}, {end}) are out of range for a "
                f"sentence of {len(sentence)} characters"
            )
        if "mention" in record and record["mention"] != sentence[start:end]:
            raise EntityTypingFormatError(
                f"{where}: mention text {record['mention']!r} does not match "
                f"sent[{start}:{end}] = {sentence[start:end]!r}"
            )
        labels = _labels(record, "labels", where)
    elif "mention_span" in record:
        left = _strings(record.get("left_context_token", []), "left_context_token", where)
        right = _strings(record.get("right_context_token", []), "right_context_token", where)
        mention = record["mention_span"]
        if not isinstance(mention, str):
            raise EntityTypingFormatError(f"{where}: 'mention_span' must be a string, got {mention!r}")
        prefix = " ".join(left)
        start = len(prefix) + (1 if prefix else 0)
        end = start + len(mention)
        sentence = " ".join([*left, mention, *right])
        labels = _labels(record, "y_str", where)
    else:
        raise EntityTypingFormatError(
            f"{where}: neither an Open Entity record ('sent', 'start', 'end', "
            f"'labels') nor a UFET record ('left_context_token', 'mention_span', "
            f"'right_context_token', 'y_str'); keys: {sorted(record)}"
        )
    if not sentence.strip():
        raise EntityTypingFormatError(f"{where}: the sentence is empty")
    if not sentence[start:end].strip():
        raise EntityTypingFormatError(f"{where}: the mention [{start}, {end}) is empty or only whitespace")
    return MentionExample(sentence, start, end, labels, where, index)


def iter_mention_records(path: str) -> Iterator[Tuple[int, Any, str]]:
    """
    The records of a JSON-list or JSON-lines file.

    # Parameters

    path : `str`
        The file.

    # Returns

    `Iterator[Tuple[int, Any, str]]`
        ``(record index, parsed record, where)`` for each record; ``where`` names the file,
        the record and (for JSON lines) the line.
    """
    text = read_text(path)  # invalid UTF-8: an error naming the file, line and byte offset
    if text.lstrip().startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as error:
            raise EntityTypingFormatError(
                f"{path}: not valid JSON (line {error.lineno}, column {error.colno}): {error.msg}"
            ) from error
        for index, record in enumerate(records):
            yield index, record, f"{path}: record {index}"
        return
    index = 0
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}: record {index} (line {line_number})"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise EntityTypingFormatError(f"{where}: not valid JSON (column {error.colno}): {error.msg}") from error
        yield index, record, where
        index += 1
