"""
The inputs of the exported graphs from what the library's readers produce: instances are tensorised
as the model's data loader would (:func:`batch_tensors`), then laid out as each graph takes them
(int64 numpy arrays keyed by input name). These are the steps that stay in PyTorch around the
graphs (``export.json`` lists them).
"""

from typing import Any, Dict, Sequence, Tuple

import numpy as np
import torch
from allennlp.data import Batch, Instance
from allennlp.models import Model

from spanbert_lib.common.modules.span_inputs import wordpiece_inputs
from spanbert_lib.ner.models.span_chunks import SpanChunkLayout

Arrays = Dict[str, np.ndarray]


def batch_tensors(model: Model, instances: Sequence[Instance]) -> Dict[str, Any]:
    """The tensors of ``instances`` as one batch, indexed with the model's vocabulary."""
    batch = Batch(list(instances))
    batch.index_instances(model.vocab)
    return batch.as_tensor_dict()


def _arrays(**tensors: torch.Tensor) -> Arrays:
    return {name: tensor.detach().cpu().long().numpy() for name, tensor in tensors.items()}


def qa_window_inputs(tensors: Dict[str, Any], token_types: bool = True) -> Tuple[Arrays, torch.Tensor]:
    """
    The real windows of a ``spanbert_squad`` / ``mrqa`` batch, one row each.

    # Parameters

    tensors : `Dict[str, Any]`
        The batch (``input_ids``, ``token_type_ids``, ``attention_mask`` `[batch, W, T]`).
    token_types : `bool`, optional (default = `True`)
        Whether the graph takes ``token_type_ids``.

    # Returns

    `Tuple[Arrays, torch.Tensor]`
        The graph's inputs `[R, T]` and which ``(question, window)`` each row is (`[R, 2]`).
    """
    real = tensors["attention_mask"][:, :, 0].bool()  # [batch, W]: position 0 exists in every real window
    arrays = _arrays(input_ids=tensors["input_ids"][real], attention_mask=tensors["attention_mask"][real])
    if token_types:
        arrays["token_type_ids"] = tensors["token_type_ids"][real].detach().cpu().long().numpy()
    return arrays, real.nonzero()


def span_ner_rows(tokens: Dict[str, Any], spans: torch.Tensor, max_entities_per_pass: int) -> Tuple[Arrays, Any]:
    """
    A span-NER batch as the rows the model encodes: each instance's spans spread over passes of at
    most ``max_entities_per_pass`` (:class:`~spanbert_lib.ner.models.span_chunks.SpanChunkLayout`),
    each pass with a copy of the instance's words.

    # Parameters

    tokens : `Dict[str, Any]`
        The batch's ``tokens`` text field tensors (wordpieces `[B, L]`).
    spans : `torch.Tensor`
        `[B, S, 2]` candidate spans (inclusive wordpiece positions, -1 padding).
    max_entities_per_pass : `int`
        The model's.

    # Returns

    `Tuple[Arrays, SpanChunkLayout]`
        The graph's inputs (`[R, L]` words, `[R, E, 2]` spans, `[R, E]` span mask) and the layout,
        whose ``unpack`` turns `[R, E, K]` outputs back into `[B, S, K]`.
    """
    token_ids, mask, type_ids = wordpiece_inputs(tokens)
    span_mask = spans[..., 0] >= 0
    layout = SpanChunkLayout(span_mask, max_entities_per_pass)
    rows = layout.row_instance
    types = torch.zeros_like(token_ids) if type_ids is None else type_ids
    arrays = _arrays(
        input_ids=token_ids[rows],
        attention_mask=mask[rows],
        token_type_ids=types[rows],
        spans=layout.pack(spans.clamp(min=0), 0),
        span_mask=layout.slot_mask(),
    )
    return arrays, layout


def span_ner_unpack(layout: Any, values: np.ndarray) -> np.ndarray:
    """`[R, E, K]` graph outputs as `[B, S, K]` (zeros at padded spans)."""
    return layout.unpack(torch.from_numpy(np.ascontiguousarray(values))).numpy()


def coref_document_inputs(text: Dict[str, Any], spans: torch.Tensor, index: int = 0) -> Arrays:
    """
    One document of a ``spanbert_coref`` batch as the ``coref_mention_scores`` graph takes it.

    # Parameters

    text : `Dict[str, Any]`
        The batch's ``text`` field tensors (``segmented_wordpiece`` indexer).
    spans : `torch.Tensor`
        `[B, N, 2]` candidate spans, inclusive word offsets (-1 padding).
    index : `int`, optional (default = `0`)
        Which document of the batch.

    # Returns

    `Arrays`
        ``input_ids`` / ``segment_mask`` `[S, L]` (the document's real segments),
        ``piece_positions`` `[P]`, ``span_starts`` / ``span_ends`` / ``widths`` `[N]`.
    """
    tensors = next(tensors for tensors in text.values() if "piece_positions" in tensors)
    segment_mask = tensors["segment_mask"][index]
    real_segments = segment_mask.any(dim=-1)
    num_pieces = int(tensors["mask"][index].sum())
    num_words = int(tensors["word_mask"][index].sum())
    candidates = spans[index][spans[index][:, 0] >= 0]
    word_starts = tensors["word_starts"][index, :num_words]
    word_ends = tensors["word_ends"][index, :num_words]
    return _arrays(
        input_ids=tensors["input_ids"][index][real_segments],
        segment_mask=segment_mask[real_segments],
        piece_positions=tensors["piece_positions"][index, :num_pieces],
        span_starts=word_starts[candidates[:, 0]],
        span_ends=word_ends[candidates[:, 1]],
        widths=candidates[:, 1] - candidates[:, 0],
    )
