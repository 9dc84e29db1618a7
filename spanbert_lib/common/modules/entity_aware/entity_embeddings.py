"""
Input embeddings of the entity tokens of the entity-aware encoder (LUKE, Yamada et al. 2020, sec. 3.1).

For entity ``j`` of example ``b`` with id ``m``, mentioned by the inclusive wordpiece span ``[s, e]``:

    x = LayerNorm( B[m] @ U  +  mean_{p = s..e} P[p + offset]  +  T[0] ),   then dropout

- ``B`` (``entity_embeddings``, ``[V_e, D_e]``) and ``U`` (``projection``, a bias-free Linear
  ``D_e -> H``): the decomposed entity embedding (``D_e = entity_embedding_dim``, 256 by default,
  so a large entity vocabulary stays small). The entity-MLM head decodes through ``B``.
- ``P``: the encoder's WORD position embedding module, shared (not copied): an entity sits where
  its mention is. ``offset`` is 0 for BERT; RoBERTa-style embeddings (which number real
  positions from ``padding_idx + 1``) set it to ``padding_idx + 1``.
- ``T[0]``: row 0 of the encoder's token-type embeddings, shared (not copied), as in LUKE where
  entities use token type 0. Models without token types (``type_embeddings=None``) add nothing.
- LayerNorm and dropout of their own; the encoder initialises the LayerNorm from the word
  embeddings' one.

The mean over the span is taken with prefix sums of the position table (in float32), so the cost
is one cumulative sum over the ``L`` positions plus two gathers per entity, whatever the span widths.
"""

from typing import Optional

import torch

from spanbert_lib.common.modules.entity_aware.entity_vocabulary import ENTITY_PAD


