"""
Maverick's ``mes`` model (mention extraction + multi-expert scorers) over an encoder with fewer positions than a
document has wordpieces. Maverick encodes a whole document in one pass (DeBERTa-v3 / Longformer in the paper); MiniLM
has 512 positions, and truncation would leave most of a LitBank document (~2,600 wordpieces) unencoded. Here the
document is cut into consecutive segments of at most 512 positions, each encoded on its own as ``[CLS] ... [SEP]``
(the document's own ``[CLS]`` / ``[SEP]`` at its ends, one added at each inner cut), and the hidden states of the
document's pieces are concatenated - SpanBERT's "independent" segments, cut by length rather than at sentence ends
(the encoder sees only input ids). Everything after the encoder is Maverick's own code.

Imported by ``maverick_litbank.py`` in the anchors' environment (the config's ``_target_``).
"""

from typing import Dict

import torch
from anchor_common import segment_bounds
from maverick.models.model_mes import Maverick_mes
from transformers import AutoTokenizer


class SegmentedEncoder(torch.nn.Module):
    """
    A Hugging Face encoder applied to independent segments of at most ``max_length`` positions (module docstring).

    # Parameters

    encoder : `torch.nn.Module`
        The encoder (``AutoModel``), called as ``encoder(input_ids=..., attention_mask=...)``.
    max_length : `int`
        Its number of positions (``max_position_embeddings``).
    cls_id, sep_id : `int`
        The ids of the tokens opening and closing a segment.
    """

    def __init__(self, encoder: torch.nn.Module, max_length: int, cls_id: int, sep_id: int) -> None:
        super().__init__()
        self.inner = encoder
        self.max_length = max_length
        self.cls_id, self.sep_id = cls_id, sep_id

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @property
    def embeddings(self):
        return self.inner.embeddings

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Dict[str, torch.Tensor]:
        """``input_ids``, ``attention_mask``: `[B, L]` -> ``{"last_hidden_state": [B, L, H]}``."""
        length = input_ids.size(1)
        if length <= self.max_length:
            return {"last_hidden_state": self.inner(input_ids=input_ids, attention_mask=attention_mask)[0]}
        batch = input_ids.size(0)
        pieces = []
        for start, end in segment_bounds(length, self.max_length):
            ids, mask = input_ids[:, start:end], attention_mask[:, start:end]
            before, after = int(start > 0), int(end < length)
            if before:
                ids = torch.cat([ids.new_full((batch, 1), self.cls_id), ids], dim=1)
                mask = torch.cat([mask.new_ones((batch, 1)), mask], dim=1)
            if after:
                ids = torch.cat([ids, ids.new_full((batch, 1), self.sep_id)], dim=1)
                mask = torch.cat([mask, mask.new_ones((batch, 1))], dim=1)
            hidden = self.inner(input_ids=ids, attention_mask=mask)[0]
            pieces.append(hidden[:, before : hidden.size(1) - after])
        return {"last_hidden_state": torch.cat(pieces, dim=1)}


class SegmentedMaverickMes(Maverick_mes):
    """``Maverick_mes`` whose encoder is a :class:`SegmentedEncoder` (same arguments as ``Maverick_mes``)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        tokenizer = AutoTokenizer.from_pretrained(self.encoder_hf_model_name)
        self.encoder = SegmentedEncoder(
            self.encoder,
            self.encoder_config.max_position_embeddings,
            tokenizer.cls_token_id,
            tokenizer.sep_token_id,
        )
