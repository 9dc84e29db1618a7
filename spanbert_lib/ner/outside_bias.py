"""
Choosing ``spanbert_span_ner``'s ``outside_logit_bias`` on held-out documents.

A span classifier trained on a sample of the non-entity spans (``negative_spans_per_instance``)
over-predicts entities: at prediction time nearly every candidate is a non-entity, far more than
training showed it. Adding a bias ``b`` to the non-entity logit makes a span an entity only where its
best entity logit beats the non-entity logit by more than ``b``; ``b`` moves the model along its
precision/recall curve without retraining. The encoder runs once over the documents
(:func:`span_logits`); every bias of the grid is then a cheap re-decoding (:func:`scores_at_bias`),
and :func:`choose_outside_bias` keeps the one with the best exact-match F1.

Choose it on documents the model was not trained on and that are not the ones you report on (e.g.
train on part of the training files, choose on the rest): a bias chosen on the dev or test documents is
tuned to them.
"""

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Sequence, Tuple, cast

import numpy as np
import torch
from allennlp.common.tqdm import Tqdm
from allennlp.data import Batch, Instance
from allennlp.data.fields import MetadataField
from allennlp.nn import util as nn_util

from spanbert_lib.ner.metrics.ner_span_f1 import count_entities, precision_recall_f1


@dataclass
class SentenceSpans:
    """One sentence's candidate spans: ``logits`` ``[S, K]`` (before ``outside_logit_bias``),
    ``word_spans`` ``[S, 2]`` (inclusive word offsets) and its gold ``(start, end, label)`` entities."""

    logits: np.ndarray
    word_spans: np.ndarray
    gold: List[Tuple[int, int, str]]


@dataclass
class BiasScores:
    """Exact-match micro precision / recall / F1 (fractions) of the entities decoded at ``bias``, and how many
    entities that is."""

    bias: float
    precision: float
    recall: float
    f1: float
    predicted: int

    def as_dict(self) -> Dict[str, float]:
        return {name: getattr(self, name) for name in ("bias", "precision", "recall", "f1", "predicted")}


DEFAULT_GRID = (-2.0, 6.0, 0.25)
"""``(start, stop, step)`` of :func:`default_grid` (the sampling correction of a 24-negative recipe,
log(S / 24), is about 1-3)."""


def bias_grid(start: float, stop: float, step: float) -> List[float]:
    """``start``, ``start + step``, ... up to ``stop`` inclusive (rounded to 4 decimals)."""
    if step <= 0 or stop < start:
        raise ValueError(f"needs START <= STOP and a positive STEP, got {start} {stop} {step}")
    count = int(round((stop - start) / step)) + 1
    return [round(start + step * index, 4) for index in range(count) if start + step * index <= stop + 1e-9]


def default_grid() -> List[float]:
    """:data:`DEFAULT_GRID`: -2 to 6 in steps of 0.25."""
    return bias_grid(*DEFAULT_GRID)


def span_logits(model, instances: Iterable[Instance], batch_size: int = 16) -> List[SentenceSpans]:
    """
    Runs ``model`` (a ``spanbert_span_ner``, in eval mode) over ``instances`` of its reader with gold
    entities, ``batch_size`` at a time, and keeps each sentence's span logits with
    ``outside_logit_bias`` at 0 (``correct_sampled_prior`` stays as configured).
    """
    instances = list(instances)
    if any(cast(MetadataField, instance["metadata"]).metadata.get("gold_entities") is None for instance in instances):
        raise ValueError("ner-outside-bias needs gold entities in every sentence of the held-out data")
    model.eval()
    kept_bias, model.outside_logit_bias = model.outside_logit_bias, 0.0
    device = next(model.parameters()).device
    collected: Dict[int, SentenceSpans] = {}
    order = sorted(range(len(instances)), key=lambda index: len(instances[index]["spans"]))  # little padding
    try:
        with torch.no_grad():
            for start in Tqdm.tqdm(range(0, len(order), batch_size), desc="span logits"):
                chunk = order[start : start + batch_size]
                batch = Batch([instances[index] for index in chunk])
                batch.index_instances(model.vocab)
                tensors = nn_util.move_to_device(batch.as_tensor_dict(), device)
                # no labels (no loss, the model's own metric untouched) and no metadata (no decoding): logits only
                inputs = {name: value for name, value in tensors.items() if name not in ("span_labels", "metadata")}
                logits = model(**inputs)["logits"].float().cpu().numpy()  # [B, S, K]
                for row, (index, item) in enumerate(zip(chunk, tensors["metadata"])):
                    word_spans = np.asarray(item["word_spans"], dtype=np.int64).reshape(-1, 2)
                    gold = [tuple(entity) for entity in item["gold_entities"]]
                    collected[index] = SentenceSpans(logits[row, : len(word_spans)], word_spans, gold)
    finally:
        model.outside_logit_bias = kept_bias
    return [collected[index] for index in range(len(instances))]


def entities_at_bias(model, sentences: Sequence[SentenceSpans], bias: float) -> List[List[Tuple[int, int, str]]]:
    """Each sentence's entities as ``model`` decodes them with ``bias`` on the non-entity logit."""
    if not sentences:
        return []
    longest = max(len(sentence.word_spans) for sentence in sentences)
    predicted = np.zeros((len(sentences), longest), dtype=np.int64)
    scores = np.zeros((len(sentences), longest), dtype=np.float32)
    for row, sentence in enumerate(sentences):
        logits = sentence.logits.astype(np.float64)  # [S, K]
        logits[:, model.outside_index] += bias
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        predicted[row, : len(logits)] = probs.argmax(axis=1)
        scores[row, : len(logits)] = probs.max(axis=1)
    metadata = [{"word_spans": sentence.word_spans} for sentence in sentences]
    entities, _ = model.decode(metadata, torch.from_numpy(predicted), torch.from_numpy(scores))
    return entities


def scores_at_bias(model, sentences: Sequence[SentenceSpans], bias: float) -> BiasScores:
    """:func:`entities_at_bias` scored against the gold entities."""
    entities = entities_at_bias(model, sentences, bias)
    correct, guessed, expected = count_entities(entities, [sentence.gold for sentence in sentences])
    counts = sum(correct.values()), sum(guessed.values()), sum(expected.values())
    return BiasScores(float(bias), *precision_recall_f1(*counts), counts[1])


def choose_outside_bias(
    model, sentences: Sequence[SentenceSpans], grid: Sequence[float]
) -> Tuple[BiasScores, List[BiasScores]]:
    """The grid's scores and the best of them: the highest F1, on ties the bias closest to 0 (then the lower)."""
    if not grid:
        raise ValueError("ner-outside-bias: the grid of biases is empty")
    table = [scores_at_bias(model, sentences, bias) for bias in grid]
    best = max(table, key=lambda row: (row.f1, -abs(row.bias), -row.bias))
    return best, table


def summary(sentences: Sequence[SentenceSpans]) -> Dict[str, Any]:
    """Counts of a set of sentences: ``sentences``, ``candidate_spans``, ``gold_entities``."""
    return {
        "sentences": len(sentences),
        "candidate_spans": int(sum(len(sentence.word_spans) for sentence in sentences)),
        "gold_entities": int(sum(len(set(sentence.gold)) for sentence in sentences)),
    }
