"""
A spaCy ``Doc`` as the predictors' input (sentences of words with character offsets), and
character spans back onto the Doc's tokens.

Sentences are the Doc's own when a component before this one set them (``parser``, ``senter`` or
``sentencizer``); otherwise they are split here with spaCy's rule-based sentencizer (punctuation),
without writing the boundaries into the Doc. Whitespace tokens are not words.
"""

from dataclasses import dataclass
from typing import List, Optional, Tuple

from spacy.pipeline import Sentencizer
from spacy.tokens import Doc, Span, Token

from spanbert_lib.common.predictors.text_views import TokenizedText

_SENTENCIZER = Sentencizer()


@dataclass
class DocWords:
    """
    The words of a Doc as a predictor takes them.

    # Parameters

    tokenized : `TokenizedText`
        Sentences of words; the offsets are characters of ``doc.text``.
    tokens : `List[Token]`
        ``tokens[w]``: the Doc token of word ``w`` (words counted over the whole Doc).
    """

    tokenized: TokenizedText
    tokens: List[Token]

    def char_span(self, first_word: int, last_word: int) -> tuple:
        """``[start, end)`` characters of the words ``first_word .. last_word`` (inclusive)."""
        return self.tokenized.offsets[first_word][0], self.tokenized.offsets[last_word][1]


def sentences_of(doc: Doc) -> List[Span]:
    """The Doc's sentences, or the rule-based sentencizer's when it has none."""
    if doc.has_annotation("SENT_START"):
        return list(doc.sents)
    starts = _SENTENCIZER.predict([doc])[0]
    boundaries = [index for index, start in enumerate(starts) if start and index > 0] + [len(doc)]
    sentences, first = [], 0
    for end in boundaries:
        sentences.append(doc[first:end])
        first = end
    return sentences


def doc_words(doc: Doc) -> DocWords:
    """The Doc's sentences of (non-whitespace) tokens, with their character offsets."""
    sentences: List[List[str]] = []
    offsets: List[Tuple[int, int]] = []
    tokens: List[Token] = []
    for sentence in sentences_of(doc):
        words = [token for token in sentence if not token.is_space]
        if words:
            sentences.append([token.text for token in words])
            offsets.extend((token.idx, token.idx + len(token.text)) for token in words)
            tokens.extend(words)
    return DocWords(TokenizedText(doc.text, sentences, offsets), tokens)


def token_span(doc: Doc, start: int, end: int, label: str = "") -> Optional[Span]:
    """
    The Span of the Doc's tokens that covers the characters ``[start, end)``: exactly those tokens
    when ``start`` and ``end`` fall on token boundaries, else the tokens the characters touch (a
    model word inside a longer Doc token gives that whole token). None for an empty range.
    """
    return doc.char_span(start, end, label=label, alignment_mode="expand")
