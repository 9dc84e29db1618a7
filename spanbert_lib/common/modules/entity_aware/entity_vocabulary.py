"""
Entity ids of the entity-aware encoder: six special entities with fixed ids, then (optionally)
a vocabulary of real entities.

===========  ==  ==============================================================================
name         id  use
===========  ==  ==============================================================================
``[PAD]``    0   padding of the entity axis (``entity_mask`` False there)
``[UNK]``    1   a real entity that is not in the vocabulary
``[MASK]``   2   an entity to be predicted / represented from its context only; task models
                 give one ``[MASK]`` entity per mention or candidate span (span NER, typing)
``[MASK2]``  3   a second mask entity, for tasks that need two distinguishable mentions
``[HEAD]``   4   relation classification: the head (subject) entity
``[TAIL]``   5   relation classification: the tail (object) entity
===========  ==  ==============================================================================

Real entities (e.g. Wikipedia titles, for entity-MLM pre-training) get ids 6, 7, ... in the
order of their file. A task model that only uses the specials needs no file at all: the
encoder's ``entity_vocab_size`` defaults to ``NUM_SPECIAL_ENTITIES``.
"""

import os
from typing import Dict, Iterable, Iterator, List, Tuple, Union

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.common.text_files import read_lines

ENTITY_PAD = 0
ENTITY_UNK = 1
ENTITY_MASK = 2
ENTITY_MASK2 = 3
ENTITY_HEAD = 4
ENTITY_TAIL = 5

SPECIAL_ENTITIES: Tuple[str, ...] = ("[PAD]", "[UNK]", "[MASK]", "[MASK2]", "[HEAD]", "[TAIL]")
NUM_SPECIAL_ENTITIES = len(SPECIAL_ENTITIES)


class EntityVocabulary:
    """
    Maps entity names to ids: the ``SPECIAL_ENTITIES`` at their fixed ids 0..5, then the real
    entities in the given order (ids from ``NUM_SPECIAL_ENTITIES``).

    ``len(vocabulary)`` counts the specials too, so it is the ``entity_vocab_size`` of the encoder.
    ``index(name)`` gives ``ENTITY_UNK`` for an unknown name.

    # Parameters

    entities : `Iterable[str]`, optional (default = `()`)
        The real entities, in id order.
    """

    def __init__(self, entities: Iterable[str] = ()) -> None:
        self._names: List[str] = list(SPECIAL_ENTITIES)
        self._ids: Dict[str, int] = {name: i for i, name in enumerate(SPECIAL_ENTITIES)}
        for name in entities:
            self.add(name)

    def add(self, name: str) -> int:
        """
        Adds a real entity at the next id.

        # Parameters

        name : `str`
            Non-empty, without surrounding spaces or newlines.

        # Returns

        `int`
            Its id (the id it has if already present).
        """
        if not name or name != name.strip() or "\n" in name:
            raise ValueError(f"entity names must be non-empty, without surrounding spaces or newlines: {name!r}")
        if name not in self._ids:
            self._ids[name] = len(self._names)
            self._names.append(name)
        return self._ids[name]

    @classmethod
    def from_file(cls, path: Union[str, os.PathLike]) -> "EntityVocabulary":
        """
        Reads a vocabulary written by :meth:`to_file`. Empty lines and lines naming a special
        entity (e.g. a file written with the specials first) are skipped; a repeated name is an
        error that names the file and both lines.

        # Parameters

        path : `Union[str, os.PathLike]`
            One real entity name per line (UTF-8), ids in file order from
            ``NUM_SPECIAL_ENTITIES``.

        # Returns

        `EntityVocabulary`
            The vocabulary.
        """
        vocabulary = cls()
        seen: Dict[str, int] = {}
        for line_number, line in read_lines(path):  # invalid UTF-8: an error naming file, line, byte offset
            name = line.strip()
            if not name or name in SPECIAL_ENTITIES:
                continue
            if name in seen:
                raise UserInputError(f"entity {name!r} repeats line {seen[name]}", path=path, line=line_number)
            seen[name] = line_number
            vocabulary.add(name)
        return vocabulary

    def to_file(self, path: Union[str, os.PathLike]) -> None:
        """
        Writes the real entities, one a line (``from_file`` reads it back with the same ids).

        # Parameters

        path : `Union[str, os.PathLike]`
            The file to write.
        """
        with open(path, "w", encoding="utf-8") as handle:
            for name in self._names[NUM_SPECIAL_ENTITIES:]:
                handle.write(name + "\n")

    def index(self, name: str) -> int:
        return self._ids.get(name, ENTITY_UNK)

    def name(self, entity_id: int) -> str:
        return self._names[entity_id]

    def __contains__(self, name: object) -> bool:
        return name in self._ids

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __repr__(self) -> str:
        return f"EntityVocabulary({len(self) - NUM_SPECIAL_ENTITIES} entities + {NUM_SPECIAL_ENTITIES} specials)"
