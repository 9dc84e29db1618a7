"""
Masking linguistic phrases: spaCy named entities or noun chunks (Joshi et al. 2020,
section 6.1 "Named Entities" and "Noun Phrases").
"""

from typing import Optional

import numpy as np
import torch

from spanbert_lib.pretraining.masking.masker import Masker, SpanSelection
from spanbert_lib.pretraining.masking.selection import select_up_to_budget
from spanbert_lib.pretraining.masking.units import Runs, batch_word_starts, coverage, find_runs, word_runs


@Masker.register("named_entity")
class PhraseMasker(Masker):
    """
    Spends ``entity_fraction`` of the budget on uniformly random whole phrases (runs of equal
    ``phrase_ids`` >= 0) and the rest on uniformly random whole words outside the chosen
    phrases; where phrases run short, words make up the difference. Each phrase or word is a
    span for the 80/10/10 replacement. Registered as ``named_entity`` (``phrase_ids`` from spaCy
    entities) and ``noun_phrase`` (from noun chunks); the two differ only in the ids given, and
    ``entity_fraction`` is the noun chunks' share for the latter. Phrases must cover whole
    words.

    # Parameters

    entity_fraction : `float`, optional (default = `0.5`)
        Share of the budget spent on phrases, in [0, 1].
    **kwargs
        The :class:`Masker` arguments (``masking_budget``, ``mask_probability``,
        ``random_probability``).
    """

    requires_phrase_ids = True

    def __init__(self, entity_fraction: float = 0.5, **kwargs) -> None:
        super().__init__(**kwargs)
        if not 0.0 <= entity_fraction <= 1.0:
            raise ValueError(f"entity_fraction must be in [0, 1], got {entity_fraction}")
        self.entity_fraction = entity_fraction

    def select_spans(
        self,
        word_ids: np.ndarray,
        budget: np.ndarray,
        *,
        phrase_ids: Optional[np.ndarray] = None,
        generator: Optional[torch.Generator] = None,
    ) -> SpanSelection:
        if phrase_ids is None:  # mask() checks it first (requires_phrase_ids)
            raise ValueError("phrase masking needs phrase_ids (entity / noun chunk id per piece)")
        length = word_ids.shape[1]
        maskable = word_ids >= 0
        starts_word = batch_word_starts(word_ids)
        phrases = find_runs(np.where(maskable, phrase_ids, -1))
        _check_word_aligned(word_ids, phrases, starts_word)

        phrase_budget = self.entity_fraction * budget
        chosen_phrases = select_up_to_budget(phrases.num_tokens, phrases.valid, phrase_budget, generator)
        phrase_tokens = (phrases.num_tokens * chosen_phrases).sum(axis=1)
        in_chosen_phrase = coverage(phrases, chosen_phrases, length)

        words = word_runs(word_ids)
        free_words = words.valid & ~np.take_along_axis(in_chosen_phrase, words.starts, axis=1)
        chosen_words = select_up_to_budget(words.num_tokens, free_words, budget - phrase_tokens, generator)

        word_index = np.cumsum(starts_word, axis=1)
        phrase_rows, phrase_slots = np.nonzero(chosen_phrases)
        phrase_first, phrase_last = phrases.starts[phrase_rows, phrase_slots], phrases.ends[phrase_rows, phrase_slots]
        phrase_num_words = word_index[phrase_rows, phrase_last] - word_index[phrase_rows, phrase_first] + 1
        word_rows, word_slots = np.nonzero(chosen_words)
        return SpanSelection(
            batch=np.concatenate([phrase_rows, word_rows]),
            first=np.concatenate([phrase_first, words.starts[word_rows, word_slots]]),
            last=np.concatenate([phrase_last, words.ends[word_rows, word_slots]]),
            num_words=np.concatenate([phrase_num_words, np.ones_like(word_rows)]),
        )


Masker.register("noun_phrase")(PhraseMasker)


def _check_word_aligned(word_ids: np.ndarray, phrases: Runs, starts_word: np.ndarray) -> None:
    """Raises ValueError naming the sequence and positions of a phrase that splits a word."""
    length = word_ids.shape[1]
    # A phrase must start at a word start and end where the next piece is not the same word.
    after_end = np.minimum(phrases.ends + 1, length - 1)
    word_at_end = np.take_along_axis(word_ids, np.maximum(phrases.ends, 0), axis=1)
    ends_inside_word = (phrases.ends + 1 < length) & (np.take_along_axis(word_ids, after_end, axis=1) == word_at_end)
    bad = phrases.valid & (~np.take_along_axis(starts_word, phrases.starts, axis=1) | ends_inside_word)
    if bad.any():
        row, slot = (int(index[0]) for index in np.nonzero(bad))
        first, last = int(phrases.starts[row, slot]), int(phrases.ends[row, slot])
        raise ValueError(
            f"phrase_ids of sequence {row}: the phrase at token positions {first}-{last} does not cover "
            f"whole words (word_ids around it: {word_ids[row, max(first - 1, 0) : last + 2].tolist()})"
        )
