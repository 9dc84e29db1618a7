"""Synthetic packed blocks with a realistic words -> wordpieces structure, for masking tests."""

from typing import Optional, Sequence

import numpy as np
import torch

PAD, CLS, SEP, MASK = 0, 101, 102, 103
VOCAB_SIZE = 30522


def make_blocks(
    num_sequences: int,
    length: int = 512,
    seed: int = 0,
    pieces_per_word: Sequence[float] = (0.6, 0.3, 0.1),
    content_lengths: Optional[Sequence[int]] = None,
    phrase_start_probability: float = 0.0,
    phrase_min_words: int = 1,
):
    """
    ``[CLS] pieces [SEP] [PAD]...`` blocks. Words have 1..len(pieces_per_word) pieces with the
    given probabilities. ``content_lengths`` (pieces between [CLS] and [SEP], per sequence)
    defaults to ``length - 2``. Each word starts a phrase of 1-4 words with
    ``phrase_start_probability`` (when not already inside one).

    Returns (input_ids, word_ids, phrase_ids): LongTensor[N, length] each.
    """
    rng = np.random.default_rng(seed)
    input_ids = np.full((num_sequences, length), PAD, dtype=np.int64)
    word_ids = np.full((num_sequences, length), -1, dtype=np.int64)
    phrase_ids = np.full((num_sequences, length), -1, dtype=np.int64)
    for row in range(num_sequences):
        content = length - 2 if content_lengths is None else content_lengths[row]
        pieces = rng.choice(np.arange(1, len(pieces_per_word) + 1), size=content + 1, p=pieces_per_word)
        pieces = pieces[: np.searchsorted(np.cumsum(pieces), content) + 1]
        pieces[-1] -= pieces.sum() - content  # the last word fills the block exactly
        words = np.repeat(np.arange(len(pieces)), pieces)
        input_ids[row, 0] = CLS
        input_ids[row, 1 : content + 1] = rng.integers(1000, VOCAB_SIZE, size=content)
        input_ids[row, content + 1] = SEP
        word_ids[row, 1 : content + 1] = words
        if phrase_start_probability > 0:
            word_phrase = np.full(len(pieces), -1, dtype=np.int64)
            word, phrase = 0, 0
            while word < len(pieces):
                if rng.random() < phrase_start_probability:
                    size = int(rng.integers(phrase_min_words, 5))
                    word_phrase[word : word + size] = phrase
                    phrase += 1
                    word += size + 1  # keep a gap so adjacent phrases stay distinct units
                else:
                    word += 1
            phrase_ids[row, 1 : content + 1] = word_phrase[words]
    return torch.from_numpy(input_ids), torch.from_numpy(word_ids), torch.from_numpy(phrase_ids)
