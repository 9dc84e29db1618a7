"""
Turning (passage, question) into the model input of every window, with a fast (Rust) Hugging
Face tokenizer whose character offsets map each wordpiece back to the ORIGINAL passage string
(case, accents and whitespace included, whatever the tokenizer's normaliser does).

Layout of a window (``question_first=False``, the SpanBERT paper's order; special tokens as
the tokenizer's pair template puts them, for BERT):
``[CLS] passage-window [SEP] question [SEP]`` with token type ids 0 ... 0 1 ... 1;
``question_first=True`` gives ``[CLS] question [SEP] passage-window [SEP]``.
Position 0 must be the classification token: it is the "no answer" position.

Shapes: `N` passage tokens, `W` windows of a question, `T` positions of the longest window.
"""

import dataclasses
import re
import unicodedata
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import tokenizers
from allennlp.common.checks import ConfigurationError
from allennlp.data.tokenizers import PretrainedTransformerTokenizer

from spanbert_lib.qa.dataset_readers.windows import max_context_mask, window_starts


@dataclasses.dataclass
class TokenizedPassage:
    """
    The ``N`` wordpieces of a passage.

    # Parameters

    ids : `np.ndarray`
        `[N]` wordpiece ids.
    offsets : `np.ndarray`
        `[N, 2]` ``[start, end)`` character offsets into the passage.
    word_boundaries : `np.ndarray`
        `[N, 2]` bool: whether each token may start (column 0) / end (column 1) an answer,
        i.e. it begins / ends a word of the tokenizer's pre-tokenizer (a ``##`` continuation
        piece begins no word; a piece followed by one ends none).
    """

    ids: np.ndarray
    offsets: np.ndarray
    word_boundaries: np.ndarray


@dataclasses.dataclass
class QuestionWindows:
    """
    The ``W`` windows of one question, each padded to the longest window ``T``.

    # Parameters

    input_ids : `np.ndarray`
        `[W, T]` int32 wordpiece ids.
    token_type_ids : `np.ndarray`
        `[W, T]` int32.
    attention_mask : `np.ndarray`
        `[W, T]` bool (False on padding).
    context_token_index : `np.ndarray`
        `[W, T]` int32, the passage token at each position, -1 outside the passage part.
    max_context_mask : `np.ndarray`
        `[W, T]` bool, positions whose passage token has its maximal context in this window
        (BERT's ``token_is_max_context``).
    starts : `List[int]`
        First passage token of each window.
    passage_offset : `int`
        Position of the first passage token in every window.
    """

    input_ids: np.ndarray
    token_type_ids: np.ndarray
    attention_mask: np.ndarray
    context_token_index: np.ndarray
    max_context_mask: np.ndarray
    starts: List[int]
    passage_offset: int

    @property
    def num_windows(self) -> int:
        return len(self.starts)

    def window_lengths(self) -> np.ndarray:
        """Number of passage tokens in each window, `[W]`."""
        return (self.context_token_index >= 0).sum(axis=1)

    def labels(self, token_span: Optional[Tuple[int, int]], ignore_windows_without_answer: bool) -> np.ndarray:
        """
        The (start, end) positions to train on in each window.

        # Parameters

        token_span : `Optional[Tuple[int, int]]`
            The answer's inclusive passage-token span; None: no answer.
        ignore_windows_without_answer : `bool`
            Label windows without the answer -1 (not trained on) instead of 0 ([CLS]).

        # Returns

        `np.ndarray`
            `[W, 2]` int64: the answer's positions in every window that contains all of
            ``token_span``, 0 ([CLS]) in the other windows and everywhere when ``token_span``
            is None, or -1 instead of 0 when ``ignore_windows_without_answer``.
        """
        fill = -1 if ignore_windows_without_answer else 0
        labels = np.full((self.num_windows, 2), fill, dtype=np.int64)
        if token_span is not None:
            first, last = token_span
            starts = np.asarray(self.starts)
            inside = (starts <= first) & (last < starts + self.window_lengths())
            labels[inside, 0] = first - starts[inside] + self.passage_offset
            labels[inside, 1] = last - starts[inside] + self.passage_offset
        return labels


