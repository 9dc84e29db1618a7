"""
Reading the files of SQuAD evaluation (dataset, ``{question_id: answer}`` predictions,
``{question_id: no-answer probability}``), with errors that name the file and the problem.
"""

import json
import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from spanbert_lib.common.errors import EmptyInputError
from spanbert_lib.common.text_files import read_text
from spanbert_lib.qa.metrics.squad_evaluation import SquadEvaluationError, iter_questions

PathLike = Union[str, Path]


def _load_json(path: PathLike, what: str) -> Any:
    try:
        text = read_text(path)  # invalid UTF-8: InvalidEncodingError naming file, line and byte offset
    except OSError as error:
        raise SquadEvaluationError(f"cannot read {what} {path}: {error.strerror or error}") from error
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SquadEvaluationError(f"{what} {path} is not valid JSON: {error}") from error


def load_squad_dataset(path: PathLike) -> Tuple[List[Dict[str, Any]], Optional[str]]:
    """
    Reads a SQuAD JSON file, checking every question has an id and an ``answers`` list of texts.

    # Parameters

    path : `PathLike`
        The file.

    # Returns

    `Tuple[List[Dict[str, Any]], Optional[str]]`
        Its ``data`` list and its ``version`` field (None when absent).
    """
    dataset_json = _load_json(path, "dataset file")
    if not isinstance(dataset_json, dict) or "data" not in dataset_json:
        raise SquadEvaluationError(f"dataset file {path} has no top-level 'data' field (not a SQuAD file?)")
    data = dataset_json["data"]
    num_questions = sum(1 for _ in iter_questions(data, source=f"dataset file {path}"))
    if num_questions == 0:
        raise EmptyInputError("the dataset file has no question to evaluate", path=path)
    version = dataset_json.get("version")
    return data, (str(version) if version is not None else None)


def infer_squad_version(data: List[Dict[str, Any]], version_field: Optional[str]) -> str:
    """
    Which SQuAD version a file is.

    # Parameters

    data : `List[Dict[str, Any]]`
        The file's ``data`` list.
    version_field : `Optional[str]`
        The file's ``version`` field, if any.

    # Returns

    `str`
        "2.0" or "1.1": from ``version_field`` when it names one ("v2.0", "1.1", ...), else
        "2.0" when any question has an ``is_impossible`` flag, else "1.1".
    """
    if version_field is not None:
        major = version_field.strip().lstrip("vV")[:1]
        if major == "2":
            return "2.0"
        if major == "1":
            return "1.1"
    for article in data:
        for paragraph in article["paragraphs"]:
            if any("is_impossible" in qa for qa in paragraph["qas"]):
                return "2.0"
    return "1.1"


def load_predictions(path: PathLike) -> Dict[str, str]:
    """Official prediction format: one JSON object mapping question ids to answer strings."""
    predictions = _load_json(path, "predictions file")
    if not isinstance(predictions, dict):
        raise SquadEvaluationError(
            f"predictions file {path} must hold a JSON object {{question_id: answer_text}}, "
            f"got a {type(predictions).__name__}"
        )
    for qid, answer in predictions.items():
        if not isinstance(answer, str):
            raise SquadEvaluationError(
                f"predictions file {path}: the answer for question {qid} must be a string, got {answer!r}"
            )
    return predictions


def load_na_probs(path: PathLike) -> Dict[str, float]:
    """A JSON object mapping question ids to no-answer probabilities (finite numbers)."""
    na_probs = _load_json(path, "no-answer probability file")
    if not isinstance(na_probs, dict):
        raise SquadEvaluationError(
            f"no-answer probability file {path} must hold a JSON object {{question_id: probability}}, "
            f"got a {type(na_probs).__name__}"
        )
    for qid, prob in na_probs.items():
        if isinstance(prob, bool) or not isinstance(prob, (int, float)) or not math.isfinite(prob):
            raise SquadEvaluationError(
                f"no-answer probability file {path}: the value for question {qid} must be a number, got {prob!r}"
            )
    return na_probs
