"""
Cutting a long document into non-overlapping transformer segments (Joshi et al. 2019,
"BERT for Coreference Resolution", section 2: "independent" variant).

A document is tokenised into wordpieces once, then cut greedily into segments of at most
``max_segment_len - 2`` pieces (``[CLS]`` and ``[SEP]`` are added to every segment). Starting
where the previous segment ended, a segment runs to the LAST sentence end that still fits; if
not even the current sentence fits, to the last word end that fits; only when a single word
has more pieces than a segment holds is the cut made inside that word (counted in
``SegmentedDocument.num_cut_words``). Each segment is then encoded independently.

Index spaces used throughout:

- word ``w`` in ``[0, W)``: the document's words, in order;
- piece ``p`` in ``[0, P)``: the document's wordpieces, in order, WITHOUT specials or padding
  (the "flattened" layout: segments concatenated, ``[CLS]``/``[SEP]``/padding removed);
- segment ``s`` in ``[0, S)``.

With segments padded to length ``L`` (``SegmentedDocument.segment_input_ids(L)``), piece ``p``
of segment ``s`` sits at row ``s``, column ``1 + p - segment_starts[s]`` (column 0 is
``[CLS]``), i.e. at flat index ``s * L + 1 + p - segment_starts[s]`` of the ``[S * L]`` layout
(``SegmentedDocument.piece_positions(L)``).
"""

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple, Union

import numpy as np

MIN_SEGMENT_LEN = 3
"""``[CLS]``, one piece, ``[SEP]``."""


@dataclass
class SegmentedDocument:
    """
    A document's wordpieces and its segmentation; all arrays are ``np.int64``.

    - ``piece_ids`` ``(P,)``: wordpiece ids of the document (no specials);
    - ``piece_word_ids`` ``(P,)``: word of each piece (non-decreasing);
    - ``piece_sentence_ids`` ``(P,)``: sentence of each piece, sentences numbered ``0, 1, ...``
      in document order;
    - ``piece_segment_ids`` ``(P,)``: segment of each piece (non-decreasing);
    - ``word_starts`` / ``word_ends`` ``(W,)``: first / last piece of each word (inclusive,
      piece index space); every word has at least one piece (a word the tokenizer turns into
      nothing, e.g. a zero-width space, gets one unknown-token piece, counted in
      ``num_empty_words``);
    - ``segment_starts`` / ``segment_ends`` ``(S,)``: first piece / one past the last piece of
      each segment; ``segment_starts[0] == 0``, ``segment_ends[-1] == P``, contiguous.
    """

    piece_ids: np.ndarray
    piece_word_ids: np.ndarray
    piece_sentence_ids: np.ndarray
    piece_segment_ids: np.ndarray
    word_starts: np.ndarray
    word_ends: np.ndarray
    segment_starts: np.ndarray
    segment_ends: np.ndarray
    max_segment_len: int
    cls_token_id: int
    sep_token_id: int
    pad_token_id: int
    num_cut_words: int = 0
    """Words longer than a segment, whose pieces had to be split over two or more segments."""
    num_empty_words: int = 0
    """Words the tokenizer produced no piece for (given one unknown-token piece)."""

    @property
    def num_pieces(self) -> int:
        return len(self.piece_ids)

    @property
    def num_words(self) -> int:
        return len(self.word_starts)

    @property
    def num_segments(self) -> int:
        return len(self.segment_starts)

    @property
    def segment_lengths(self) -> np.ndarray:
        """``(S,)`` pieces per segment, specials excluded."""
        return self.segment_ends - self.segment_starts

    @property
    def longest_segment(self) -> int:
        """Length of the longest segment INCLUDING ``[CLS]``/``[SEP]`` (0 for no segments)."""
        return int(self.segment_lengths.max()) + 2 if self.num_segments else 0

    def piece_positions(self, segment_length: int) -> np.ndarray:
        """``(P,)`` flat index of each piece in the ``[S * segment_length]`` padded layout."""
        if segment_length < self.longest_segment:
            raise ValueError(
                f"segment_length {segment_length} is shorter than the longest "
                f"segment ({self.longest_segment} with specials)"
            )
        first_piece = self.segment_starts[self.piece_segment_ids]
        offsets = np.arange(self.num_pieces, dtype=np.int64) - first_piece
        return self.piece_segment_ids * segment_length + 1 + offsets

    def segment_input_ids(
        self, segment_length: Optional[int] = None, num_segments: Optional[int] = None
    ) -> Tuple[np.ndarray, np.ndarray]:
        """
        ``(input_ids, segment_mask)``, both ``(num_segments, segment_length)``: each segment as
        ``[CLS] pieces [SEP]`` followed by padding. Defaults: ``S`` rows and the longest
        segment's length; more rows or columns are padding (mask False).
        """
        length = self.longest_segment if segment_length is None else segment_length
        rows = self.num_segments if num_segments is None else num_segments
        if rows < self.num_segments:
            raise ValueError(f"num_segments {rows} is smaller than the document's {self.num_segments} segments")
        input_ids = np.full(rows * length, self.pad_token_id, dtype=np.int64)
        mask = np.zeros((rows, length), dtype=bool)
        if self.num_segments:
            input_ids[self.piece_positions(length)] = self.piece_ids
            first = np.arange(self.num_segments, dtype=np.int64) * length
            input_ids[first] = self.cls_token_id
            input_ids[first + 1 + self.segment_lengths] = self.sep_token_id
            mask[: self.num_segments] = np.arange(length)[None, :] < (self.segment_lengths + 2)[:, None]
        return input_ids.reshape(rows, length), mask

    def window_words(self, first_segment: int, num_segments: int) -> Tuple[int, int]:
        """
        ``(start, end)``: the words (``start <= w < end``) that lie entirely in segments
        ``first_segment .. first_segment + num_segments - 1`` (all of their words unless a
        word longer than a segment crosses the edge; empty if one word fills them all).
        Segmenting these words again never needs more than ``num_segments`` segments.
        """
        last = first_segment + num_segments - 1
        if not (0 <= first_segment and num_segments >= 1 and last < self.num_segments):
            raise ValueError(
                f"segments {first_segment}..{last} are outside the document's {self.num_segments} segments"
            )
        starts, ends = self.window_word_ranges(num_segments)
        return int(starts[first_segment]), int(ends[first_segment])

    def window_word_ranges(self, num_segments: int) -> Tuple[np.ndarray, np.ndarray]:
        """``(starts, ends)``, each ``(max(S - num_segments + 1, 0),)``: :meth:`window_words`
        of every run of ``num_segments`` consecutive segments, by first segment."""
        firsts = np.arange(max(self.num_segments - num_segments + 1, 0))
        begins = self.segment_starts[firsts]
        ends = self.segment_ends[firsts + num_segments - 1]
        return (
            np.searchsorted(self.word_starts, begins, side="left"),
            np.searchsorted(self.word_ends, ends, side="left"),
        )