class QuestionWindowTokenizer:
    """
    Tokenises passages and questions and lays out the windows of a question.

    # Parameters

    model_name : `str`
        A Hugging Face model directory (or hub name) with a FAST tokenizer.
    max_seq_length : `int`, optional (default = `512`)
        Tokens per window, special tokens and question included.
    doc_stride : `int`, optional (default = `128`)
        Passage tokens between window starts, or shared by consecutive windows, as
        ``stride_mode`` says.
    stride_mode : `str`, optional (default = `"step"`)
        ``"step"``: ``doc_stride`` passage tokens between the starts of consecutive windows
        (BERT/SpanBERT); ``"overlap"``: ``doc_stride`` passage tokens shared by consecutive
        windows (Hugging Face ``stride``). See ``windows.py``.
    max_query_length : `int`, optional (default = `64`)
        The question is cut to this many wordpieces.
    question_first : `bool`, optional (default = `False`)
        Put the question before the passage.
    tokenizer_kwargs : `Dict[str, Any]`, optional (default = `None`)
        Extra arguments of the tokenizer.
    """

    def __init__(
        self,
        model_name: str,
        max_seq_length: int = 512,
        doc_stride: int = 128,
        stride_mode: str = "step",
        max_query_length: int = 64,
        question_first: bool = False,
        tokenizer_kwargs: Optional[Dict[str, Any]] = None,
    ) -> None:
        if stride_mode not in ("step", "overlap"):
            raise ConfigurationError(f"stride_mode must be 'step' or 'overlap', got {stride_mode!r}")
        allennlp_tokenizer = PretrainedTransformerTokenizer(
            model_name, add_special_tokens=False, tokenizer_kwargs=tokenizer_kwargs
        )
        hf_tokenizer = allennlp_tokenizer.tokenizer
        if not getattr(hf_tokenizer, "is_fast", False):
            raise ConfigurationError(
                f"{model_name}: the QA readers need a fast tokenizer (character offsets); "
                f"got {type(hf_tokenizer).__name__}"
            )
        # A private copy of the Rust tokenizer: no truncation/padding, and special-token strings in the
        # text ("[SEP]" in an MRQA passage) are tokenised as text, as BERT's original tokenizer does.
        self._tokenizer = tokenizers.Tokenizer.from_str(hf_tokenizer.backend_tokenizer.to_str())
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._tokenizer.encode_special_tokens = True
        self.pad_token_id = hf_tokenizer.pad_token_id if hf_tokenizer.pad_token_id is not None else 0

        start, mid, end = (
            allennlp_tokenizer.sequence_pair_start_tokens,
            allennlp_tokenizer.sequence_pair_mid_tokens,
            allennlp_tokenizer.sequence_pair_end_tokens,
        )
        if not start or start[0].text_id != hf_tokenizer.cls_token_id:
            raise ConfigurationError(
                f"{model_name}: the pair template must start with the classification token "
                "(it is the no-answer position 0)"
            )
        self._start_ids = [t.text_id for t in start]
        self._mid_ids = [t.text_id for t in mid]
        self._end_ids = [t.text_id for t in end]
        first_type = allennlp_tokenizer.sequence_pair_first_token_type_id
        second_type = allennlp_tokenizer.sequence_pair_second_token_type_id
        assert first_type is not None and second_type is not None  # allennlp reads both off a dummy pair
        self._first_type: int = first_type
        self._second_type: int = second_type
        self.num_special_tokens = len(self._start_ids) + len(self._mid_ids) + len(self._end_ids)

        self.max_seq_length = max_seq_length
        self.max_query_length = max_query_length
        self.question_first = question_first
        self.doc_stride = doc_stride
        self.stride_mode = stride_mode
        smallest_capacity = max_seq_length - max_query_length - self.num_special_tokens
        if smallest_capacity <= 0:
            raise ConfigurationError(
                f"max_seq_length {max_seq_length} leaves no room for the passage after a "
                f"question of max_query_length {max_query_length} and "
                f"{self.num_special_tokens} special tokens"
            )
        if doc_stride <= 0 or (stride_mode == "overlap" and doc_stride >= smallest_capacity):
            raise ConfigurationError(
                f"doc_stride {doc_stride} ({stride_mode}) must be positive and, as an overlap, "
                f"smaller than the smallest window capacity {smallest_capacity}"
            )

    def tokenize_passage(self, passage: str) -> TokenizedPassage:
        """
        Wordpieces of ``passage`` with exact ``[start, end)`` character offsets into it.

        # Parameters

        passage : `str`
            The passage text.

        # Returns

        `TokenizedPassage`
            Its ``N`` wordpieces, offsets and word boundaries.
        """
        encoding = self._tokenizer.encode(passage, add_special_tokens=False)
        offsets = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2)
        return TokenizedPassage(
            np.asarray(encoding.ids, dtype=np.int64),
            _absorb_combining_marks(passage, offsets),
            self._word_boundaries(encoding.word_ids),
        )

    def _word_boundaries(self, word_ids: List[Optional[int]]) -> np.ndarray:
        """`[N, 2]`: tokens that start / end a word (see :class:`TokenizedPassage`)."""
        boundaries = np.ones((len(word_ids), 2), dtype=bool)
        if self._tokenizer.pre_tokenizer is None or not word_ids:
            return boundaries  # no notion of words: every token is one
        words = np.asarray([-1 if word is None else word for word in word_ids], dtype=np.int64)
        same_as_previous = words[1:] == words[:-1]
        boundaries[1:, 0] = ~same_as_previous
        boundaries[:-1, 1] = ~same_as_previous
        return boundaries

    def tokenize_question(self, question: str) -> Tuple[List[int], bool]:
        """
        The question's wordpieces.

        # Parameters

        question : `str`
            The question text.

        # Returns

        `Tuple[List[int], bool]`
            ``(wordpiece ids cut to max_query_length, whether it was cut)``.
        """
        ids = self._tokenizer.encode(question, add_special_tokens=False).ids
        return ids[: self.max_query_length], len(ids) > self.max_query_length

    def windows(self, passage: TokenizedPassage, question_ids: List[int]) -> QuestionWindows:
        """
        Every window of the passage for one question.

        # Parameters

        passage : `TokenizedPassage`
            The tokenised passage.
        question_ids : `List[int]`
            The question's wordpiece ids, already truncated.

        # Returns

        `QuestionWindows`
            The ``W`` windows, padded to the longest.
        """
        num_tokens = len(passage.ids)
        capacity = self.max_seq_length - len(question_ids) - self.num_special_tokens
        step = self.doc_stride if self.stride_mode == "step" else capacity - self.doc_stride
        starts = window_starts(num_tokens, capacity, step)
        lengths = [min(capacity, num_tokens - s) for s in starts]
        max_context = max_context_mask(starts, capacity, num_tokens)

        first_len = len(question_ids) if self.question_first else None
        passage_offset = len(self._start_ids) + (len(question_ids) + len(self._mid_ids) if self.question_first else 0)
        width = self.num_special_tokens + len(question_ids) + max(lengths)
        num_windows = len(starts)
        input_ids = np.full((num_windows, width), self.pad_token_id, dtype=np.int32)
        token_type_ids = np.zeros((num_windows, width), dtype=np.int32)
        attention_mask = np.zeros((num_windows, width), dtype=bool)
        context_token_index = np.full((num_windows, width), -1, dtype=np.int32)
        max_context_positions = np.zeros((num_windows, width), dtype=bool)
        question = np.asarray(question_ids, dtype=np.int64)
        for w, (start, length) in enumerate(zip(starts, lengths)):
            chunk = passage.ids[start : start + length]
            first, second = (question, chunk) if first_len is not None else (chunk, question)
            pieces = [self._start_ids, first, self._mid_ids, second, self._end_ids]
            row = np.concatenate([np.asarray(p, dtype=np.int64) for p in pieces])
            input_ids[w, : len(row)] = row
            attention_mask[w, : len(row)] = True
            second_begins = len(self._start_ids) + len(first) + len(self._mid_ids)
            token_type_ids[w, :second_begins] = self._first_type
            token_type_ids[w, second_begins : len(row)] = self._second_type
            context_token_index[w, passage_offset : passage_offset + length] = np.arange(start, start + length)
            max_context_positions[w, passage_offset : passage_offset + length] = max_context[w, :length]
        return QuestionWindows(
            input_ids,
            token_type_ids,
            attention_mask,
            context_token_index,
            max_context_positions,
            starts,
            passage_offset,
        )


def _absorb_combining_marks(text: str, offsets: np.ndarray) -> np.ndarray:
    """
    Extends a token's end over the combining marks right after it that no token covers
    (normalisers that strip accents drop the mark of a decomposed "e" + U+0301 from the token's
    span), so that the passage text of a span keeps its accents. Looks at non-ASCII characters only.
    """
    if offsets.size == 0 or text.isascii():
        return offsets
    offsets = offsets.copy()
    for match in _NON_ASCII.finditer(text):
        position = match.start()
        if not unicodedata.category(text[position]).startswith("M"):
            continue
        token = int(np.searchsorted(offsets[:, 0], position, side="right")) - 1
        if token >= 0 and offsets[token, 1] == position:
            offsets[token, 1] = position + 1
    return offsets


_NON_ASCII = re.compile(r"[^\x00-\x7f]")
