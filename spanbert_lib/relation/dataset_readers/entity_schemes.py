"""
The three ways of showing the two entities to the encoder (SpanBERT section 4.1):

* ``entity_mask`` (the paper's default): each mention is replaced by one typed marker,
  "[SUBJ-PERSON] was born in [OBJ-CITY] , Michigan";
* ``typed_entity_markers``: the words are kept and wrapped,
  "[SUBJ-PERSON] Bill [/SUBJ-PERSON] was born in [OBJ-CITY] Detroit [/OBJ-CITY] , Michigan";
* ``plain``: the sentence as it is (the spans are still known to the model).
"""

from dataclasses import dataclass
from typing import List, Tuple

from spanbert_lib.relation.dataset_readers.tacred_example import TacredExample, TacredFormatError
from spanbert_lib.relation.dataset_readers.tacred_schema import TACRED_ENTITY_TYPES
from spanbert_lib.relation.entity_markers import OBJECT, SUBJECT, end_marker, start_marker

ENTITY_SCHEMES = ("entity_mask", "typed_entity_markers", "plain")


@dataclass(frozen=True)
class MarkedSentence:
    """
    The word sequence given to the tokenizer, with the words that represent the two entities in
    it: the marker for ``entity_mask``, start marker .. end marker for ``typed_entity_markers``,
    the entity's words for ``plain``.

    # Parameters

    words : `List[str]`
        The words, markers included.
    subject_span : `Tuple[int, int]`
        Inclusive word span that represents the subject.
    object_span : `Tuple[int, int]`
        Inclusive word span that represents the object.
    """

    words: List[str]
    subject_span: Tuple[int, int]
    object_span: Tuple[int, int]


def _check_type(example: TacredExample, role: str, entity_type: str) -> None:
    if entity_type not in TACRED_ENTITY_TYPES:
        raise TacredFormatError(
            f"{example.where()}: unknown {role} entity type {entity_type!r}; the marker "
            f"vocabulary covers {', '.join(TACRED_ENTITY_TYPES)}"
        )


def mark_entities(example: TacredExample, scheme: str) -> MarkedSentence:
    """
    Applies an entity scheme to the example's (PTB-unescaped) words.

    # Parameters

    example : `TacredExample`
        The relation mention.
    scheme : `str`
        One of :data:`ENTITY_SCHEMES`.

    # Returns

    `MarkedSentence`
        The words to tokenise and the spans of the two entities in them.
    """
    if scheme not in ENTITY_SCHEMES:
        raise ValueError(f"unknown entity scheme {scheme!r}; choose one of {', '.join(ENTITY_SCHEMES)}")
    if scheme != "plain":
        _check_type(example, "subject", example.subj_type)
        _check_type(example, "object", example.obj_type)
    entities = sorted(
        [
            (example.subj_start, example.subj_end, SUBJECT, example.subj_type),
            (example.obj_start, example.obj_end, OBJECT, example.obj_type),
        ]
    )
    words: List[str] = []
    spans = {}
    previous_end = -1
    for start, end, role, entity_type in entities:
        words.extend(example.words[previous_end + 1 : start])
        first = len(words)
        if scheme == "entity_mask":
            words.append(start_marker(role, entity_type))
        elif scheme == "typed_entity_markers":
            words.append(start_marker(role, entity_type))
            words.extend(example.words[start : end + 1])
            words.append(end_marker(role, entity_type))
        else:
            words.extend(example.words[start : end + 1])
        spans[role] = (first, len(words) - 1)
        previous_end = end
    words.extend(example.words[previous_end + 1 :])
    return MarkedSentence(words=words, subject_span=spans[SUBJECT], object_span=spans[OBJECT])