def _tokenize_words(words: Sequence[str], tokenizer) -> Tuple[np.ndarray, np.ndarray, int]:
    """``(piece_ids, piece_word_ids, num_empty_words)``; every word gets at least one piece."""
    encoding = tokenizer(
        list(words),
        is_split_into_words=True,
        add_special_tokens=False,
        return_attention_mask=False,
        return_token_type_ids=False,
        verbose=False,
    )
    piece_ids = np.asarray(encoding["input_ids"], dtype=np.int64)
    word_ids = encoding.word_ids()
    if any(word is None for word in word_ids):
        raise ValueError("the tokenizer returned pieces that belong to no word")
    piece_word_ids = np.asarray(word_ids, dtype=np.int64)
    if piece_word_ids.size and np.any(np.diff(piece_word_ids) < 0):
        raise ValueError("the tokenizer returned pieces out of word order")
    counts = np.bincount(piece_word_ids, minlength=len(words))
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        if tokenizer.unk_token_id is None:
            raise ValueError(
                f"{empty.size} words produce no wordpiece and the tokenizer has "
                f"no unknown token to stand for them (first: word {empty[0]}, "
                f"{words[empty[0]]!r})"
            )
        before = np.cumsum(counts) - counts  # pieces of all earlier words
        piece_ids = np.insert(piece_ids, before[empty], tokenizer.unk_token_id)
        piece_word_ids = np.insert(piece_word_ids, before[empty], empty)
    return piece_ids, piece_word_ids, int(empty.size)


