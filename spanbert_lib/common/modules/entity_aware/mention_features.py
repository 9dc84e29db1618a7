"""
Features of a few given mentions per example (entity typing: one; relation classification: two),
computed either LUKE's way - one special entity per mention, its final entity state - or the plain
way - span-boundary features of the mention's word states - so one model config switches between
an entity-aware and a plain SpanBERT-style encoder with ``use_entities``.

Shapes: `B` batch, `L` wordpieces, `M` mentions per example.
"""

from typing import Optional, Sequence

import torch
from allennlp.common import Lazy
from allennlp.data import TextFieldTensors
from allennlp.modules.span_extractors import SpanExtractor

from spanbert_lib.common.modules.entity_aware.encoder import EntityAwareEncoder
from spanbert_lib.common.modules.span_inputs import default_span_extractor, wordpiece_inputs


class MentionFeatures(torch.nn.Module):
    """
    ``use_entities=True``: entity ``entity_ids[m]`` at mention m (e.g. ``[ENTITY_MASK]`` for typing,
    ``[ENTITY_HEAD, ENTITY_TAIL]`` for relations); the features are the entity states.
    ``use_entities=False``: ``span_extractor`` (default ``span_boundary`` inside) over the word states.

    ``forward(encoder, tokens, mentions [B, M, 2] inclusive wordpiece spans) -> [B, M, get_output_dim()]``.
    The encoder is passed in (it stays a direct submodule of the model, named ``encoder``).

    # Parameters

    hidden_size : `int`
        Size of the encoder's states.
    entity_ids : `Sequence[int]`
        The entity id of each of the ``M`` mentions (used with ``use_entities``).
    use_entities : `bool`, optional (default = `True`)
        Entity states as features; False: ``span_extractor`` over the word states.
    span_extractor : `Lazy[SpanExtractor]`, optional (default = `None`)
        The extractor without entities (default ``span_boundary`` inside).
    """

    def __init__(
        self,
        hidden_size: int,
        entity_ids: Sequence[int],
        use_entities: bool = True,
        span_extractor: Optional[Lazy[SpanExtractor]] = None,
    ) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.use_entities = use_entities
        self.entity_ids = tuple(entity_ids)
        self.span_extractor = None if use_entities else default_span_extractor(hidden_size, span_extractor)

    def get_output_dim(self) -> int:
        if self.use_entities:
            return self.hidden_size
        assert self.span_extractor is not None  # made in __init__ without use_entities
        return self.span_extractor.get_output_dim()

    def forward(self, encoder: EntityAwareEncoder, tokens: TextFieldTensors, mentions: torch.Tensor) -> torch.Tensor:
        token_ids, mask, type_ids = wordpiece_inputs(tokens)
        mentions = mentions.long()
        if len(self.entity_ids) != mentions.size(1):
            raise ValueError(f"{mentions.size(1)} mentions per example but {len(self.entity_ids)} entity ids")
        if not self.use_entities:
            assert self.span_extractor is not None  # made in __init__ without use_entities
            word_states, _ = encoder(token_ids, mask, type_ids)
            return self.span_extractor(word_states, mentions, mask)
        entity_ids = mentions.new_tensor(self.entity_ids).expand(mentions.size(0), -1)  # [B, M]
        _, entity_states = encoder(
            token_ids,
            mask,
            type_ids,
            entity_ids=entity_ids,
            entity_spans=mentions,
            entity_mask=torch.ones_like(entity_ids, dtype=torch.bool),
        )
        return entity_states
