"""
Entity marker tokens for relation classification and the tokenizer settings that make them
single, never-split tokens.

Markers are named after the TACRED types, as in SpanBERT's ``run_tacred.py``:
``[SUBJ-PERSON]``, ``[OBJ-STATE_OR_PROVINCE]`` (start / mask markers) and ``[/SUBJ-PERSON]``,
``[/OBJ-CITY]`` (end markers of the ``typed_entity_markers`` scheme). The inventory is fixed
(2 roles x 2 kinds x 17 types = 68 tokens), whatever data is read, so the tokenizer, the
allennlp vocabulary and the embedding matrix are identical for every dataset and scheme.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple

from spanbert_lib.relation.dataset_readers.tacred_schema import TACRED_ENTITY_TYPES

SUBJECT = "SUBJ"
OBJECT = "OBJ"
ROLES: Tuple[str, str] = (SUBJECT, OBJECT)


def start_marker(role: str, entity_type: str) -> str:
    """``[SUBJ-PERSON]``: the marker that replaces (entity_mask) or opens (typed markers) a mention."""
    return f"[{role}-{entity_type}]"


def end_marker(role: str, entity_type: str) -> str:
    """``[/SUBJ-PERSON]``: the marker that closes a mention in the typed_entity_markers scheme."""
    return f"[/{role}-{entity_type}]"


def entity_marker_tokens(entity_types: Sequence[str] = TACRED_ENTITY_TYPES) -> List[str]:
    """Every marker, in a fixed order: start markers (subject types, then object types), then end markers."""
    starts = [start_marker(role, t) for role in ROLES for t in entity_types]
    ends = [end_marker(role, t) for role in ROLES for t in entity_types]
    return starts + ends


def marker_description(marker: str) -> List[str]:
    """
    The words whose embeddings initialise a marker's embedding row:
    ``[SUBJ-STATE_OR_PROVINCE]`` -> ["subject", "state", "or", "province"];
    ``[/OBJ-CITY]`` -> ["end", "object", "city"].
    """
    body = marker[1:-1]
    words = []
    if body.startswith("/"):
        words.append("end")
        body = body[1:]
    role, _, entity_type = body.partition("-")
    words.append({SUBJECT: "subject", OBJECT: "object"}[role])
    words.extend(entity_type.lower().split("_"))
    return words


def marker_tokenizer_kwargs(tokenizer_kwargs: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """
    ``tokenizer_kwargs`` for ``AutoTokenizer.from_pretrained`` (through allennlp's
    ``cached_transformers``) with every entity marker added as an additional special token, so
    that the tokenizer never splits or lower-cases it.

    # Parameters

    tokenizer_kwargs : `Dict[str, Any]`, optional (default = `None`)
        The caller's arguments; its other additional special tokens are kept (before the
        markers).

    # Returns

    `Dict[str, Any]`
        A copy with the markers added (and ``use_fast`` True unless given).
    """
    kwargs = dict(tokenizer_kwargs or {})
    extra = [t for t in kwargs.get("additional_special_tokens", []) if t not in set(entity_marker_tokens())]
    kwargs["additional_special_tokens"] = extra + entity_marker_tokens()
    kwargs.setdefault("use_fast", True)
    return kwargs
