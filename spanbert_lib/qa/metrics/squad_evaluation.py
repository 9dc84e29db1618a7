"""
SQuAD v1.1 and v2.0 evaluation with the semantics of the official scripts
(``evaluate-v1.1.py`` and ``evaluate-v2.0.py``), re-implemented.

Both scripts share the answer normalisation (lower-case, drop ``string.punctuation``, drop
the words a/an/the, collapse whitespace) but differ in details that change scores:

* v1.1 token F1 is 0 whenever no token overlaps, even when both sides normalise to nothing;
  v2.0 F1 (and EM) is ``int(gold_tokens == pred_tokens)`` when either side has no tokens.
* v2.0 drops gold answers that normalise to "" and uses ``[""]`` when none is left (so an
  unanswerable question is answered correctly only by a prediction normalising to "").
* v1.1 counts a question without a prediction as 0 (with the message "Unanswered question
  X will receive score 0."); v2.0 skips it in ``total`` but then fails with a KeyError in the
  HasAns/NoAns split, i.e. it cannot score incomplete predictions. Here that is a clear
  :class:`SquadEvaluationError` listing the missing ids.
* v2.0 keys questions by id (a repeated id: the last occurrence wins), v1.1 counts every
  occurrence.

``dataset`` arguments are the ``data`` list of a SQuAD JSON file (articles with
``paragraphs`` with ``qas``), as in the official scripts; scores are percentages.
"""

import collections
import logging
import re
import string
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from spanbert_lib.common.errors import UserInputError

logger = logging.getLogger(__name__)

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


class SquadEvaluationError(UserInputError):
    """Malformed SQuAD data or predictions that the official scripts could not score."""


def normalize_answer(text: str) -> str:
    """
    Lower-case, remove ASCII punctuation (``string.punctuation``), replace the words
    a/an/the by a space and collapse whitespace, in that order (the official order: "The.Cat"
    becomes "thecat", which keeps its letters).
    """
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def answer_tokens(text: str) -> List[str]:
    """Tokens compared by F1: whitespace split of the normalised answer (v2.0 ``get_tokens``)."""
    return normalize_answer(text).split() if text else []


