"""
LUKE's entity-aware self-attention (Yamada et al. 2020, sec. 3.3) for one layer of a BERT-family encoder.

The layer's input is the concatenation ``[words; entities]`` (``[B, L + E, H]``). Keys and values
are those of the pretrained layer for every token. Queries depend on the types of the attending
token (row) and of the attended token (column):

    word   -> word   : Q       (the pretrained ``query``)
    word   -> entity : Q_w2e
    entity -> word   : Q_e2w
    entity -> entity : Q_e2e

the three new matrices being initialised as copies of ``Q`` (so before any training the
attention is the ordinary one over the concatenated sequence). The scores of all four blocks go
through ONE softmax over all (unmasked) keys.

Computation: one matrix product per token type gives everything the attention needs (words:
``[Q ; Q_w2e]`` per head, key, value; entities: ``[Q_e2w ; Q_e2e]`` per head, key, value; see
:meth:`EntityAwareSelfAttention.fused_projection`), then one ``scaled_dot_product_attention`` call
with head dimension ``2d`` queries/keys, using
    word query   = [q  ; q_w2e]      word key   = [k ; 0]
    entity query = [q_e2w ; q_e2e]   entity key = [0 ; k]
so that ``query . key`` is exactly the block's score (scale ``1/sqrt(d)`` given explicitly); the
values are zero-padded to ``2d`` as well (the extra half of the output is dropped), since the fused
kernels want one head size. This costs twice the flops of the attention products but needs no
``[L+E, L+E]`` score tensor and lets torch use a fused kernel, which on a CPU is faster than explicit
score blocks. The attention core is a small part of a layer's time; the rest is the per-token matrix
products, so a pass costs about what the plain encoder costs for ``L + E`` tokens.

With ``entity_aware=False`` (LUKE's ablation) or without entities it is the plain attention of the
layer (``d``-dimensional queries from ``Q``).
"""

import math
from typing import Optional, Protocol, Tuple

import torch
import torch.nn.functional as F


class BertStyleSelfAttention(Protocol):
    """What :class:`EntityAwareSelfAttention` reads of an HF layer's ``attention.self`` (BERT/RoBERTa style)."""

    num_attention_heads: int
    attention_head_size: int
    query: torch.nn.Linear
    key: torch.nn.Linear
    value: torch.nn.Linear
    dropout: torch.nn.Dropout


