"""
The ``segmented_wordpiece`` token indexer: a whole document as independent transformer
segments that end at sentence ends (see :mod:`.segmentation`), for the
``segmented_transformer`` token embedder.

allennlp's ``PretrainedTransformerIndexer(max_length=...)`` folds a long text into windows
without regard to sentence or word boundaries; this indexer cuts at sentence ends first, word
ends second, and keeps the maps between words and pieces.
"""

import logging
from typing import Any, Dict, List, Optional, Sequence, cast

import numpy as np
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data.token_indexers import TokenIndexer
from allennlp.data.tokenizers import Token
from allennlp.data.vocabulary import Vocabulary

from spanbert_lib.common.token_indexers.segmentation import (
    MIN_SEGMENT_LEN,
    SegmentedDocument,
    segment_document,
    segment_words,
)

logger = logging.getLogger(__name__)

IndexedDocument = Dict[str, Any]


class SentenceToken(Token):
    """A word :class:`Token` that knows the index of its sentence in the document."""

    __slots__ = ["sentence_id"]

    def __init__(self, text: str, sentence_id: int, **kwargs) -> None:
        super().__init__(text, **kwargs)
        self.sentence_id = sentence_id


def sentence_tokens(sentences: Sequence[Sequence[str]]) -> List[SentenceToken]:
    """The words of ``sentences`` as tokens carrying their sentence index."""
    return [SentenceToken(word, index) for index, sentence in enumerate(sentences) for word in sentence]


