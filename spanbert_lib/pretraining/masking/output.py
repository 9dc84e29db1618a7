"""The result of masking a batch of packed blocks."""

from dataclasses import dataclass

import torch

IGNORE_INDEX = -100
"""``labels`` value at positions that are not predicted (the default ``ignore_index`` of the losses)."""

REPLACE_MASK = 0
REPLACE_RANDOM = 1
REPLACE_KEEP = 2
REPLACEMENT_NAMES = {REPLACE_MASK: "mask", REPLACE_RANDOM: "random", REPLACE_KEEP: "keep"}


@dataclass
class MaskingOutput:
    """
    The masked batch. Shapes: `B` batch size, `L` block length, `S` number of masked spans in
    the batch.

    # Parameters

    input_ids : `torch.LongTensor`
        `[B, L]` the blocks after replacement.
    labels : `torch.LongTensor`
        `[B, L]` the original id at every masked position (whether it was replaced by [MASK],
        by a random token or kept), ``IGNORE_INDEX`` (-100) elsewhere.
    span_starts : `torch.LongTensor`
        `[B, L]` at each masked position the first token position of its span, -1 elsewhere.
    span_ends : `torch.LongTensor`
        `[B, L]` at each masked position the last (inclusive) token position of its span, -1
        elsewhere.
    spans : `torch.LongTensor`
        `[S, 3]` rows ``(batch index, first token, last token inclusive)``, sorted by batch
        index then first token.
    span_replacement : `torch.LongTensor`
        `[S]` ``REPLACE_MASK`` (0), ``REPLACE_RANDOM`` (1) or ``REPLACE_KEEP`` (2): the decision
        taken once for all tokens of the span.
    span_num_words : `torch.LongTensor`
        `[S]` number of whole words each span covers.
    """

    input_ids: torch.Tensor
    labels: torch.Tensor
    span_starts: torch.Tensor
    span_ends: torch.Tensor
    spans: torch.Tensor
    span_replacement: torch.Tensor
    span_num_words: torch.Tensor

    @property
    def masked_positions(self) -> torch.Tensor:
        """`[B, L]` bool: positions to predict."""
        return self.labels != IGNORE_INDEX
