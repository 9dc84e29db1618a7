"""
BIO tags (IOB1 or IOB2) -> entity spans, with the chunk semantics of ``conlleval``.

A tag is ``O``, ``B-TYPE`` or ``I-TYPE``. An entity starts at

* every ``B-X``;
* an ``I-X`` after ``O`` or at the start of the sentence (IOB1 style, also tolerated in IOB2
  data);
* an ``I-X`` after a tag of a different type (``B-Y`` / ``I-Y``),

and ends before the next start, ``O`` or the end of the sentence. So IOB1 and IOB2 sequences of
the same entities give the same spans, and a malformed IOB2 sequence is read the way conlleval
scores it. The chunking is vectorised with numpy.
"""

import re
from typing import List, Optional, Sequence, Tuple

import numpy as np

from spanbert_lib.common.errors import UserInputError

Entity = Tuple[int, int, str]
"""``(start, end, label)``: inclusive word offsets."""

OUTSIDE = "O"
_TAG = re.compile(r"^(?P<prefix>[BI])-(?P<type>\S+)$")
_O, _B, _I = 0, 1, 2


class NerFormatError(UserInputError):
    """Bad NER input; the message names the file and line (or document / record)."""


def parse_tags(tags: Sequence[str], where: Optional[Sequence[str]] = None) -> Tuple[np.ndarray, np.ndarray, List[str]]:
    """
    Splits tags into prefixes and type ids; raises :class:`NerFormatError` on an invalid tag
    (``X-PER``, ``B-``, ``PER``, a type named ``O``).

    # Parameters

    tags : `Sequence[str]`
        ``N`` BIO tags.
    where : `Sequence[str]`, optional (default = `None`)
        ``where[i]`` describes the origin of tag ``i`` (e.g. ``file:line``) for the error.

    # Returns

    `Tuple[np.ndarray, np.ndarray, List[str]]`
        ``(prefixes, types, names)``: prefixes `[N]` (0 = ``O``, 1 = ``B``, 2 = ``I``), type
        ids `[N]` (index into ``names``, -1 for ``O``) and the type names.
    """
    if len(tags) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), []
    unique, inverse = np.unique(np.asarray(tags, dtype=object).astype(str), return_inverse=True)
    unique_prefix = np.zeros(len(unique), dtype=np.int64)
    unique_type = np.full(len(unique), -1, dtype=np.int64)
    type_names: List[str] = []
    for index, tag in enumerate(unique.tolist()):
        if tag == OUTSIDE:
            continue
        match = _TAG.match(tag)
        if match is None or match.group("type") == OUTSIDE:
            position = int(np.flatnonzero(inverse == index)[0])
            origin = where[position] if where is not None else f"tag {position}"
            raise NerFormatError(
                f"{origin}: invalid NER tag {tag!r} (expected O, B-TYPE or I-TYPE; the type may not be 'O')"
            )
        unique_prefix[index] = _B if match.group("prefix") == "B" else _I
        if match.group("type") not in type_names:
            type_names.append(match.group("type"))
        unique_type[index] = type_names.index(match.group("type"))
    inverse = inverse.reshape(-1)
    return unique_prefix[inverse], unique_type[inverse], type_names


def chunk_boundaries(prefixes: np.ndarray, types: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """
    Entity boundaries with conlleval's semantics (module docstring).

    # Parameters

    prefixes : `np.ndarray`
        `[N]` prefixes, as :func:`parse_tags` returns them.
    types : `np.ndarray`
        `[N]` type ids, as :func:`parse_tags` returns them.

    # Returns

    `Tuple[np.ndarray, np.ndarray]`
        ``(starts, ends)``, both `[E]` for ``E`` entities (inclusive, ordered).
    """
    inside = prefixes != _O
    previous_inside = np.concatenate(([False], inside[:-1]))
    previous_type = np.concatenate(([-1], types[:-1]))
    begins = inside & ((prefixes == _B) | ~previous_inside | (previous_type != types))
    next_continues = np.concatenate((inside[1:] & ~begins[1:], [False]))
    ends = inside & ~next_continues
    return np.flatnonzero(begins), np.flatnonzero(ends)


def tags_to_entities(tags: Sequence[str], where: Optional[Sequence[str]] = None) -> List[Entity]:
    """
    The entities of one BIO tag sequence, IOB1 or IOB2, read as conlleval does (module
    docstring).

    # Parameters

    tags : `Sequence[str]`
        The tags of one sentence.
    where : `Sequence[str]`, optional (default = `None`)
        ``where[i]`` describes the origin of tag ``i`` for errors.

    # Returns

    `List[Entity]`
        ``(start, end, label)`` entities, inclusive word offsets, ordered by start.

    >>> tags_to_entities(["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG"])
    [(0, 1, 'PER'), (2, 2, 'PER'), (4, 4, 'LOC'), (5, 5, 'ORG')]
    """
    prefixes, types, names = parse_tags(tags, where)
    starts, ends = chunk_boundaries(prefixes, types)
    return [
        (start, end, names[type_id])
        for start, end, type_id in zip(starts.tolist(), ends.tolist(), types[starts].tolist())
    ]