def _greedy_segments(
    sentence_bounds: np.ndarray, word_bounds: np.ndarray, num_pieces: int, budget: int
) -> Tuple[np.ndarray, np.ndarray]:
    """
    ``(starts, ends)`` of segments holding at most ``budget`` pieces. ``sentence_bounds`` and
    ``word_bounds`` are the sorted piece offsets where sentences / words end (both include
    ``num_pieces``). Loops once per segment, not per piece.
    """
    starts, ends = [], []
    position = 0
    while position < num_pieces:
        limit = position + budget
        end = None
        for bounds in (sentence_bounds, word_bounds):
            index = int(np.searchsorted(bounds, limit, side="right")) - 1
            if index >= 0 and bounds[index] > position:
                end = int(bounds[index])
                break
        if end is None:  # one word longer than a segment: cut inside it
            end = limit
        starts.append(position)
        ends.append(end)
        position = end
    return np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)


def segment_words(
    words: Sequence[str], sentence_ids: Union[Sequence[int], np.ndarray], tokenizer, max_segment_len: int
) -> SegmentedDocument:
    """
    Tokenises ``words`` (one call of a Hugging Face fast ``tokenizer`` with
    ``is_split_into_words=True``) and segments them. ``sentence_ids`` ``(W,)`` gives each word's
    sentence: a sentence ends wherever the id changes (ids need not start at 0 or be
    consecutive; the output numbers sentences ``0, 1, ...``). ``max_segment_len`` counts
    ``[CLS]`` and ``[SEP]``.
    """
    if max_segment_len < MIN_SEGMENT_LEN:
        raise ValueError(
            f"max_segment_len must be at least {MIN_SEGMENT_LEN} ([CLS], a piece, [SEP]), got {max_segment_len}"
        )
    if tokenizer.cls_token_id is None or tokenizer.sep_token_id is None:
        raise ValueError(f"tokenizer {type(tokenizer).__name__} has no CLS/SEP tokens")
    sentence_array = np.asarray(sentence_ids, dtype=np.int64)
    num_words = len(words)
    if sentence_array.shape != (num_words,):
        raise ValueError(
            f"got {sentence_array.shape[0] if sentence_array.ndim else 'no'} sentence ids for {num_words} words"
        )
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    if num_words == 0:
        empty = np.zeros(0, dtype=np.int64)
        return SegmentedDocument(
            empty,
            empty,
            empty,
            empty,
            empty,
            empty,
            empty,
            empty,
            max_segment_len,
            tokenizer.cls_token_id,
            tokenizer.sep_token_id,
            pad_id,
        )
    piece_ids, piece_word_ids, num_empty = _tokenize_words(words, tokenizer)
    counts = np.bincount(piece_word_ids, minlength=num_words)
    word_bounds = np.cumsum(counts)  # (W,) one past each word's last piece
    word_starts = word_bounds - counts
    new_sentence = np.concatenate(([False], sentence_array[1:] != sentence_array[:-1]))
    word_sentence = np.cumsum(new_sentence)
    sentence_end_words = np.concatenate((np.flatnonzero(new_sentence), [num_words]))
    sentence_bounds = np.concatenate((word_starts[sentence_end_words[:-1]], [word_bounds[-1]]))

    num_pieces = len(piece_ids)
    starts, ends = _greedy_segments(sentence_bounds, word_bounds, num_pieces, max_segment_len - 2)
    piece_segment_ids = np.repeat(np.arange(len(starts), dtype=np.int64), ends - starts)
    word_ends = word_bounds - 1
    num_cut = int(np.count_nonzero(piece_segment_ids[word_starts] != piece_segment_ids[word_ends]))
    return SegmentedDocument(
        piece_ids=piece_ids,
        piece_word_ids=piece_word_ids,
        piece_sentence_ids=word_sentence[piece_word_ids],
        piece_segment_ids=piece_segment_ids,
        word_starts=word_starts,
        word_ends=word_ends,
        segment_starts=starts,
        segment_ends=ends,
        max_segment_len=max_segment_len,
        cls_token_id=tokenizer.cls_token_id,
        sep_token_id=tokenizer.sep_token_id,
        pad_token_id=pad_id,
        num_cut_words=num_cut,
        num_empty_words=num_empty,
    )


def segment_document(sentences: Sequence[Sequence[str]], tokenizer, max_segment_len: int) -> SegmentedDocument:
    """:func:`segment_words` for a document given as sentences of words (empty sentences are
    ignored)."""
    lengths = np.fromiter((len(sentence) for sentence in sentences), dtype=np.int64, count=len(sentences))
    words = [word for sentence in sentences for word in sentence]
    sentence_ids = np.repeat(np.arange(len(sentences), dtype=np.int64), lengths)
    return segment_words(words, sentence_ids, tokenizer, max_segment_len)
