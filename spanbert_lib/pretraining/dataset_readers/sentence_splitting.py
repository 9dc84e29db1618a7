"""
Sentence boundaries (as character offsets) for the next-sentence-prediction reader.

``"spacy_sentencizer"`` uses spaCy's rule-based sentencizer on a blank English pipeline (no model
needed); ``"line"`` treats every line as a sentence (the input format of the original BERT data
script: one sentence per line).
"""

import re
from typing import TYPE_CHECKING, List, Optional

import numpy as np
from allennlp.common.checks import ConfigurationError

if TYPE_CHECKING:
    from spacy.language import Language

SENTENCE_SPLITTERS = ("spacy_sentencizer", "line")
_NEWLINE = re.compile("\n")


class SentenceSplitter:
    """
    Finds sentence starts in texts; the spaCy pipeline is made on first use and not pickled.

    # Parameters

    method : `str`, optional (default = `"spacy_sentencizer"`)
        One of :data:`SENTENCE_SPLITTERS`.
    batch_size : `int`, optional (default = `64`)
        Texts per ``nlp.pipe`` batch.
    """

    def __init__(self, method: str = "spacy_sentencizer", batch_size: int = 64) -> None:
        if method not in SENTENCE_SPLITTERS:
            raise ConfigurationError(f"sentence_splitter must be one of {SENTENCE_SPLITTERS}, got {method!r}")
        self.method = method
        self.batch_size = batch_size
        self._nlp: Optional["Language"] = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_nlp"] = None
        return state

    def sentence_starts(self, texts: List[str]) -> List[np.ndarray]:
        """
        Where the sentences of each text start.

        # Parameters

        texts : `List[str]`
            The texts.

        # Returns

        `List[np.ndarray]`
            For each text, `[S]` int64: the sorted character offsets where its `S` sentences start.
        """
        if self.method == "line":
            return [
                np.array([0] + [match.end() for match in _NEWLINE.finditer(text)], dtype=np.int64) for text in texts
            ]
        if self._nlp is None:
            import spacy

            self._nlp = spacy.blank("en")
            self._nlp.add_pipe("sentencizer")
        # Tokenizer + sentencizer only: memory grows linearly, the parser/NER length cap does not apply.
        self._nlp.max_length = max([self._nlp.max_length] + [len(text) + 1 for text in texts])
        return [
            np.array([sentence.start_char for sentence in doc.sents], dtype=np.int64).reshape(-1)
            for doc in self._nlp.pipe(texts, batch_size=self.batch_size)
        ]


def word_sentence_ids(word_start_chars: np.ndarray, sentence_starts: np.ndarray) -> np.ndarray:
    """
    Sentence index of each word: the last sentence starting at or before the word's first character
    (words before the first sentence start belong to sentence 0).

    # Parameters

    word_start_chars : `np.ndarray`
        `[W]` character offset where each of the `W` words starts.
    sentence_starts : `np.ndarray`
        `[S]` sorted character offsets where the `S` sentences start.

    # Returns

    `np.ndarray`
        `[W]` int64 sentence indices.
    """
    if len(sentence_starts) == 0:
        return np.zeros(len(word_start_chars), dtype=np.int64)
    ids = np.searchsorted(sentence_starts, word_start_chars, side="right") - 1
    return np.maximum(ids, 0).astype(np.int64)
