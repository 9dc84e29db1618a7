"""
allennlp ``Metric`` wrappers around :mod:`spanbert_lib.qa.metrics.squad_evaluation`, fed one
batch of questions at a time during training/validation. Scores are percentages, with the
keys of the official scripts.

Shapes: `B` questions in a batch, `Q` questions seen since the last reset.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.distributed as dist
from allennlp.common.util import is_distributed
from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics.metric import Metric

from spanbert_lib.qa.metrics.squad_evaluation import (
    SquadEvaluationError,
    score_question_v1,
    score_question_v2,
)

Scores = Union[torch.Tensor, Sequence[float]]


def _check_batch(best_span_strings: Sequence[str], answer_texts: Sequence[Sequence[str]]) -> None:
    if len(best_span_strings) != len(answer_texts):
        raise ValueError(f"{len(best_span_strings)} predictions but {len(answer_texts)} gold answer lists")
    for prediction in best_span_strings:
        if not isinstance(prediction, str):
            raise ValueError(f"predictions must be strings, got {prediction!r}")


def _gather(columns: List[list]) -> List[list]:
    """Per-question columns of all workers, each concatenated in rank order (this worker's alone
    when not distributed)."""
    if not is_distributed():
        return columns
    gathered: List[Any] = [None] * dist.get_world_size()  # all_gather_object puts each worker's columns in
    dist.all_gather_object(gathered, columns)
    return [[value for worker in gathered for value in worker[c]] for c in range(len(columns))]


@Metric.register("squad_metrics")
class SquadV1Metrics(Metric):
    """
    SQuAD v1.1 exact match and F1 (``evaluate-v1.1.py`` rules), in percent:
    ``{"exact_match": ..., "f1": ...}``. Every question needs at least one gold answer.
    """

    supports_distributed = True

    def __init__(self) -> None:
        self._exact_sum = 0.0
        self._f1_sum = 0.0
        self._count = 0

    def __call__(  # type: ignore[override]  # why: takes answer strings, not allennlp's tensors
        self,
        best_span_strings: Sequence[str],
        answer_texts: Sequence[Sequence[str]],
    ) -> None:
        """
        Scores a batch of questions.

        # Parameters

        best_span_strings : `Sequence[str]`
            The predicted answer text of each of the ``B`` questions.
        answer_texts : `Sequence[Sequence[str]]`
            The gold answer texts of each question (non-empty lists).
        """
        _check_batch(best_span_strings, answer_texts)
        for prediction, golds in zip(best_span_strings, answer_texts):
            if not golds:
                raise SquadEvaluationError(
                    "SQuAD v1.1 metric got a question without gold answers "
                    "(use squad_v2_metrics for unanswerable questions)"
                )
            exact, f1 = score_question_v1(prediction, golds)
            self._exact_sum += exact
            self._f1_sum += f1
            self._count += 1

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        totals = torch.tensor([self._exact_sum, self._f1_sum, float(self._count)], dtype=torch.float64)
        exact_sum, f1_sum, count = dist_reduce_sum(totals).tolist()
        if reset:
            self.reset()
        if count == 0:
            return {"exact_match": 0.0, "f1": 0.0}
        return {"exact_match": 100.0 * exact_sum / count, "f1": 100.0 * f1_sum / count}

    def reset(self) -> None:
        self._exact_sum = 0.0
        self._f1_sum = 0.0
        self._count = 0


@Metric.register("squad_v2_metrics")
class SquadV2Metrics(Metric):
    """
    SQuAD v2.0 metrics (``evaluate-v2.0.py`` rules) over the questions seen since the last
    reset: ``exact``, ``f1``, ``total``, ``HasAns_*``/``NoAns_*`` when such questions were
    seen, and, when no-answer scores are given, ``best_exact``, ``best_exact_thresh``,
    ``best_f1``, ``best_f1_thresh``.

    A question counts as answered with its ``best_span_strings`` entry ("" for an abstention)
    unless its no-answer score is strictly greater than ``na_prob_thresh``, in which case it
    abstains. The scores need not be probabilities (e.g. null-minus-best-span logit
    differences); the best thresholds are then on that scale. Questions are scored once, when
    fed; ``get_metric`` (called after every batch by the trainer) is vectorised over them and
    equals the official script up to float summation order.

    # Parameters

    na_prob_thresh : `float`, optional (default = `1.0`)
        The official ``--na-prob-thresh``.
    """

    supports_distributed = True
    _with_scores: Optional[bool]  # whether the batches since the last reset gave no-answer scores (None: no batch)

    def __init__(self, na_prob_thresh: float = 1.0) -> None:
        self._na_prob_thresh = na_prob_thresh
        self.reset()

    def __call__(  # type: ignore[override]  # why: takes answer strings, not allennlp's tensors
        self,
        best_span_strings: Sequence[str],
        answer_texts: Sequence[Sequence[str]],
        no_answer_scores: Optional[Scores] = None,
    ) -> None:
        """
        Scores a batch of questions.

        # Parameters

        best_span_strings : `Sequence[str]`
            The predicted answer text of each of the ``B`` questions.
        answer_texts : `Sequence[Sequence[str]]`
            Gold answer texts per question; an empty list = unanswerable.
        no_answer_scores : `Scores`, optional (default = `None`)
            `[B]` the model's no-answer score (probability or logit) per question. Give it for
            every batch or for none.
        """
        _check_batch(best_span_strings, answer_texts)
        if self._with_scores is not None and self._with_scores != (no_answer_scores is not None):
            raise ValueError("no_answer_scores must be given for every batch or for none since the last reset")
        if no_answer_scores is None:
            scores = [0.0] * len(best_span_strings)
        else:
            if isinstance(no_answer_scores, torch.Tensor):
                no_answer_scores = no_answer_scores.detach().reshape(-1).cpu().tolist()
            scores = [float(score) for score in no_answer_scores]
            if len(scores) != len(best_span_strings):
                raise ValueError(f"{len(scores)} no-answer scores for {len(best_span_strings)} predictions")
        self._with_scores = no_answer_scores is not None
        for prediction, golds in zip(best_span_strings, answer_texts):
            exact, f1 = score_question_v2(prediction, golds)
            self._exact.append(exact)
            self._f1.append(f1)
            self._has_answer.append(bool(golds))
            # find_best_thresh only asks whether the raw prediction string is empty
            self._answered.append(bool(prediction))
        self._na_scores.extend(scores)

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        columns = _gather([self._exact, self._f1, self._has_answer, self._answered, self._na_scores])
        with_scores = bool(self._with_scores)
        if reset:
            self.reset()
        exact_raw, f1_raw, na = (np.asarray(c, dtype=np.float64) for c in (columns[0], columns[1], columns[4]))
        has_answer = np.asarray(columns[2], dtype=bool)
        answered = np.asarray(columns[3], dtype=bool)
        total = len(exact_raw)
        if total == 0:
            return {"exact": 0.0, "f1": 0.0, "total": 0}

        abstain = na > self._na_prob_thresh
        exact = np.where(abstain, ~has_answer, exact_raw)
        f1 = np.where(abstain, ~has_answer, f1_raw)
        result: Dict[str, float] = {"exact": 100.0 * exact.mean(), "f1": 100.0 * f1.mean(), "total": total}
        for prefix, subset in (("HasAns", has_answer), ("NoAns", ~has_answer)):
            if subset.any():
                result.update(
                    {
                        f"{prefix}_exact": 100.0 * exact[subset].mean(),
                        f"{prefix}_f1": 100.0 * f1[subset].mean(),
                        f"{prefix}_total": int(subset.sum()),
                    }
                )
        if with_scores:
            for name, raw in (("exact", exact_raw), ("f1", f1_raw)):
                result[f"best_{name}"], result[f"best_{name}_thresh"] = _best_threshold(raw, na, has_answer, answered)
        return {key: (float(value) if not isinstance(value, int) else value) for key, value in result.items()}

    def reset(self) -> None:
        self._exact: List[float] = []
        self._f1: List[float] = []
        self._has_answer: List[bool] = []
        self._answered: List[bool] = []
        self._na_scores: List[float] = []
        self._with_scores = None


def _best_threshold(
    raw_scores: np.ndarray, na_scores: np.ndarray, has_answer: np.ndarray, answered: np.ndarray
) -> Tuple[float, float]:
    """
    Vectorised ``find_best_threshold`` over arrays of shape `[Q]`: the running score (abstain
    everywhere, then answer by increasing no-answer score, stable on ties) is a cumulative sum;
    its last strict improvement is the first position of its maximum.
    """
    order = np.argsort(na_scores, kind="stable")
    diff = np.where(has_answer, raw_scores, np.where(answered, -1.0, 0.0))[order]
    start = float((~has_answer).sum())
    # prepend the start so that the additions happen in the official script's order
    running = np.cumsum(np.concatenate([[start], diff]))[1:]
    peak = int(np.argmax(running))
    if running[peak] > start:
        return 100.0 * running[peak] / len(raw_scores), float(na_scores[order][peak])
    return 100.0 * start / len(raw_scores), 0.0
