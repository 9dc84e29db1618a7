"""BERT's masking of individual wordpieces (Joshi et al. 2020, section 6.1 "Subword Tokens")."""

from typing import Optional

import numpy as np
import torch

from spanbert_lib.pretraining.masking.masker import Masker, SpanSelection
from spanbert_lib.pretraining.masking.selection import select_up_to_budget


@Masker.register("subword")
class SubwordMasker(Masker):
    """
    Masks uniformly random maskable wordpieces: floor(budget) or floor(budget) + 1 of them
    per sequence, so exactly ``masking_budget`` in expectation. Every piece is its own span, so
    the 80/10/10 replacement is decided per token as in BERT; ``span_num_words`` is 1.
    """

    def select_spans(
        self,
        word_ids: np.ndarray,
        budget: np.ndarray,
        *,
        phrase_ids: Optional[np.ndarray] = None,
        generator: Optional[torch.Generator] = None,
    ) -> SpanSelection:
        maskable = word_ids >= 0
        chosen = select_up_to_budget(maskable.astype(np.int64), maskable, budget, generator)
        rows, positions = np.nonzero(chosen)
        return SpanSelection(batch=rows, first=positions, last=positions, num_words=np.ones_like(rows))
