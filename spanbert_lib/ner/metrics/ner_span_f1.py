"""
Exact-match entity precision / recall / F1, as ``conlleval`` computes them: an entity counts as
correct iff a predicted entity has the same boundaries and the same type. Micro-averaged over all
entities, plus the same three numbers per label. Values are fractions in [0, 1]; a precision
(recall) with no predicted (gold) entity is 0, as is F1 when P + R = 0.
"""

from collections import Counter
from typing import Dict, Hashable, Iterable, List, Optional, Sequence, Tuple, cast

import torch.distributed as dist
from allennlp.common.util import is_distributed
from allennlp.training.metrics.metric import Metric

EntityTuple = Tuple[int, int, Hashable]


def precision_recall_f1(correct: int, predicted: int, gold: int) -> Tuple[float, float, float]:
    precision = correct / predicted if predicted else 0.0
    recall = correct / gold if gold else 0.0
    f1 = 2.0 * precision * recall / (precision + recall) if precision + recall > 0.0 else 0.0
    return precision, recall, f1


def _entity_set(entities: Iterable[Sequence]) -> set:
    out = set()
    for entity in entities:
        start, end, label = entity
        out.add((int(start), int(end), label))
    return out


def count_entities(
    predicted: Sequence[Iterable[Sequence]], gold: Sequence[Optional[Iterable[Sequence]]]
) -> Tuple[Counter, Counter, Counter]:
    """
    Per-label entity counts of aligned sentences; repeated entities within a sentence count once.

    # Parameters

    predicted : `Sequence[Iterable[Sequence]]`
        ``predicted[i]``: the predicted ``(start, end, label)`` entities of sentence ``i``.
    gold : `Sequence[Iterable[Sequence]]`
        ``gold[i]``: the gold entities of sentence ``i``, in the same form.

    # Returns

    `Tuple[Counter, Counter, Counter]`
        ``(correct, predicted, gold)`` counts per label.
    """
    if len(predicted) != len(gold):
        raise ValueError(f"ner_span_f1: {len(predicted)} predicted sentences but {len(gold)} gold sentences")
    correct: Counter = Counter()
    guessed: Counter = Counter()
    expected: Counter = Counter()
    for sentence_predicted, sentence_gold in zip(predicted, gold):
        predicted_set, gold_set = _entity_set(sentence_predicted), _entity_set(sentence_gold or ())
        correct.update(label for _, _, label in predicted_set & gold_set)
        guessed.update(label for _, _, label in predicted_set)
        expected.update(label for _, _, label in gold_set)
    return correct, guessed, expected


def entity_scores(correct: Counter, predicted: Counter, gold: Counter) -> Dict[str, float]:
    """
    Micro-averaged and per-label scores from entity counts.

    # Parameters

    correct : `Counter`
        Correct entities per label.
    predicted : `Counter`
        Predicted entities per label.
    gold : `Counter`
        Gold entities per label.

    # Returns

    `Dict[str, float]`
        ``precision``, ``recall``, ``f1`` (micro) and ``precision-L``, ``recall-L``, ``f1-L`` per
        label L.
    """
    scores: Dict[str, float] = {}
    for label in sorted(set(predicted) | set(gold), key=str):
        p, r, f = precision_recall_f1(correct[label], predicted[label], gold[label])
        scores[f"precision-{label}"], scores[f"recall-{label}"], scores[f"f1-{label}"] = p, r, f
    p, r, f = precision_recall_f1(sum(correct.values()), sum(predicted.values()), sum(gold.values()))
    scores["precision"], scores["recall"], scores["f1"] = p, r, f
    return scores


@Metric.register("ner_span_f1")
class NerSpanF1(Metric):
    """
    Accumulates exact-match entity counts over batches (module docstring).

    ``get_metric`` returns ``precision``, ``recall``, ``f1`` and ``precision-L``, ``recall-L``,
    ``f1-L`` for each label L seen so far. In distributed training each call sums the counts of
    all workers (every worker must call it).
    """

    supports_distributed = True

    def __init__(self) -> None:
        self.reset()

    def __call__(  # type: ignore[override]  # why: takes entity spans, not allennlp's tensors
        self,
        predicted: Sequence[Iterable[Sequence]],
        gold: Sequence[Optional[Iterable[Sequence]]],
    ) -> None:
        """
        Adds the entities of a batch of sentences.

        # Parameters

        predicted : `Sequence[Iterable[Sequence]]`
            One list per sentence of predicted ``(start, end, label)`` entities, e.g. the output
            of :func:`~spanbert_lib.ner.decoding.decode_flat`.
        gold : `Sequence[Iterable[Sequence]]`
            The gold entities of the same sentences, e.g. ``metadata["gold_entities"]`` of the
            span-NER readers; labels of the two sides must be of the same kind (names, or ids).
        """
        counts = count_entities(predicted, gold)
        if is_distributed():
            gathered: List = [None] * dist.get_world_size()
            dist.all_gather_object(gathered, counts)
            summed: Tuple[Counter, ...] = tuple(sum((worker[k] for worker in gathered), Counter()) for k in range(3))
            counts = cast(Tuple[Counter, Counter, Counter], summed)  # (correct, predicted, gold)
        self._correct.update(counts[0])
        self._predicted.update(counts[1])
        self._gold.update(counts[2])

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        scores = entity_scores(self._correct, self._predicted, self._gold)
        if reset:
            self.reset()
        return scores

    @property
    def predicted_count(self) -> int:
        """Entities predicted since the last reset."""
        return sum(self._predicted.values())

    def reset(self) -> None:
        self._correct: Counter = Counter()
        self._predicted: Counter = Counter()
        self._gold: Counter = Counter()
