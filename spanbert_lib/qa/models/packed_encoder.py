"""
Padding-free ("packed") inference through a BERT encoder: the real wordpieces of all windows are
concatenated into one sequence for the embeddings, the linear layers, GELU and layer norms (one
large matrix product per layer, no padding rows), and attention runs window by window (each
window attends to itself only, without a mask). The arithmetic is BERT's own (same modules, same
weights, same float32 operations); only the padding work is gone. When only some positions' last
hidden states are wanted (QA decodes the passage and [CLS] positions, never the question's), the last
layer computes its queries, attention output and feed-forward block for those rows only; its keys and
values still come from every wordpiece, so the wanted rows are unchanged. Used by ``spanbert_qa``
outside training (no dropout), for ``transformers.BertModel`` encoders with absolute positions (BERT,
SpanBERT, MiniLM); other encoders take the usual padded forward pass.

Shapes: `S` sequences (windows), `T` positions of the longest, `R` real wordpieces over all
sequences, `K` wanted wordpieces, `H` hidden size.
"""

from typing import TYPE_CHECKING, List, Optional, cast

import torch
import torch.nn.functional as F
import transformers

if TYPE_CHECKING:
    from transformers.models.bert.modeling_bert import BertLayer


def supports_packed_inference(encoder: torch.nn.Module) -> bool:
    """
    Whether :func:`packed_bert_hidden` reproduces ``encoder``'s forward pass.

    # Parameters

    encoder : `torch.nn.Module`
        The encoder to check.

    # Returns

    `bool`
        True for a ``transformers.BertModel`` with absolute positions that is no decoder.
    """
    config = getattr(encoder, "config", None)
    return (
        isinstance(encoder, transformers.BertModel)
        and config is not None
        and getattr(config, "position_embedding_type", "absolute") == "absolute"
        and not config.is_decoder
        and not getattr(config, "add_cross_attention", False)
    )


def packed_bert_hidden(
    encoder: transformers.BertModel,
    input_ids: torch.Tensor,
    token_type_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    max_tokens: int = 2048,
    wanted: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """
    The last hidden state of every real (or every wanted) wordpiece, without padding work.

    # Parameters

    encoder : `transformers.BertModel`
        An encoder :func:`supports_packed_inference` accepts.
    input_ids : `torch.Tensor`
        `[S, T]` integer wordpiece ids.
    token_type_ids : `torch.Tensor`
        `[S, T]` integer.
    attention_mask : `torch.Tensor`
        `[S, T]` bool, True on a prefix of each row (the real wordpieces).
    max_tokens : `int`, optional (default = `2048`)
        Rows are encoded in consecutive chunks of at most this many real wordpieces (at least
        one row), which keeps a chunk's activations small: a feed-forward activation of 4096
        wordpieces (25 MB for MiniLM) is mapped fresh from the system and page-faulted at every
        layer, about 8% more CPU time than chunks of 2048 (same arithmetic).
    wanted : `torch.Tensor`, optional (default = `None`)
        `[S, T]` bool, within ``attention_mask``: the positions whose last hidden state is returned;
        the last layer works on these rows only. None: every real wordpiece.

    # Returns

    `torch.Tensor`
        `[R, H]` (`[K, H]` with ``wanted``), in the order of ``attention_mask.nonzero()``
        (``wanted.nonzero()``), row by row.
    """
    lengths: List[int] = attention_mask.sum(1).tolist()
    positions = attention_mask.long().cumsum(1) - 1
    outputs = []
    begin = 0
    while begin < len(lengths):
        end, total = begin + 1, lengths[begin]
        while end < len(lengths) and total + lengths[end] <= max_tokens:
            total += lengths[end]
            end += 1
        mask = attention_mask[begin:end]
        outputs.append(
            _encode_packed(
                encoder,
                input_ids[begin:end][mask],
                token_type_ids[begin:end][mask],
                positions[begin:end][mask],
                lengths[begin:end],
                None if wanted is None else wanted[begin:end][mask],
            )
        )
        begin = end
    return torch.cat(outputs) if outputs else input_ids.new_zeros((0, encoder.config.hidden_size), dtype=torch.float)


def _encode_packed(
    encoder: transformers.BertModel,
    input_ids: torch.Tensor,
    token_type_ids: torch.Tensor,
    position_ids: torch.Tensor,
    lengths: List[int],
    wanted: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """
    `[sum(lengths), H]` for the concatenated wordpieces of ``len(lengths)`` sequences; `[wanted.sum(), H]`
    when ``wanted`` (`[sum(lengths)]` bool) says which rows the last layer computes.
    """
    hidden = encoder.embeddings(
        input_ids=input_ids[None].long(), token_type_ids=token_type_ids[None].long(), position_ids=position_ids[None]
    )[0]
    layers = encoder.encoder.layer
    for index, module in enumerate(layers):
        layer = cast("BertLayer", module)  # the layers of a BertModel
        rows, row_lengths = hidden, lengths
        if wanted is not None and index == len(layers) - 1:
            rows = hidden[wanted]
            row_lengths = [int(part.sum()) for part in wanted.split(lengths)]
        attention = layer.attention.self
        heads, size = attention.num_attention_heads, attention.attention_head_size
        query, key, value = attention.query(rows), attention.key(hidden), attention.value(hidden)
        context = []
        for q, k, v in zip(query.split(row_lengths), key.split(lengths), value.split(lengths)):
            q = q.view(1, q.size(0), heads, size).transpose(1, 2)
            k, v = (t.view(1, t.size(0), heads, size).transpose(1, 2) for t in (k, v))
            context.append(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(-1, heads * size))
        attended = layer.attention.output(torch.cat(context), rows)
        hidden = layer.output(layer.intermediate(attended), attended)
    return hidden
