"""Speaker and genre ids, the metadata features of Lee et al. (2017) kept by Joshi et al."""

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

ONTONOTES_GENRES = ("bc", "bn", "mz", "nw", "pt", "tc", "wb")
"""The OntoNotes 5.0 genres (first component of a doc key such as ``bc/cctv/00/cctv_0000``)."""

NO_SPEAKER_ID = 0
NO_SPEAKER_VALUES = frozenset({"", "-", "_"})
"""Speaker cells meaning "no speaker given" (OntoNotes ``-``, LitBank ``_``)."""


def speaker_ids(speakers: Sequence[Sequence[str]]) -> Tuple[np.ndarray, List[str]]:
    """
    Speaker ids of a document's words. Ids are local to a document: only equality between two
    words' ids is meaningful ("same speaker").

    # Parameters

    speakers : `Sequence[Sequence[str]]`
        The speaker of each of the document's ``W`` words, one list per sentence.

    # Returns

    `Tuple[np.ndarray, List[str]]`
        ``(ids, names)``: ``ids`` `[W]` int64, numbering the document's speakers ``1, 2, ...``
        in order of first appearance, ``NO_SPEAKER_ID`` (0) where none is given;
        ``names[i - 1]`` is speaker ``i``.
    """
    flat = np.asarray([speaker for sentence in speakers for speaker in sentence], dtype=object)
    ids = np.zeros(len(flat), dtype=np.int64)
    known = np.flatnonzero(~np.isin(flat, list(NO_SPEAKER_VALUES)))
    if known.size == 0:
        return ids, []
    names, first, inverse = np.unique(flat[known].astype(str), return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(1, len(names) + 1)
    ids[known] = rank[inverse.reshape(-1)]
    return ids, [str(names[i]) for i in order]


class GenreIds:
    """
    ``genres[i]`` -> ``i``; any other genre (or None) -> ``unknown_id == len(genres)``, so a
    model needs ``num_genres == len(genres) + 1`` genre embeddings.

    # Parameters

    genres : `Sequence[str]`, optional (default = `ONTONOTES_GENRES`)
        The known genres, without duplicates.
    """

    def __init__(self, genres: Sequence[str] = ONTONOTES_GENRES) -> None:
        if len(set(genres)) != len(genres):
            raise ValueError(f"duplicate genres in {list(genres)}")
        self.genres = tuple(genres)
        self._ids: Dict[str, int] = {genre: index for index, genre in enumerate(self.genres)}

    @property
    def unknown_id(self) -> int:
        return len(self.genres)

    @property
    def num_genres(self) -> int:
        return len(self.genres) + 1

    def __call__(self, genre: Optional[str]) -> int:
        return self._ids.get(genre, self.unknown_id) if genre is not None else self.unknown_id