class EntityAwareSelfAttention(torch.nn.Module):
    """
    Holds the three extra query projections of one layer (none when ``entity_aware`` is False);
    the pretrained self-attention module (``query``, ``key``, ``value``, ``dropout``) is passed to
    ``forward`` rather than stored, so its weights stay registered only once, in the HF model.

    # Parameters

    self_attention : `torch.nn.Module`
        The HF layer's ``attention.self`` (BERT/RoBERTa style); gives the sizes and the query to copy.
    entity_aware : `bool`, optional (default = `True`)
        The three extra queries; False: the plain attention of the layer (LUKE's ablation).
    """

    def __init__(self, self_attention: BertStyleSelfAttention, entity_aware: bool = True) -> None:
        super().__init__()
        self.num_heads = int(self_attention.num_attention_heads)
        self.head_size = int(self_attention.attention_head_size)
        self.entity_aware = entity_aware
        if entity_aware:
            query = self_attention.query
            self.word_to_entity_query = torch.nn.Linear(query.in_features, query.out_features)
            self.entity_to_word_query = torch.nn.Linear(query.in_features, query.out_features)
            self.entity_to_entity_query = torch.nn.Linear(query.in_features, query.out_features)
            self.copy_query(query)

    def extra_queries(self):
        if not self.entity_aware:
            return []
        return [self.word_to_entity_query, self.entity_to_word_query, self.entity_to_entity_query]

    @torch.no_grad()
    def copy_query(self, query: torch.nn.Linear) -> None:
        """Sets the three extra queries to copies of ``query`` (done when the pretrained weights are loaded)."""
        for extra in self.extra_queries():
            extra.weight.copy_(query.weight)
            extra.bias.copy_(query.bias)

    def _heads(self, states: torch.Tensor) -> torch.Tensor:
        """[B, N, nh * d] -> [B, nh, N, d]"""
        return states.view(states.size(0), states.size(1), self.num_heads, self.head_size).transpose(1, 2)

    def fused_projection(
        self, self_attention: BertStyleSelfAttention, first: torch.nn.Linear, second: torch.nn.Linear
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """
        One ``[4 H, H]`` weight (and ``[4 H]`` bias) for everything a token of one type needs:
        per head the ``d`` rows of ``first`` then the ``d`` rows of ``second`` (its two queries,
        so that the first ``2 H`` outputs read as ``[nh, 2d]`` queries), then the key and the
        value of the pretrained layer. Words: ``(query, word_to_entity_query)``; entities:
        ``(entity_to_word_query, entity_to_entity_query)``.
        """
        heads, size = self.num_heads, self.head_size
        weight = torch.cat(
            [
                torch.stack([first.weight.view(heads, size, -1), second.weight.view(heads, size, -1)], dim=1).flatten(
                    0, 2
                ),
                self_attention.key.weight,
                self_attention.value.weight,
            ]
        )
        bias = torch.cat(
            [
                torch.stack([first.bias.view(heads, size), second.bias.view(heads, size)], dim=1).flatten(),
                self_attention.key.bias,
                self_attention.value.bias,
            ]
        )
        return weight, bias

    def forward(
        self,
        self_attention: BertStyleSelfAttention,
        hidden: torch.Tensor,
        num_words: int,
        key_mask: Optional[torch.Tensor],
    ) -> torch.Tensor:
        """
        The attention of one layer over ``[words; entities]``.

        # Parameters

        self_attention : `torch.nn.Module`
            The HF layer's ``attention.self``.
        hidden : `torch.FloatTensor`
            `[B, L + E, H]` the layer's input, words first.
        num_words : `int`
            ``L``.
        key_mask : `Optional[torch.BoolTensor]`
            `[B, L + E]` (True: real token), or None.

        # Returns

        `torch.FloatTensor`
            `[B, L + E, nh * d]` context, before the layer's output projection (``nh`` heads of
            size ``d``).
        """
        batch_size, length, _ = hidden.shape
        attn_mask = None if key_mask is None else key_mask[:, None, None, :].bool()
        dropout = self_attention.dropout.p if self.training else 0.0
        scale = 1.0 / math.sqrt(self.head_size)
        if not (self.entity_aware and length > num_words):
            context = F.scaled_dot_product_attention(
                self._heads(self_attention.query(hidden)),
                self._heads(self_attention.key(hidden)),
                self._heads(self_attention.value(hidden)),
                attn_mask=attn_mask,
                dropout_p=dropout,
                scale=scale,
            )
            return context.transpose(1, 2).reshape(batch_size, length, -1)
        heads, size = self.num_heads, self.head_size
        width = heads * size
        word_part = hidden[:, :num_words].reshape(-1, hidden.size(-1))  # 2-d: one matrix product, not a batch
        entity_part = hidden[:, num_words:].reshape(-1, hidden.size(-1))
        words = F.linear(
            word_part, *self.fused_projection(self_attention, self_attention.query, self.word_to_entity_query)
        ).view(batch_size, num_words, 4 * width)
        entities = F.linear(
            entity_part, *self.fused_projection(self_attention, self.entity_to_word_query, self.entity_to_entity_query)
        ).view(batch_size, length - num_words, 4 * width)
        queries = torch.cat([words[..., : 2 * width], entities[..., : 2 * width]], dim=1)  # [B, N, 2 H]
        # keys [k ; 0] for words, [0 ; k] for entities; values [v ; 0]
        keys = hidden.new_zeros((batch_size, length, heads, 2, size))
        keys[:, :num_words, :, 0] = words[..., 2 * width : 3 * width].view(batch_size, num_words, heads, size)
        keys[:, num_words:, :, 1] = entities[..., 2 * width : 3 * width].view(batch_size, -1, heads, size)
        values = hidden.new_zeros((batch_size, length, heads, 2, size))
        values[:, :num_words, :, 0] = words[..., 3 * width :].view(batch_size, num_words, heads, size)
        values[:, num_words:, :, 0] = entities[..., 3 * width :].view(batch_size, -1, heads, size)
        context = F.scaled_dot_product_attention(
            queries.view(batch_size, length, heads, 2 * size).transpose(1, 2),
            keys.view(batch_size, length, heads, 2 * size).transpose(1, 2),
            values.view(batch_size, length, heads, 2 * size).transpose(1, 2),
            attn_mask=attn_mask,
            dropout_p=dropout,
            scale=scale,
        )  # [B, nh, N, 2d]
        return context[..., :size].transpose(1, 2).reshape(batch_size, length, width)
