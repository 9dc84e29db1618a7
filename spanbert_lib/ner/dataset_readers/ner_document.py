"""
A document of NER sentences with gold entities, as the format parsers (CoNLL-2003, LitBank)
produce it, and the merging of several BIO layers (nested NER) into one set of entities.
"""

from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

import numpy as np

from spanbert_lib.ner.dataset_readers.bio_tags import Entity, chunk_boundaries, parse_tags


@dataclass
class LayeredEntities:
    """The entities of one sentence from all its BIO layers."""

    entities: List[Entity]
    """Unique spans, ordered by (start, end); a span given by several layers keeps the label of
    the first (lowest-numbered) layer."""
    relabelled: List[Tuple[Entity, str]] = field(default_factory=list)
    """``(kept entity, dropped label)`` for each span a later layer gave a different label."""
    duplicates: int = 0
    """Spans a later layer repeated with the same label (dropped)."""


def merge_tag_layers(layers: Sequence[Sequence[str]], where: Optional[Sequence[str]] = None) -> LayeredEntities:
    """
    Entities of a sentence annotated with several BIO layers, each chunked as conlleval does
    (:mod:`~spanbert_lib.ner.dataset_readers.bio_tags`).

    # Parameters

    layers : `Sequence[Sequence[str]]`
        ``layers[k][i]``: tag of word ``i`` in layer ``k``; layer 0 first.
    where : `Sequence[str]`, optional (default = `None`)
        ``where[i]`` names the origin of word ``i`` for errors.

    # Returns

    `LayeredEntities`
        The merged entities and what the merge dropped.
    """
    rows: List[Tuple[int, int, int, str]] = []  # (start, end, layer, label)
    for layer_index, tags in enumerate(layers):
        prefixes, types, names = parse_tags(tags, where)
        starts, ends = chunk_boundaries(prefixes, types)
        rows.extend(
            (start, end, layer_index, names[type_id])
            for start, end, type_id in zip(starts.tolist(), ends.tolist(), types[starts].tolist())
        )
    if not rows:
        return LayeredEntities([])
    spans = np.asarray([(start, end, layer) for start, end, layer, _ in rows], dtype=np.int64)
    order = np.lexsort((spans[:, 2], spans[:, 1], spans[:, 0]))  # by start, end, then layer
    spans = spans[order]
    labels = [rows[i][3] for i in order.tolist()]
    first = np.ones(len(spans), dtype=bool)
    first[1:] = (spans[1:, 0] != spans[:-1, 0]) | (spans[1:, 1] != spans[:-1, 1])
    entities: List[Entity] = []
    relabelled: List[Tuple[Entity, str]] = []
    duplicates = 0
    for (start, end, _), label, is_first in zip(spans.tolist(), labels, first.tolist()):
        if is_first:
            entities.append((start, end, label))
        elif label != entities[-1][2]:
            relabelled.append((entities[-1], label))
        else:
            duplicates += 1
    return LayeredEntities(entities, relabelled, duplicates)


@dataclass
class NerDocument:
    """
    Sentences of one document.

    # Parameters

    doc_id : `str`
        The document's id.
    path : `str`
        The file it was read from.
    sentences : `List[List[str]]`
        Its sentences of words.
    entities : `Optional[List[List[Entity]]]`
        ``entities[i]`` are the gold entities of sentence ``i`` in sentence-local inclusive
        word offsets (``None``: no gold annotation).
    """

    doc_id: str
    path: str
    sentences: List[List[str]]
    entities: Optional[List[List[Entity]]]
    sentence_lines: List[int] = field(default_factory=list)
    """Line number of the first word of each sentence (for messages)."""
    relabelled: int = 0
    """Spans that nested layers gave different labels (the first layer's label is kept)."""
    duplicates: int = 0
    """Spans repeated with the same label by several layers."""

    @property
    def num_words(self) -> int:
        return sum(len(sentence) for sentence in self.sentences)

    def describe(self, sentence_index: int) -> str:
        line = self.sentence_lines[sentence_index] if sentence_index < len(self.sentence_lines) else "?"
        return f"{self.path}:{line} (document {self.doc_id}, sentence {sentence_index})"


class DocumentBuilder:
    """
    Collects token lines (word, one tag per layer) into sentences and a :class:`NerDocument`.

    # Parameters

    doc_id : `str`
        The document's id.
    path : `str`
        The file it is read from (for messages).
    """

    def __init__(self, doc_id: str, path: str) -> None:
        self.document = NerDocument(doc_id=doc_id, path=path, sentences=[], entities=[])
        self._words: List[str] = []
        self._tags: List[Sequence[str]] = []
        self._lines: List[int] = []

    def add_token(self, word: str, tags: Sequence[str], line: int) -> None:
        self._words.append(word)
        self._tags.append(tags)
        self._lines.append(line)

    def end_sentence(self) -> None:
        """Closes the current sentence (nothing happens if it is empty)."""
        if not self._words:
            return
        where = [f"{self.document.path}:{line}" for line in self._lines]
        merged = merge_tag_layers(list(zip(*self._tags)), where)
        document = self.document
        assert document.entities is not None  # the builder starts it as []
        document.sentences.append(self._words)
        document.entities.append(merged.entities)
        document.sentence_lines.append(self._lines[0])
        document.relabelled += len(merged.relabelled)
        document.duplicates += merged.duplicates
        self._words, self._tags, self._lines = [], [], []

    def build(self) -> Optional[NerDocument]:
        """The document (the open sentence closed), or None if it has no sentence."""
        self.end_sentence()
        return self.document if self.document.sentences else None