def _overlap_f1(prediction_tokens: List[str], gold_tokens: List[str]) -> float:
    common = collections.Counter(prediction_tokens) & collections.Counter(gold_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(prediction_tokens)
    recall = num_same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def exact_match_v1(prediction: str, gold: str) -> float:
    """1.0 when both normalise to the same string, else 0.0 (v1.1 ``exact_match_score``)."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1_v1(prediction: str, gold: str) -> float:
    """v1.1 token F1: 0 when no token is shared, including when both have no tokens."""
    return _overlap_f1(normalize_answer(prediction).split(), normalize_answer(gold).split())


def exact_match_v2(prediction: str, gold: str) -> float:
    """v2.0 ``compute_exact`` (same comparison as v1.1)."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1_v2(prediction: str, gold: str) -> float:
    """v2.0 ``compute_f1``: when either side has no tokens, 1.0 iff both have none."""
    prediction_tokens = answer_tokens(prediction)
    gold_tokens = answer_tokens(gold)
    if not prediction_tokens or not gold_tokens:
        return float(prediction_tokens == gold_tokens)
    return _overlap_f1(prediction_tokens, gold_tokens)


def max_over_ground_truths(metric: Callable[[str, str], float], prediction: str, ground_truths: Sequence[str]) -> float:
    """The best score of ``prediction`` against any gold answer (needs at least one)."""
    if not ground_truths:
        raise SquadEvaluationError("no gold answer to compare the prediction with")
    return max(metric(prediction, gold) for gold in ground_truths)


def gold_answers_v2(answer_texts: Sequence[str]) -> List[str]:
    """Gold answers as v2.0 scores them: those normalising to "" dropped, ``[""]`` if none left."""
    kept = [text for text in answer_texts if normalize_answer(text)]
    return kept if kept else [""]


def score_question_v1(prediction: str, answer_texts: Sequence[str]) -> Tuple[float, float]:
    """(exact match, F1) in [0, 1] of one prediction against its gold answers, v1.1 rules."""
    return (
        max_over_ground_truths(exact_match_v1, prediction, answer_texts),
        max_over_ground_truths(f1_v1, prediction, answer_texts),
    )


def score_question_v2(prediction: str, answer_texts: Sequence[str]) -> Tuple[float, float]:
    """(exact match, F1) in [0, 1] of one prediction against its gold answers, v2.0 rules."""
    golds = gold_answers_v2(answer_texts)
    return (max_over_ground_truths(exact_match_v2, prediction, golds), max_over_ground_truths(f1_v2, prediction, golds))


def iter_questions(dataset: Sequence[Mapping], source: str = "dataset") -> Iterator[Tuple[str, List[str]]]:
    """
    Every question of a SQuAD ``data`` list, in file order; raises
    :class:`SquadEvaluationError` naming ``source`` and the JSON location (e.g.
    ``data[0].paragraphs[2].qas[1]``) of anything malformed.

    # Parameters

    dataset : `Sequence[Mapping]`
        The ``data`` list (articles).
    source : `str`, optional (default = `"dataset"`)
        Names the input in error messages.

    # Returns

    `Iterator[Tuple[str, List[str]]]`
        ``(question id, gold answer texts)`` pairs.
    """
    if not isinstance(dataset, list):
        raise SquadEvaluationError(f"{source}: 'data' must be a list of articles, got {type(dataset).__name__}")
    for a, article in enumerate(dataset):
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        if not isinstance(paragraphs, list):
            raise SquadEvaluationError(f"{source}: data[{a}] has no 'paragraphs' list")
        for p, paragraph in enumerate(paragraphs):
            qas = paragraph.get("qas") if isinstance(paragraph, dict) else None
            if not isinstance(qas, list):
                raise SquadEvaluationError(f"{source}: data[{a}].paragraphs[{p}] has no 'qas' list")
            for q, qa in enumerate(qas):
                where = f"{source}: data[{a}].paragraphs[{p}].qas[{q}]"
                if not isinstance(qa, dict) or not isinstance(qa.get("id"), str):
                    raise SquadEvaluationError(f"{where} has no string 'id'")
                answers = qa.get("answers")
                if not isinstance(answers, list):
                    raise SquadEvaluationError(f"{where} (id {qa['id']}) has no 'answers' list")
                texts = []
                for answer in answers:
                    if not isinstance(answer, dict) or not isinstance(answer.get("text"), str):
                        raise SquadEvaluationError(f"{where} (id {qa['id']}): an answer has no string 'text'")
                    texts.append(answer["text"])
                yield qa["id"], texts


def evaluate_v1(
    dataset: Sequence[Mapping], predictions: Mapping[str, str], source: str = "dataset"
) -> Dict[str, float]:
    """
    The official v1.1 evaluation. A question missing from ``predictions`` scores 0 and is
    logged as "Unanswered question X will receive score 0.". A question with no gold answer (a
    v2.0 unanswerable one) raises, as ``max()`` over nothing does in the official script.

    # Parameters

    dataset : `Sequence[Mapping]`
        The ``data`` list of a SQuAD file.
    predictions : `Mapping[str, str]`
        Question id -> predicted answer text.
    source : `str`, optional (default = `"dataset"`)
        Names the dataset in error messages.

    # Returns

    `Dict[str, float]`
        ``{"exact_match": ..., "f1": ...}`` in percent over every question of ``dataset``.
    """
    exact_sum = f1_sum = 0.0
    total = 0
    for qid, answer_texts in iter_questions(dataset, source):
        total += 1
        if qid not in predictions:
            logger.warning("Unanswered question %s will receive score 0.", qid)
            continue
        if not isinstance(predictions[qid], str):
            raise SquadEvaluationError(f"prediction for {qid} is not a string: {predictions[qid]!r}")
        if not answer_texts:
            raise SquadEvaluationError(
                f"{source}: question {qid} has no gold answer, which SQuAD v1.1 evaluation cannot "
                "score (a SQuAD 2.0 unanswerable question? evaluate with version 2.0)"
            )
        exact, f1 = score_question_v1(predictions[qid], answer_texts)
        exact_sum += exact
        f1_sum += f1
    if total == 0:
        raise SquadEvaluationError(f"{source}: no question to evaluate")
    return {"exact_match": 100.0 * exact_sum / total, "f1": 100.0 * f1_sum / total}


def has_answer_by_question(dataset: Sequence[Mapping], source: str = "dataset") -> Dict[str, bool]:
    """Question id -> whether its ``answers`` list is non-empty (v2.0 ``make_qid_to_has_ans``)."""
    return {qid: bool(texts) for qid, texts in iter_questions(dataset, source)}


def raw_scores_v2(
    dataset: Sequence[Mapping], predictions: Mapping[str, str], source: str = "dataset"
) -> Tuple[Dict[str, float], Dict[str, float]]:
    """
    Per-question scores before any no-answer threshold (v2.0 ``get_raw_scores``).

    # Parameters

    dataset : `Sequence[Mapping]`
        The ``data`` list of a SQuAD file.
    predictions : `Mapping[str, str]`
        Question id -> predicted answer text.
    source : `str`, optional (default = `"dataset"`)
        Names the dataset in error messages.

    # Returns

    `Tuple[Dict[str, float], Dict[str, float]]`
        ``(exact, F1)`` dicts in [0, 1] over the questions that have a prediction (questions
        without one are left out).
    """
    exact_scores: Dict[str, float] = {}
    f1_scores: Dict[str, float] = {}
    for qid, answer_texts in iter_questions(dataset, source):
        if qid not in predictions:
            continue
        exact_scores[qid], f1_scores[qid] = score_question_v2(predictions[qid], answer_texts)
    return exact_scores, f1_scores


def apply_no_answer_threshold(
    scores: Mapping[str, float], na_probs: Mapping[str, float], has_answer: Mapping[str, bool], na_prob_thresh: float
) -> Dict[str, float]:
    """
    Scores after abstaining where the no-answer probability is strictly greater than
    ``na_prob_thresh``: an abstention scores 1 on an unanswerable question, else 0.

    # Parameters

    scores : `Mapping[str, float]`
        Question id -> raw score.
    na_probs : `Mapping[str, float]`
        Question id -> no-answer probability.
    has_answer : `Mapping[str, bool]`
        Question id -> whether it has a gold answer.
    na_prob_thresh : `float`
        The abstention threshold.

    # Returns

    `Dict[str, float]`
        Question id -> score.
    """
    return {
        qid: (float(not has_answer[qid]) if na_probs[qid] > na_prob_thresh else score) for qid, score in scores.items()
    }


def make_eval_dict(
    exact_scores: Mapping[str, float], f1_scores: Mapping[str, float], qids: Optional[Sequence[str]] = None
) -> Dict[str, float]:
    """
    Averages of per-question scores.

    # Parameters

    exact_scores : `Mapping[str, float]`
        Question id -> exact match.
    f1_scores : `Mapping[str, float]`
        Question id -> F1.
    qids : `Sequence[str]`, optional (default = `None`)
        The questions to average over (all scored questions when None/empty).

    # Returns

    `Dict[str, float]`
        ``{"exact", "f1", "total"}``, the first two in percent.
    """
    if not qids:
        qids = list(exact_scores)
    total = len(qids)
    return {
        "exact": 100.0 * sum(exact_scores[q] for q in qids) / total,
        "f1": 100.0 * sum(f1_scores[q] for q in qids) / total,
        "total": total,
    }


def find_best_threshold(
    predictions: Mapping[str, str],
    scores: Mapping[str, float],
    na_probs: Mapping[str, float],
    has_answer: Mapping[str, bool],
) -> Tuple[float, float]:
    """
    The official ``find_best_thresh``: ``(best score in percent, threshold)``.

    Starts from abstaining everywhere (score = number of unanswerable questions, threshold
    0.0), then answers questions in increasing no-answer probability (a stable sort, so ties
    keep the order of ``na_probs``): an answerable question adds its raw score, an
    unanswerable one subtracts 1 if its prediction string is non-empty (the raw string, so
    " " counts as an answer). The threshold is the probability of the question at which the
    running score last *strictly* improved. As in the official script, with tied
    probabilities the returned threshold may not reproduce the returned score, and
    ``num_no_ans`` counts all unanswerable questions in ``has_answer``.

    # Parameters

    predictions : `Mapping[str, str]`
        Question id -> predicted answer text.
    scores : `Mapping[str, float]`
        Question id -> raw score (exact or F1).
    na_probs : `Mapping[str, float]`
        Question id -> no-answer probability.
    has_answer : `Mapping[str, bool]`
        Question id -> whether it has a gold answer.

    # Returns

    `Tuple[float, float]`
        ``(best score in percent, threshold)``.
    """
    current = best = float(sum(1 for qid in has_answer if not has_answer[qid]))
    best_thresh = 0.0
    for qid in sorted(na_probs, key=lambda k: na_probs[k]):
        if qid not in scores:
            continue
        if has_answer[qid]:
            current += scores[qid]
        elif predictions[qid]:
            current -= 1
        if current > best:
            best = current
            best_thresh = na_probs[qid]
    return 100.0 * best / len(scores), best_thresh


def evaluate_v2(
    dataset: Sequence[Mapping],
    predictions: Mapping[str, str],
    na_probs: Optional[Mapping[str, float]] = None,
    na_prob_thresh: float = 1.0,
    source: str = "dataset",
    predictions_source: str = "predictions",
    na_probs_source: str = "no-answer probabilities",
) -> Dict[str, float]:
    """
    The official v2.0 evaluation. Returns, in this order: ``exact``, ``f1``, ``total``, then
    ``HasAns_exact/f1/total`` if any question has an answer, ``NoAns_exact/f1/total`` if any
    has none, and, only when ``na_probs`` is given, ``best_exact``, ``best_exact_thresh``,
    ``best_f1``, ``best_f1_thresh``. Without ``na_probs`` every probability is 0.0 (the
    script's default), so ``na_prob_thresh`` then only matters when negative.

    Raises :class:`SquadEvaluationError` when a question has no prediction or no no-answer
    probability (where the official script dies with a KeyError).

    # Parameters

    dataset : `Sequence[Mapping]`
        The ``data`` list of a SQuAD file.
    predictions : `Mapping[str, str]`
        Question id -> predicted answer text ("" abstains).
    na_probs : `Mapping[str, float]`, optional (default = `None`)
        Question id -> no-answer probability.
    na_prob_thresh : `float`, optional (default = `1.0`)
        The official ``--na-prob-thresh``.
    source : `str`, optional (default = `"dataset"`)
        Names the dataset in error messages.
    predictions_source : `str`, optional (default = `"predictions"`)
        Names the predictions in error messages.
    na_probs_source : `str`, optional (default = `"no-answer probabilities"`)
        Names the no-answer probabilities in error messages.

    # Returns

    `Dict[str, float]`
        The keys listed above.
    """
    for qid, prediction in predictions.items():
        if not isinstance(prediction, str):
            raise SquadEvaluationError(f"{predictions_source}: prediction for {qid} is not a string: {prediction!r}")
    has_answer = has_answer_by_question(dataset, source)
    if not has_answer:
        raise SquadEvaluationError(f"{source}: no question to evaluate")
    num_questions = sum(1 for _ in iter_questions(dataset, source))
    if num_questions != len(has_answer):
        logger.warning(
            "%s: %d question(s) repeat an earlier id; as in the official v2.0 script only "
            "the last question with each id is scored",
            source,
            num_questions - len(has_answer),
        )
    _check_all_present(has_answer, predictions, "prediction", predictions_source)
    given_na_probs = na_probs is not None
    if na_probs is None:
        na_probs = {qid: 0.0 for qid in predictions}
    _check_all_present(has_answer, na_probs, "no-answer probability", na_probs_source)

    exact_raw, f1_raw = raw_scores_v2(dataset, predictions, source)
    exact = apply_no_answer_threshold(exact_raw, na_probs, has_answer, na_prob_thresh)
    f1 = apply_no_answer_threshold(f1_raw, na_probs, has_answer, na_prob_thresh)
    result = make_eval_dict(exact, f1)
    has_ans_qids = [qid for qid, has in has_answer.items() if has]
    no_ans_qids = [qid for qid, has in has_answer.items() if not has]
    if has_ans_qids:
        result.update({f"HasAns_{k}": v for k, v in make_eval_dict(exact, f1, has_ans_qids).items()})
    if no_ans_qids:
        result.update({f"NoAns_{k}": v for k, v in make_eval_dict(exact, f1, no_ans_qids).items()})
    if given_na_probs:
        result["best_exact"], result["best_exact_thresh"] = find_best_threshold(
            predictions, exact_raw, na_probs, has_answer
        )
        result["best_f1"], result["best_f1_thresh"] = find_best_threshold(predictions, f1_raw, na_probs, has_answer)
    return result


def _check_all_present(questions: Mapping[str, bool], values: Mapping[str, object], what: str, source: str) -> None:
    missing = [qid for qid in questions if qid not in values]
    if missing:
        shown = ", ".join(missing[:5]) + (f" (and {len(missing) - 5} more)" if len(missing) > 5 else "")
        raise SquadEvaluationError(
            f"{source}: {len(missing)} of {len(questions)} questions have no {what}: {shown}; SQuAD v2.0 "
            "evaluation needs one for every question"
        )