class EntityEmbeddings(torch.nn.Module):
    """
    # Parameters

    entity_vocab_size : `int`
        ``V_e``, the specials included (see ``entity_vocabulary``).
    position_embeddings : `torch.nn.Embedding`
        The word position embeddings of the encoder (shared).
    type_embeddings : `torch.nn.Embedding`, optional
        The encoder's token-type embeddings (shared; row 0 is used), or None.
    entity_embedding_dim : `int`, optional (default = `256`)
        ``D_e``.
    position_offset : `int`, optional (default = `0`)
        Position id of wordpiece position 0 (RoBERTa: ``padding_idx + 1``).
    layer_norm_eps : `float`, optional (default = `1e-12`)
        As the encoder's embeddings (``layer_norm_eps``).
    dropout : `float`, optional (default = `0.1`)
        As the encoder's embeddings (``hidden_dropout_prob``).
    initializer_range : `float`, optional (default = `0.02`)
        Standard deviation of the initial entity embedding and projection weights.
    """

    def __init__(
        self,
        entity_vocab_size: int,
        position_embeddings: torch.nn.Embedding,
        type_embeddings: Optional[torch.nn.Embedding] = None,
        entity_embedding_dim: int = 256,
        position_offset: int = 0,
        layer_norm_eps: float = 1e-12,
        dropout: float = 0.1,
        initializer_range: float = 0.02,
    ) -> None:
        super().__init__()
        if entity_vocab_size < 1 or entity_embedding_dim < 1:
            raise ValueError(
                f"entity_vocab_size ({entity_vocab_size}) and entity_embedding_dim "
                f"({entity_embedding_dim}) must be positive"
            )
        hidden_size = position_embeddings.embedding_dim
        self.entity_embeddings = torch.nn.Embedding(entity_vocab_size, entity_embedding_dim, padding_idx=ENTITY_PAD)
        self.projection = torch.nn.Linear(entity_embedding_dim, hidden_size, bias=False)
        torch.nn.init.normal_(self.entity_embeddings.weight, std=initializer_range)
        with torch.no_grad():
            self.entity_embeddings.weight[ENTITY_PAD].zero_()
        torch.nn.init.normal_(self.projection.weight, std=initializer_range)
        self.position_embeddings = position_embeddings
        self.type_embeddings = type_embeddings
        self.position_offset = position_offset
        self.layer_norm = torch.nn.LayerNorm(hidden_size, eps=layer_norm_eps)
        self.dropout = torch.nn.Dropout(dropout)

    @property
    def entity_vocab_size(self) -> int:
        return self.entity_embeddings.num_embeddings

    def span_position_embeddings(
        self, entity_spans: torch.Tensor, entity_mask: torch.Tensor, num_positions: int
    ) -> torch.Tensor:
        """
        The mean word position embedding over each entity's span.

        # Parameters

        entity_spans : `torch.LongTensor`
            `[B, E, 2]` inclusive wordpiece positions.
        entity_mask : `torch.BoolTensor`
            `[B, E]` real entities.
        num_positions : `int`
            ``L``, the word sequence length.

        # Returns

        `torch.FloatTensor`
            `[B, E, H]`, zeros at padded entities.
        """
        first = self.position_offset
        if first + num_positions > self.position_embeddings.num_embeddings:
            raise ValueError(
                f"{num_positions} word positions (from {first}) exceed the "
                f"{self.position_embeddings.num_embeddings} position embeddings of the encoder"
            )
        table = self.position_embeddings.weight[first : first + num_positions].float()  # [L, H]
        prefix = torch.nn.functional.pad(table.cumsum(dim=0), (0, 0, 1, 0))  # [L + 1, H]
        starts = entity_spans[..., 0].masked_fill(~entity_mask, 0)  # [B, E]
        ends = entity_spans[..., 1].masked_fill(~entity_mask, 0)
        sums = prefix[ends + 1] - prefix[starts]  # [B, E, H]
        widths = (ends - starts + 1).clamp(min=1).unsqueeze(-1)
        means = sums / widths * entity_mask.unsqueeze(-1)
        return means.to(self.position_embeddings.weight.dtype)

    def check_inputs(
        self, entity_ids: torch.Tensor, entity_spans: torch.Tensor, entity_mask: torch.Tensor, num_positions: int
    ) -> None:
        """Raises a ValueError naming the first bad entity (one device sync)."""
        if entity_spans.shape != (*entity_ids.shape, 2) or entity_mask.shape != entity_ids.shape:
            raise ValueError(
                f"entity_ids {tuple(entity_ids.shape)}, entity_spans {tuple(entity_spans.shape)} "
                f"and entity_mask {tuple(entity_mask.shape)} must be [B, E], [B, E, 2], [B, E]"
            )
        starts, ends = entity_spans[..., 0], entity_spans[..., 1]
        bad = entity_mask & (
            (starts < 0)
            | (ends < starts)
            | (ends >= num_positions)
            | (entity_ids < 0)
            | (entity_ids >= self.entity_vocab_size)
        )
        if bool(bad.any()):
            b, j = (int(i) for i in bad.nonzero()[0])
            raise ValueError(
                f"entity {j} of example {b}: id {int(entity_ids[b, j])} with span "
                f"[{int(starts[b, j])}, {int(ends[b, j])}] is invalid: ids must be in "
                f"[0, {self.entity_vocab_size}) and spans inclusive wordpiece positions "
                f"0 <= start <= end < {num_positions}"
            )

    def forward(
        self, entity_ids: torch.Tensor, entity_spans: torch.Tensor, entity_mask: torch.Tensor, num_positions: int
    ) -> torch.Tensor:
        """
        The input embeddings of the entities. Padded entities (mask False) may hold any id/span.

        # Parameters

        entity_ids : `torch.LongTensor`
            `[B, E]` entity ids.
        entity_spans : `torch.LongTensor`
            `[B, E, 2]` inclusive wordpiece positions into the encoder's `[B, L]` input.
        entity_mask : `torch.BoolTensor`
            `[B, E]` real entities.
        num_positions : `int`
            ``L``.

        # Returns

        `torch.FloatTensor`
            `[B, E, H]`.
        """
        entity_mask = entity_mask.bool()
        self.check_inputs(entity_ids, entity_spans, entity_mask, num_positions)
        ids = entity_ids.masked_fill(~entity_mask, ENTITY_PAD)
        embeddings = self.projection(self.entity_embeddings(ids))  # [B, E, H]
        embeddings = embeddings + self.span_position_embeddings(entity_spans, entity_mask, num_positions)
        if self.type_embeddings is not None:
            embeddings = embeddings + self.type_embeddings.weight[0]
        return self.dropout(self.layer_norm(embeddings))
