"""
Turning per-span predictions into entities.

* :func:`decode_flat` (flat NER, e.g. CoNLL-2003; the greedy decoding of LUKE): take the spans
  predicted as an entity in descending order of score, keep one unless it overlaps a span
  already kept.
* :func:`decode_nested` (nested NER, e.g. LitBank): keep every span predicted as an entity,
  except that, again in descending order of score, a span is dropped if it *crosses* a span
  already kept (overlaps it without one containing the other); nesting is allowed.

Inputs are torch tensors or numpy arrays for one sentence: ``spans`` ``(S, 2)`` inclusive word
offsets, ``labels`` ``(S,)`` predicted label ids, ``scores`` ``(S,)`` (e.g. the probability or
logit of the predicted label), optional ``mask`` ``(S,)`` (False: padding, ignored). Ties in
score keep the input order (the readers order spans by start, then end). Outputs are lists of
``(start, end, label)`` ordered by (start, end); ``label`` is the id, or its name when
``label_names`` (a list, or a dict id -> name such as
``vocab.get_index_to_token_vocabulary("labels")``) is given.
"""

from typing import List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import torch

ArrayLike = Union[torch.Tensor, np.ndarray, Sequence]
Label = Union[int, str]
LabelNames = Union[Sequence[str], Mapping[int, str]]


def _as_numpy(values: ArrayLike) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        return values.detach().cpu().numpy()
    return np.asarray(values)


def _ranked_candidates(
    spans: ArrayLike, labels: ArrayLike, scores: ArrayLike, outside_label: int, mask: Optional[ArrayLike]
) -> Tuple[np.ndarray, np.ndarray]:
    """Spans ``(K, 2)`` and labels ``(K,)`` predicted as entities, by descending score (stable)."""
    spans_np = _as_numpy(spans).astype(np.int64).reshape(-1, 2)
    labels_np = _as_numpy(labels).astype(np.int64).reshape(-1)
    scores_np = _as_numpy(scores).astype(np.float64).reshape(-1)
    if not len(spans_np) == len(labels_np) == len(scores_np):
        raise ValueError(
            f"decoding needs one label and score per span, got {len(spans_np)} spans, "
            f"{len(labels_np)} labels, {len(scores_np)} scores"
        )
    keep = labels_np != outside_label
    if mask is not None:
        mask_np = _as_numpy(mask).astype(bool).reshape(-1)
        if len(mask_np) != len(spans_np):
            raise ValueError(f"decoding: mask of {len(mask_np)} for {len(spans_np)} spans")
        keep &= mask_np
    keep &= (spans_np[:, 0] >= 0) & (spans_np[:, 0] <= spans_np[:, 1])  # padding spans are (-1, -1)
    candidates = np.flatnonzero(keep)
    order = candidates[np.argsort(-scores_np[candidates], kind="stable")]
    return spans_np[order], labels_np[order]


def _output(spans: np.ndarray, labels: np.ndarray, label_names: Optional[LabelNames]) -> List[Tuple[int, int, Label]]:
    order = np.lexsort((spans[:, 1], spans[:, 0])) if len(spans) else np.zeros(0, dtype=np.int64)
    ids = labels[order].tolist()
    names = ids if label_names is None else [label_names[i] for i in ids]
    return [(start, end, name) for (start, end), name in zip(spans[order].tolist(), names)]


def decode_flat(
    spans: ArrayLike,
    labels: ArrayLike,
    scores: ArrayLike,
    outside_label: int = 0,
    mask: Optional[ArrayLike] = None,
    label_names: Optional[LabelNames] = None,
) -> List[Tuple[int, int, Label]]:
    """Non-overlapping entities, greedily by descending score (module docstring)."""
    ranked, ranked_labels = _ranked_candidates(spans, labels, scores, outside_label, mask)
    if not len(ranked):
        return []
    taken = np.zeros(int(ranked[:, 1].max()) + 1, dtype=bool)
    kept = np.zeros(len(ranked), dtype=bool)
    for index, (start, end) in enumerate(ranked.tolist()):
        if not taken[start : end + 1].any():
            taken[start : end + 1] = True
            kept[index] = True
    return _output(ranked[kept], ranked_labels[kept], label_names)


def decode_nested(
    spans: ArrayLike,
    labels: ArrayLike,
    scores: ArrayLike,
    outside_label: int = 0,
    mask: Optional[ArrayLike] = None,
    label_names: Optional[LabelNames] = None,
) -> List[Tuple[int, int, Label]]:
    """Entities that may nest but never cross, greedily by descending score (module docstring)."""
    ranked, ranked_labels = _ranked_candidates(spans, labels, scores, outside_label, mask)
    if not len(ranked):
        return []
    # a span (s, e) crosses a kept (a, b) iff a < s <= b < e (a kept span ending inside it started before
    # it) or s < a <= e < b (one starting inside it ends after it): per word, the earliest start of the
    # kept spans ending there and the latest end of those starting there answer both in O(e - s)
    positions = int(ranked[:, 1].max()) + 1
    earliest_start_ending_at = [positions] * positions
    latest_end_starting_at = [-1] * positions
    kept = np.zeros(len(ranked), dtype=bool)
    for index, (start, end) in enumerate(ranked.tolist()):
        if min(earliest_start_ending_at[start:end], default=start) < start:
            continue
        if max(latest_end_starting_at[start + 1 : end + 1], default=end) > end:
            continue
        earliest_start_ending_at[end] = min(earliest_start_ending_at[end], start)
        latest_end_starting_at[start] = max(latest_end_starting_at[start], end)
        kept[index] = True
    return _output(ranked[kept], ranked_labels[kept], label_names)


def decode_batch(
    spans: ArrayLike,
    labels: ArrayLike,
    scores: ArrayLike,
    mask: Optional[ArrayLike] = None,
    nested: bool = False,
    outside_label: int = 0,
    label_names: Optional[LabelNames] = None,
) -> List[List[Tuple[int, int, Label]]]:
    """
    :func:`decode_flat` (or :func:`decode_nested`) on each sentence of a batch of `B`
    sentences with `S` candidate spans each.

    # Parameters

    spans : `ArrayLike`
        `[B, S, 2]` inclusive word offsets.
    labels : `ArrayLike`
        `[B, S]` label id of each span.
    scores : `ArrayLike`
        `[B, S]` score of each span's label.
    mask : `ArrayLike`, optional (default = `None`)
        `[B, S]` real spans.
    nested : `bool`, optional (default = `False`)
        Decode with :func:`decode_nested` instead of :func:`decode_flat`.
    outside_label : `int`, optional (default = `0`)
        The label id of non-entities.
    label_names : `LabelNames`, optional (default = `None`)
        Names to give the entities instead of ids.

    # Returns

    `List[List[Tuple[int, int, Label]]]`
        The ``(start, end, label)`` entities of each sentence.
    """
    decode = decode_nested if nested else decode_flat
    spans_np, labels_np, scores_np = _as_numpy(spans), _as_numpy(labels), _as_numpy(scores)
    mask_np = None if mask is None else _as_numpy(mask)
    return [
        decode(
            spans_np[i], labels_np[i], scores_np[i], outside_label, None if mask_np is None else mask_np[i], label_names
        )
        for i in range(len(spans_np))
    ]
