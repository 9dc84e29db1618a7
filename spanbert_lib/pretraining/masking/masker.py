"""
The :class:`Masker` interface shared by SpanBERT's masking scheme and its ablations.

Shapes: `B` blocks in a batch, `L` block length, `S` chosen spans over the batch.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch
from allennlp.common import Registrable

from spanbert_lib.pretraining.masking.output import MaskingOutput
from spanbert_lib.pretraining.masking.replacement import apply_span_replacement


@dataclass
class SpanSelection:
    """
    The spans a scheme chose, flat over the batch.

    # Parameters

    batch : `np.ndarray`
        `[S]` int64, the block of each span.
    first : `np.ndarray`
        `[S]` int64, its first token position.
    last : `np.ndarray`
        `[S]` int64, its last token position (inclusive).
    num_words : `np.ndarray`
        `[S]` int64, the number of whole words it covers.
    """

    batch: np.ndarray
    first: np.ndarray
    last: np.ndarray
    num_words: np.ndarray


class Masker(Registrable):
    """
    Chooses which tokens of packed blocks to predict and how to corrupt them (Joshi et al.
    2020, sections 3.1 and 6.1). Subclasses choose the spans (:meth:`select_spans`); this class
    validates the input and applies the per-span 80/10/10 replacement.

    The work runs in numpy on the CPU, as a data-pipeline step: span selection is sequential
    bookkeeping over small arrays where numpy's per-operation overhead is far below torch's,
    and it stays single-threaded. Random numbers all come from the given ``torch.Generator``;
    the outputs are tensors on ``input_ids``' device.

    # Parameters

    masking_budget : `float`, optional (default = `0.15`)
        Fraction of the maskable tokens (``word_ids >= 0``) of each sequence to mask, in
        expectation.
    mask_probability : `float`, optional (default = `0.8`)
        Chance that a span is replaced by [MASK] tokens.
    random_probability : `float`, optional (default = `0.1`)
        Chance that a span is replaced by random tokens; it is kept unchanged otherwise.
    """

    default_implementation = "geometric_span"
    requires_phrase_ids = False
    """True for schemes that need ``phrase_ids`` (spaCy entities or noun chunks)."""

    def __init__(
        self,
        masking_budget: float = 0.15,
        mask_probability: float = 0.8,
        random_probability: float = 0.1,
    ) -> None:
        if not 0.0 <= masking_budget <= 1.0:
            raise ValueError(f"masking_budget must be in [0, 1], got {masking_budget}")
        if mask_probability < 0 or random_probability < 0 or mask_probability + random_probability > 1 + 1e-9:
            raise ValueError(
                "mask_probability and random_probability must be >= 0 and sum to at most 1, got "
                f"{mask_probability} and {random_probability}"
            )
        self.masking_budget = masking_budget
        self.mask_probability = mask_probability
        self.random_probability = random_probability

    def mask(
        self,
        input_ids: torch.Tensor,
        word_ids: torch.Tensor,
        *,
        mask_token_id: int,
        vocab_size: int,
        phrase_ids: Optional[torch.Tensor] = None,
        generator: Optional[torch.Generator] = None,
    ) -> MaskingOutput:
        """
        Masks a batch of blocks.

        # Parameters

        input_ids : `torch.LongTensor`
            `[B, L]` wordpiece ids of ``[CLS] ... [SEP]`` blocks plus padding.
        word_ids : `torch.LongTensor`
            `[B, L]` index of the whole word each piece belongs to (pieces of one word share
            it), -1 at special tokens and padding; only positions >= 0 are masked.
        mask_token_id : `int`
            Id of the [MASK] token.
        vocab_size : `int`
            Random replacements are drawn from ``[0, vocab_size)``.
        phrase_ids : `torch.LongTensor`, optional (default = `None`)
            `[B, L]` id of the entity / noun chunk of each piece, -1 outside any phrase; only
            for schemes with ``requires_phrase_ids``.
        generator : `torch.Generator`, optional (default = `None`)
            Source of all randomness (same seed, same masks).

        # Returns

        `MaskingOutput`
            The corrupted blocks, labels and spans.
        """
        self._check_inputs(input_ids, word_ids, phrase_ids, mask_token_id, vocab_size)
        word_ids_array = _to_numpy(word_ids)
        phrase_ids_array = None if phrase_ids is None else _to_numpy(phrase_ids)
        budget = self.masking_budget * (word_ids_array >= 0).sum(axis=1).astype(np.float64)
        selection = self.select_spans(word_ids_array, budget, phrase_ids=phrase_ids_array, generator=generator)
        return apply_span_replacement(
            _to_numpy(input_ids),
            selection.batch,
            selection.first,
            selection.last,
            selection.num_words,
            mask_token_id=mask_token_id,
            vocab_size=vocab_size,
            mask_probability=self.mask_probability,
            random_probability=self.random_probability,
            generator=generator,
            device=input_ids.device,
        )

    def select_spans(
        self,
        word_ids: np.ndarray,
        budget: np.ndarray,
        *,
        phrase_ids: Optional[np.ndarray],
        generator: Optional[torch.Generator],
    ) -> SpanSelection:
        """
        Chooses non-overlapping spans of maskable positions.

        # Parameters

        word_ids : `np.ndarray`
            `[B, L]` int64, as :meth:`mask` takes them.
        budget : `np.ndarray`
            `[B]` float64, tokens to mask per sequence.
        phrase_ids : `Optional[np.ndarray]`
            `[B, L]` int64, as :meth:`mask` takes them, or None.
        generator : `Optional[torch.Generator]`
            Source of all randomness.

        # Returns

        `SpanSelection`
            The chosen spans.
        """
        raise NotImplementedError

    def _check_inputs(self, input_ids, word_ids, phrase_ids, mask_token_id, vocab_size) -> None:
        name = type(self).__name__
        if input_ids.dim() != 2:
            raise ValueError(f"{name}: input_ids must be [batch, length], got shape {tuple(input_ids.shape)}")
        for tensor_name, tensor in (("input_ids", input_ids), ("word_ids", word_ids), ("phrase_ids", phrase_ids)):
            if tensor is None:
                continue
            if tensor.shape != input_ids.shape:
                raise ValueError(
                    f"{name}: {tensor_name} has shape {tuple(tensor.shape)}, input_ids has {tuple(input_ids.shape)}"
                )
            if tensor.dtype.is_floating_point or tensor.dtype == torch.bool:
                raise ValueError(f"{name}: {tensor_name} must be an integer tensor, got {tensor.dtype}")
        if vocab_size <= 0 or not 0 <= mask_token_id < vocab_size:
            raise ValueError(f"{name}: need 0 <= mask_token_id < vocab_size, got {mask_token_id} and {vocab_size}")
        if self.requires_phrase_ids and phrase_ids is None:
            raise ValueError(f"{name} masks phrases and needs phrase_ids (entity / noun chunk id per piece)")


def _to_numpy(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().cpu().numpy().astype(np.int64, copy=False)


def empty_selection() -> SpanSelection:
    empty = np.zeros(0, dtype=np.int64)
    return SpanSelection(batch=empty, first=empty, last=empty, num_words=empty)
