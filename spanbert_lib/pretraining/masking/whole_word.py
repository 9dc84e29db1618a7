"""Whole word masking (Joshi et al. 2020, section 6.1 "Whole Words")."""

from typing import Optional

import numpy as np
import torch

from spanbert_lib.pretraining.masking.masker import Masker, SpanSelection
from spanbert_lib.pretraining.masking.selection import select_up_to_budget
from spanbert_lib.pretraining.masking.units import word_runs


@Masker.register("whole_word")
class WholeWordMasker(Masker):
    """
    Masks uniformly random whole words (all their pieces) until ``masking_budget`` of the
    maskable tokens (in expectation; see :func:`select_up_to_budget`). Each word is a span for
    the 80/10/10 replacement.
    """

    def select_spans(
        self,
        word_ids: np.ndarray,
        budget: np.ndarray,
        *,
        phrase_ids: Optional[np.ndarray] = None,
        generator: Optional[torch.Generator] = None,
    ) -> SpanSelection:
        words = word_runs(word_ids)
        chosen = select_up_to_budget(words.num_tokens, words.valid, budget, generator)
        rows, slots = np.nonzero(chosen)
        return SpanSelection(
            batch=rows, first=words.starts[rows, slots], last=words.ends[rows, slots], num_words=np.ones_like(rows)
        )
