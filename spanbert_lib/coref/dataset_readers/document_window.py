"""
Restricting a document to a contiguous range of words (the training window of Joshi et al.:
a random run of ``max_training_segments`` segments of a long document).
"""

from dataclasses import dataclass, field
from typing import List, Optional, Sequence

import numpy as np

from spanbert_lib.common.span_types import Span


@dataclass
class DocumentWindow:
    """
    Words ``start <= w < end`` of a document.

    # Parameters

    start : `int`
        First word of the window.
    end : `int`
        Word after the window's last.
    sentences : `List[List[str]]`
        The pieces of the document's sentences inside the window (a sentence cut by the window
        edge keeps its inner part).
    speakers : `List[List[str]]`
        The speakers of those words, in the same pieces.
    clusters : `Optional[List[List[Span]]]`
        The gold clusters restricted to the window and shifted by ``-start`` (mentions crossing
        an edge are dropped and listed in ``cut_mentions``; clusters left empty are dropped);
        None for a document without gold clusters.
    """

    start: int
    end: int
    sentences: List[List[str]]
    speakers: List[List[str]]
    clusters: Optional[List[List[Span]]]
    cut_mentions: List[Span] = field(default_factory=list)
    """Gold mentions (document offsets) that lie partly inside the window."""


def _slice_sentences(sentences: Sequence[Sequence[str]], start: int, end: int) -> List[List[str]]:
    out, offset = [], 0
    for sentence in sentences:
        lo, hi = max(start, offset), min(end, offset + len(sentence))
        if lo < hi:
            out.append(list(sentence[lo - offset : hi - offset]))
        offset += len(sentence)
    return out


def document_window(
    sentences: Sequence[Sequence[str]],
    speakers: Sequence[Sequence[str]],
    clusters: Optional[Sequence[Sequence[Span]]],
    start: int,
    end: int,
) -> DocumentWindow:
    """
    The window of words ``[start, end)`` of a document.

    # Parameters

    sentences : `Sequence[Sequence[str]]`
        The document's sentences of words.
    speakers : `Sequence[Sequence[str]]`
        The speaker of each word, parallel to ``sentences``.
    clusters : `Optional[Sequence[Sequence[Span]]]`
        Gold clusters of inclusive word spans, or None.
    start : `int`
        First word of the window.
    end : `int`
        Word after the window's last (at most the number of words).

    # Returns

    `DocumentWindow`
        See :class:`DocumentWindow`.
    """
    num_words = sum(len(sentence) for sentence in sentences)
    if not 0 <= start < end <= num_words:
        raise ValueError(f"window [{start}, {end}) is empty or outside the document's {num_words} words")
    windowed_clusters: Optional[List[List[Span]]] = None
    cut: List[Span] = []
    if clusters is not None:
        windowed_clusters = []
        for cluster in clusters:
            mentions = np.asarray(cluster, dtype=np.int64).reshape(-1, 2)
            inside = (mentions[:, 0] >= start) & (mentions[:, 1] < end)
            partly = ~inside & (mentions[:, 1] >= start) & (mentions[:, 0] < end)
            cut.extend((int(s), int(e)) for s, e in mentions[partly])
            if inside.any():
                windowed_clusters.append([(int(s) - start, int(e) - start) for s, e in mentions[inside]])
    return DocumentWindow(
        start,
        end,
        _slice_sentences(sentences, start, end),
        _slice_sentences(speakers, start, end),
        windowed_clusters,
        cut,
    )
