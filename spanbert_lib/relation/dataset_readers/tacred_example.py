"""Validated TACRED examples: the JSON record of one relation mention, checked and normalised."""

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.relation.dataset_readers.tacred_schema import convert_ptb_token

REQUIRED_KEYS = ("token", "subj_start", "subj_end", "obj_start", "obj_end", "subj_type", "obj_type")


class TacredFormatError(UserInputError):
    """A TACRED record that cannot be used; the message names the example id and the file."""


@dataclass(frozen=True)
class TacredExample:
    """
    One relation mention. Spans are word indices, both ends inclusive (TACRED's convention).

    # Parameters

    example_id : `str`
        The record's ``id`` (``#position`` when it has none).
    words : `List[str]`
        The tokens with PTB escapes mapped back (``-LRB-`` -> ``(``).
    ptb_words : `List[str]`
        The tokens as given.
    subj_start : `int`
        First word of the subject.
    subj_end : `int`
        Last word of the subject.
    obj_start : `int`
        First word of the object.
    obj_end : `int`
        Last word of the object.
    subj_type : `str`
        The subject's entity type (``PERSON``, ...).
    obj_type : `str`
        The object's entity type.
    relation : `Optional[str]`
        The gold relation; None when unknown (prediction).
    source : `str`
        The file the record comes from (or ``"<input>"``).
    position : `int`
        The record's index in ``source``.
    """

    example_id: str
    words: List[str]
    ptb_words: List[str]
    subj_start: int
    subj_end: int
    obj_start: int
    obj_end: int
    subj_type: str
    obj_type: str
    relation: Optional[str]
    source: str
    position: int

    def where(self) -> str:
        """``example 'ID' (record N) in FILE``: the location used in every error message."""
        return f"example {self.example_id!r} (record {self.position}) in {self.source}"


def _span(record: Dict[str, Any], role: str, num_words: int, where: str):
    start, end = record[f"{role}_start"], record[f"{role}_end"]
    if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool) or isinstance(end, bool):
        raise TacredFormatError(f"{where}: {role}_start/{role}_end must be integers, got {start!r}/{end!r}")
    if not 0 <= start <= end < num_words:
        raise TacredFormatError(
            f"{where}: {role} span [{start}, {end}] (inclusive) is out of range for a sentence of {num_words} tokens"
        )
    return start, end


def parse_tacred_record(record: Any, source: str, position: int) -> TacredExample:
    """
    Checks one record of a TACRED JSON file and returns it as a :class:`TacredExample`.

    Raises :class:`TacredFormatError` for a record that is not an object, lacks a key, has empty
    or non-string tokens, spans out of range or reversed, or subject and object spans that overlap.

    # Parameters

    record : `Any`
        The parsed JSON record.
    source : `str`
        Names the file (or ``"<input>"``).
    position : `int`
        The record's index in the file; stands in for the id when the record has none.

    # Returns

    `TacredExample`
        The checked example.
    """
    if not isinstance(record, dict):
        raise TacredFormatError(f"record {position} in {source}: expected a JSON object, got {type(record).__name__}")
    example_id = str(record.get("id", f"#{position}"))
    where = f"example {example_id!r} (record {position}) in {source}"  # as TacredExample.where()
    missing = [key for key in REQUIRED_KEYS if key not in record]
    if missing:
        raise TacredFormatError(f"{where}: missing key(s) {', '.join(missing)}")
    tokens = record["token"]
    if not isinstance(tokens, list) or not tokens or not all(isinstance(t, str) and t for t in tokens):
        raise TacredFormatError(f"{where}: 'token' must be a non-empty list of non-empty strings")
    subj_start, subj_end = _span(record, "subj", len(tokens), where)
    obj_start, obj_end = _span(record, "obj", len(tokens), where)
    if subj_start <= obj_end and obj_start <= subj_end:
        raise TacredFormatError(
            f"{where}: subject span [{subj_start}, {subj_end}] and object span [{obj_start}, {obj_end}] overlap"
        )
    for key in ("subj_type", "obj_type"):
        if not isinstance(record[key], str) or not record[key]:
            raise TacredFormatError(f"{where}: {key} must be a non-empty string, got {record[key]!r}")
    relation = record.get("relation")
    if relation is not None and (not isinstance(relation, str) or not relation):
        raise TacredFormatError(f"{where}: relation must be a non-empty string, got {relation!r}")
    return TacredExample(
        example_id=example_id,
        words=[convert_ptb_token(t) for t in tokens],
        ptb_words=list(tokens),
        subj_start=subj_start,
        subj_end=subj_end,
        obj_start=obj_start,
        obj_end=obj_end,
        subj_type=record["subj_type"],
        obj_type=record["obj_type"],
        relation=relation,
        source=source,
        position=position,
    )