@TokenIndexer.register("segmented_wordpiece")
class SegmentedWordpieceIndexer(TokenIndexer):
    """
    Indexes a ``TextField`` of WORDS (one whole document) as non-overlapping segments of at
    most ``max_segment_len`` wordpieces each, ``[CLS]`` and ``[SEP]`` included.

    Sentence boundaries come from the tokens: make them with :func:`sentence_tokens` (each a
    :class:`SentenceToken` with a ``sentence_id``; a sentence ends where the id changes). If no
    token has a ``sentence_id`` the whole field is one sentence (segments then end at word
    ends).

    Tensors (shapes for a batch of ``B`` documents; ``S``, ``L``, ``P``, ``W`` are the largest
    number of segments, segment length incl. specials, pieces and words in the batch; ``L`` is
    at most ``max_segment_len``). Pieces are indexed in the FLATTENED layout: the document's
    wordpieces in order, without ``[CLS]``/``[SEP]``/padding.

    - ``input_ids`` `[B, S, L]` long: ``[CLS] pieces [SEP] [PAD]...`` per segment;
    - ``segment_mask`` `[B, S, L]` bool: True on ``[CLS]``, pieces and ``[SEP]``;
    - ``piece_positions`` `[B, P]` long: where each piece sits in ``input_ids.view(B, S*L)``
      (0 at padding);
    - ``mask`` `[B, P]` bool: real pieces (what ``util.get_text_field_mask`` returns - the
      embedder's output is per piece);
    - ``piece_word_ids`` / ``piece_sentence_ids`` / ``piece_segment_ids`` `[B, P]` long:
      word, sentence (``0, 1, ...`` in document order) and segment of each piece, -1 at padding;
    - ``word_starts`` / ``word_ends`` `[B, W]` long: first / last piece of each word
      (inclusive, flattened layout; 0 at padding);
    - ``word_mask`` `[B, W]` bool: real words.

    # Parameters

    model_name : `str`
        Directory (or cached Hugging Face name) of a fast tokenizer.
    max_segment_len : `int`, optional (default = `384`)
        Segment length including `[CLS]` and `[SEP]` (Joshi et al. use 128-512); at most the
        model's maximum input length.
    tokenizer_kwargs : `Dict[str, Any]`, optional
        Extra arguments for `AutoTokenizer.from_pretrained` (byte-level BPE tokenizers need
        `{"add_prefix_space": true}` for pre-split words).
    """

    def __init__(
        self, model_name: str, max_segment_len: int = 384, tokenizer_kwargs: Optional[Dict[str, Any]] = None, **kwargs
    ) -> None:
        super().__init__(**kwargs)
        from allennlp.common import cached_transformers

        self._model_name = model_name
        self._tokenizer_kwargs = dict(tokenizer_kwargs or {})
        self._tokenizer = cached_transformers.get_tokenizer(model_name, **(tokenizer_kwargs or {}))
        if not getattr(self._tokenizer, "is_fast", False):
            raise ConfigurationError(
                f"segmented_wordpiece needs a fast tokenizer (word_ids); "
                f"{model_name} loads {type(self._tokenizer).__name__}"
            )
        model_max = getattr(self._tokenizer, "model_max_length", None)
        if max_segment_len < MIN_SEGMENT_LEN or (
            model_max is not None and model_max < 10**6 and max_segment_len > model_max
        ):
            raise ConfigurationError(
                f"max_segment_len must be between {MIN_SEGMENT_LEN} and the "
                f"model's maximum length ({model_max}), got {max_segment_len}"
            )
        self._max_segment_len = max_segment_len
        self.num_cut_words = 0
        """Words split over two segments (longer than a segment) since this indexer was made."""

    @property
    def tokenizer(self):
        return self._tokenizer

    @property
    def max_segment_len(self) -> int:
        return self._max_segment_len

    def segment(self, sentences: Sequence[Sequence[str]]) -> SegmentedDocument:
        """The segmentation of a document given as sentences of words."""
        return self._counted(segment_document(sentences, self._tokenizer, self._max_segment_len))

    def segment_tokens(self, tokens: Sequence[Token]) -> SegmentedDocument:
        """The segmentation of a field's tokens (see the class docstring for sentence ids)."""
        sentence_ids: List[Optional[int]] = [getattr(token, "sentence_id", None) for token in tokens]
        missing = sum(sentence_id is None for sentence_id in sentence_ids)
        if missing == len(tokens):
            sentence_ids = [0] * len(tokens)
        elif missing:
            first = next(i for i, sentence_id in enumerate(sentence_ids) if sentence_id is None)
            raise ValueError(
                f"{missing} of {len(tokens)} tokens have no sentence_id (first: "
                f"token {first}, {tokens[first].text!r}); make all tokens with "
                f"sentence_tokens() or none"
            )
        words = [token.ensure_text() for token in tokens]
        known_ids = cast(List[int], sentence_ids)  # none is None past the check above
        return self._counted(segment_words(words, known_ids, self._tokenizer, self._max_segment_len))

    def _counted(self, document: SegmentedDocument) -> SegmentedDocument:
        if document.num_cut_words:
            self.num_cut_words += document.num_cut_words
            logger.warning(
                "%d word(s) have more wordpieces than a segment of %d holds and were split over segments (%d so far)",
                document.num_cut_words,
                self._max_segment_len,
                self.num_cut_words,
            )
        return document

    def count_vocab_items(self, token: Token, counter: Dict[str, Dict[str, int]]):
        pass  # the transformer's own vocabulary is used

    def tokens_to_indices(self, tokens: List[Token], vocabulary: Vocabulary) -> IndexedDocument:
        return {"document": self.segment_tokens(tokens)}

    def get_empty_token_list(self) -> IndexedDocument:
        return {"document": segment_words([], [], self._tokenizer, self._max_segment_len)}

    def get_padding_lengths(self, indexed_tokens: IndexedDocument) -> Dict[str, int]:
        document: SegmentedDocument = indexed_tokens["document"]
        return {
            "num_segments": document.num_segments,
            "segment_length": document.longest_segment,
            "num_pieces": document.num_pieces,
            "num_words": document.num_words,
        }

    def as_padded_tensor_dict(
        self, tokens: IndexedDocument, padding_lengths: Dict[str, int]
    ) -> Dict[str, torch.Tensor]:
        document: SegmentedDocument = tokens["document"]
        num_segments = padding_lengths["num_segments"]
        # a batch whose documents are all empty still gets one column
        segment_length = max(padding_lengths["segment_length"], 1)
        num_pieces, num_words = padding_lengths["num_pieces"], padding_lengths["num_words"]
        input_ids, segment_mask = document.segment_input_ids(segment_length, num_segments)

        def padded(values: np.ndarray, length: int, fill: int) -> torch.Tensor:
            out = np.full(length, fill, dtype=np.int64)
            out[: len(values)] = values
            return torch.from_numpy(out)

        positions = document.piece_positions(segment_length) if document.num_segments else np.zeros(0, dtype=np.int64)
        return {
            "input_ids": torch.from_numpy(input_ids),
            "segment_mask": torch.from_numpy(segment_mask),
            "piece_positions": padded(positions, num_pieces, 0),
            "mask": torch.arange(num_pieces) < document.num_pieces,
            "piece_word_ids": padded(document.piece_word_ids, num_pieces, -1),
            "piece_sentence_ids": padded(document.piece_sentence_ids, num_pieces, -1),
            "piece_segment_ids": padded(document.piece_segment_ids, num_pieces, -1),
            "word_starts": padded(document.word_starts, num_words, 0),
            "word_ends": padded(document.word_ends, num_words, 0),
            "word_mask": torch.arange(num_words) < document.num_words,
        }

    def __eq__(self, other) -> bool:
        if isinstance(other, SegmentedWordpieceIndexer):
            return (self._model_name, self._max_segment_len, self._tokenizer_kwargs) == (
                other._model_name,
                other._max_segment_len,
                other._tokenizer_kwargs,
            )
        return NotImplemented
