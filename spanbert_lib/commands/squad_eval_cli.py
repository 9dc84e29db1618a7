"""
What ``allennlp squad-eval`` and the ``spanbert-squad-eval`` console script share: the arguments, the
official SQuAD v1.1 / v2.0 evaluation of a predictions file and the table (see
:mod:`spanbert_lib.commands.squad_eval`).

Light on purpose: nothing of allennlp or torch is imported here, so that the console script
(:mod:`spanbert_lib.commands.console_scripts`) answers in well under a second.
"""

import argparse
import json
import logging
from typing import Dict, Optional, Tuple

from spanbert_lib.commands.common_arguments import add_include_package_argument, finite_float
from spanbert_lib.qa.metrics.squad_evaluation import SquadEvaluationError, evaluate_v1, evaluate_v2, iter_questions
from spanbert_lib.qa.metrics.squad_files import (
    infer_squad_version,
    load_na_probs,
    load_predictions,
    load_squad_dataset,
)
from spanbert_lib.safeguards.atomic_files import atomic_output_path
from spanbert_lib.safeguards.same_file import refuse_output_over_input

# the name the subcommand always logged under
logger = logging.getLogger("spanbert_lib.commands.squad_eval")

DESCRIPTION = "Official SQuAD v1.1/v2.0 evaluation of a {question_id: answer} predictions file."


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """
    The arguments of ``squad-eval``, its function as ``func``.

    # Parameters

    parser : `argparse.ArgumentParser`
        The subcommand's parser or the console script's; changed in place.

    # Returns

    `argparse.ArgumentParser`
        ``parser`` itself.
    """
    parser.add_argument("dataset_file", metavar="DATASET_JSON", help="SQuAD-format dataset file")
    parser.add_argument(
        "prediction_file",
        metavar="PREDICTIONS_JSON",
        help="JSON object mapping question ids to predicted answer texts",
    )
    parser.add_argument(
        "--version",
        choices=["1.1", "2.0"],
        default=None,
        help="evaluation script to follow (default: from the dataset's 'version' "
        "field or 'is_impossible' flags, else 1.1)",
    )
    parser.add_argument(
        "--na-prob-file",
        "-n",
        default=None,
        help="v2.0: JSON object mapping question ids to no-answer probabilities",
    )
    parser.add_argument(
        "--na-prob-thresh",
        "-t",
        type=finite_float,
        default=1.0,
        help='v2.0: predict "" where the no-answer probability exceeds this',
    )
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--output-file", "-o", default=None, help="also write the scores as JSON here")
    add_include_package_argument(parser)
    parser.set_defaults(func=squad_eval_from_args)
    return parser


def evaluate_squad_files(
    dataset_file: str,
    prediction_file: str,
    version: Optional[str] = None,
    na_prob_file: Optional[str] = None,
    na_prob_thresh: float = 1.0,
) -> Tuple[str, Dict[str, float]]:
    """
    The official SQuAD evaluation of a predictions file.

    # Parameters

    dataset_file : `str`
        The SQuAD-format dataset file.
    prediction_file : `str`
        A JSON object mapping question ids to predicted answer texts.
    version : `str`, optional (default = `None`)
        ``"1.1"`` or ``"2.0"``; None: from the dataset's ``version`` field or ``is_impossible``
        flags, else 1.1.
    na_prob_file : `str`, optional (default = `None`)
        v2.0: a JSON object mapping question ids to no-answer probabilities.
    na_prob_thresh : `float`, optional (default = `1.0`)
        v2.0: ``""`` is predicted where the no-answer probability exceeds this.

    # Returns

    `Tuple[str, Dict[str, float]]`
        ``(version used, scores)``. Raises :class:`SquadEvaluationError` on unreadable or
        malformed input, naming the file.
    """
    data, version_field = load_squad_dataset(dataset_file)
    version = version or infer_squad_version(data, version_field)
    predictions = load_predictions(prediction_file)
    _refuse_disjoint_ids(data, predictions, dataset_file, prediction_file)
    if version == "1.1":
        if na_prob_file is not None:
            raise SquadEvaluationError("--na-prob-file only applies to SQuAD v2.0 evaluation")
        if version_field is not None and version_field != "1.1":
            logger.warning("Evaluation expects v-1.1, but got dataset with v-%s", version_field)
        return version, evaluate_v1(data, predictions, source=f"dataset file {dataset_file}")
    na_probs = load_na_probs(na_prob_file) if na_prob_file is not None else None
    return version, evaluate_v2(
        data,
        predictions,
        na_probs,
        na_prob_thresh,
        source=f"dataset file {dataset_file}",
        predictions_source=f"predictions file {prediction_file}",
        na_probs_source=f"no-answer probability file {na_prob_file}",
    )


def _refuse_disjoint_ids(data, predictions, dataset_file: str, prediction_file: str) -> None:
    """A predictions file that answers none of the dataset's questions is the wrong file, not a score of 0."""
    question_ids = [qid for qid, _ in iter_questions(data, source=f"dataset file {dataset_file}")]
    if question_ids and not any(qid in predictions for qid in question_ids):
        examples = ", ".join(repr(key) for key in list(predictions)[:2]) or "none"
        raise SquadEvaluationError(
            f"shares no question id with the dataset file {dataset_file} (its ids: {question_ids[0]!r}, ...; "
            f"the predictions': {examples}): is it the predictions file of this dataset?",
            path=prediction_file,
        )


def format_table(version: str, scores: Dict[str, float]) -> str:
    """
    The scores as a table.

    # Parameters

    version : `str`
        The version used, for the header.
    scores : `Dict[str, float]`
        The scores.

    # Returns

    `str`
        One ``key  value`` line per score, after a ``SQuAD vX evaluation`` header.
    """
    width = max(len(key) for key in scores)
    lines = [f"SQuAD v{version} evaluation"]
    for key, value in scores.items():
        shown = str(value) if isinstance(value, int) else f"{value:.4f}"
        lines.append(f"  {key:<{width}}  {shown}")
    return "\n".join(lines)


def squad_eval_from_args(args: argparse.Namespace) -> None:
    """
    Evaluates, writes ``--output-file`` (atomically, never over an input) and prints the scores.
    A :class:`SquadEvaluationError` (a ``UserInputError``) propagates: the entry point (allennlp's, or
    the console script's) prints it as one ``error:`` line with exit status 1.

    # Parameters

    args : `argparse.Namespace`
        The parsed ``squad-eval`` arguments.
    """
    refuse_output_over_input(
        args.output_file, [args.dataset_file, args.prediction_file, args.na_prob_file], "--output-file"
    )
    version, scores = evaluate_squad_files(
        args.dataset_file, args.prediction_file, args.version, args.na_prob_file, args.na_prob_thresh
    )
    if args.output_file:
        with atomic_output_path(args.output_file) as temporary:
            with open(temporary, "w", encoding="utf-8") as handle:
                json.dump(scores, handle)
    if args.json:
        # the official scripts print v1.1 on one line, v2.0 indented
        print(json.dumps(scores) if version == "1.1" else json.dumps(scores, indent=2))
    else:
        print(format_table(version, scores))
