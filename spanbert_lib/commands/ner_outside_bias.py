"""
``allennlp ner-outside-bias MODEL.tar.gz HELDOUT [--evaluate PATH ...] [--grid START STOP STEP] [--json]
[--output-file FILE.json]``

Chooses a trained ``spanbert_span_ner`` model's ``outside_logit_bias`` (the bias on every span's
non-entity logit at prediction time) on held-out sentences with gold entities: the model reads
HELDOUT with its validation reader once, every bias of the grid (default -2 to 6 in steps of 0.25)
is scored by exact-match span F1, and the best is printed with the ``-o`` override that applies it
(:mod:`spanbert_lib.ner.outside_bias`). Each ``--evaluate`` path is then scored at bias 0 and at the
chosen bias. The bias replaces the archive's own; ``-o`` overrides the archive's config as for
``allennlp evaluate`` (e.g. ``{"model.correct_sampled_prior": true}``, which the bias then adds to).

HELDOUT must be neither the training documents (the model fits them) nor the documents you report on
(the bias would be tuned to them). ``--output-file`` keeps the JSON result (written whole or not at all,
never over an input); a non-NER archive, a missing file or sentences without gold entities are refused
with one ``error:`` line and exit status 1.
"""

import argparse
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from allennlp.commands.subcommand import Subcommand

from spanbert_lib.commands.common_arguments import positive_int
from spanbert_lib.common.errors import UserInputError
from spanbert_lib.ner.outside_bias import DEFAULT_GRID, bias_grid
from spanbert_lib.safeguards.user_errors import errors_as_one_line


def grid_from_arguments(start: float, stop: float, step: float) -> List[float]:
    """``--grid START STOP STEP`` as the list of biases (:func:`spanbert_lib.ner.outside_bias.bias_grid`)."""
    try:
        return bias_grid(start, stop, step)
    except ValueError as error:
        raise UserInputError(f"--grid {error}") from None


def choose_from_archive(
    archive_file: str,
    heldout_path: str,
    evaluate_paths: Sequence[str] = (),
    grid: Optional[Sequence[float]] = None,
    batch_size: int = 16,
    cuda_device: int = -1,
    overrides: str = "",
) -> Dict[str, Any]:
    """
    Loads the archive, chooses the bias on ``heldout_path`` and scores ``evaluate_paths`` at 0 and at it.

    # Returns

    `Dict[str, Any]`
        ``heldout`` (counts), ``grid`` (``bias`` / ``precision`` / ``recall`` / ``f1`` rows), ``best``
        (one such row), ``at_zero`` (the row of bias 0 when the grid has it), ``evaluate`` (per path: counts,
        ``at_zero`` and ``at_best``) and ``override`` (the ``-o`` JSON that applies the bias).
    """
    from allennlp.models.archival import load_archive

    import spanbert_lib.plugin  # noqa: F401  (registers the components the archive names)
    from spanbert_lib.ner.models.spanbert_span_ner import SpanBertSpanNer
    from spanbert_lib.ner.outside_bias import choose_outside_bias, default_grid, scores_at_bias, span_logits, summary
    from spanbert_lib.safeguards.safe_archives import check_archive_readable

    check_archive_readable(archive_file)
    archive = load_archive(archive_file, cuda_device=cuda_device, overrides=overrides)
    model, reader = archive.model, archive.validation_dataset_reader
    if not isinstance(model, SpanBertSpanNer):
        raise UserInputError(
            f"the archive holds a {type(model).__name__} model, not a span NER model (spanbert_span_ner)",
            path=archive_file,
        )
    grid = list(default_grid() if grid is None else grid)

    def logits_of(path: str):
        try:
            sentences = span_logits(model, reader.read(path), batch_size)
        except ValueError as error:
            if isinstance(error, UserInputError):
                raise
            raise UserInputError(str(error), path=path) from error
        if not sentences:
            raise UserInputError("no sentence to score", path=path)
        return sentences

    heldout = logits_of(heldout_path)
    best, table = choose_outside_bias(model, heldout, grid)
    result: Dict[str, Any] = {
        "archive": archive_file,
        "heldout_path": heldout_path,
        "heldout": summary(heldout),
        "grid": [row.as_dict() for row in table],
        "best": best.as_dict(),
        "at_zero": next((row.as_dict() for row in table if row.bias == 0.0), None),
        "override": json.dumps({"model.outside_logit_bias": best.bias}),
        "evaluate": {},
    }
    for path in evaluate_paths:
        sentences = logits_of(path)
        result["evaluate"][path] = {
            **summary(sentences),
            "at_zero": scores_at_bias(model, sentences, 0.0).as_dict(),
            "at_best": scores_at_bias(model, sentences, best.bias).as_dict(),
        }
    return result


def format_result(result: Dict[str, Any]) -> str:
    """The grid as a table, the chosen bias and the scores of the ``--evaluate`` paths, as text."""

    def row(scores: Dict[str, float]) -> str:
        return (
            f"{scores['bias']:6.2f}  {100 * scores['precision']:9.1f}  {100 * scores['recall']:6.1f}  "
            f"{100 * scores['f1']:5.1f}"
        )

    counts = result["heldout"]
    lines = [
        f"held out: {result['heldout_path']}: {counts['sentences']:,} sentences, "
        f"{counts['candidate_spans']:,} candidate spans, {counts['gold_entities']:,} gold entities",
        "  bias  precision  recall     f1",
        *(row(scores) for scores in result["grid"]),
        f"best: outside_logit_bias {result['best']['bias']:g} (F1 {100 * result['best']['f1']:.1f}"
        + (f" against {100 * result['at_zero']['f1']:.1f} at 0)" if result["at_zero"] else ")"),
    ]
    for path, scores in result["evaluate"].items():
        lines += [
            f"evaluate: {path}: {scores['sentences']:,} sentences",
            row(scores["at_zero"]),
            row(scores["at_best"]),
        ]
    lines.append(f"apply it: -o '{result['override']}'")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Adds the command's arguments to ``parser`` (changed in place) and returns it."""
    parser.add_argument("archive_file", help="a model.tar.gz of a spanbert_span_ner model")
    parser.add_argument("heldout_path", help="held-out data the archive's reader reads (with gold entities)")
    parser.add_argument("--evaluate", nargs="+", default=[], metavar="PATH", help="also score PATH at 0 and the best")
    default_grid = " ".join(f"{value:g}" for value in DEFAULT_GRID)
    parser.add_argument(
        "--grid", nargs=3, type=float, metavar=("START", "STOP", "STEP"), default=None, help=f"default {default_grid}"
    )
    parser.add_argument("--batch-size", type=positive_int, default=16)
    parser.add_argument("--cuda-device", type=int, default=-1)
    parser.add_argument("-o", "--overrides", default="", help="JSON overrides of the archive's config")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--output-file", default=None, help="also write the result as JSON to this file")
    return parser


def outside_bias_from_args(args: argparse.Namespace) -> None:
    """Prints the grid, the chosen bias and the ``--evaluate`` scores; a user error is one ``error:`` line."""
    from spanbert_lib.safeguards.atomic_files import atomic_output_path
    from spanbert_lib.safeguards.command_inputs import archive_inputs
    from spanbert_lib.safeguards.same_file import refuse_output_over_input

    with errors_as_one_line((UserInputError, FileNotFoundError)):
        refuse_output_over_input(
            args.output_file, [*archive_inputs(args.archive_file), args.heldout_path, *args.evaluate], "--output-file"
        )
        grid = None if args.grid is None else grid_from_arguments(*args.grid)
        result = choose_from_archive(
            args.archive_file,
            args.heldout_path,
            args.evaluate,
            grid,
            batch_size=args.batch_size,
            cuda_device=args.cuda_device,
            overrides=args.overrides,
        )
    if args.output_file:
        with atomic_output_path(args.output_file) as temporary_output:
            Path(temporary_output).write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result) if args.json else format_result(result))


@Subcommand.register("ner-outside-bias")
class NerOutsideBias(Subcommand):
    # requires_plugins stays True: allennlp adds --include-package and imports the packages
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Choose a span NER model's bias on the non-entity logit on held-out sentences (best exact-match "
            "span F1 over a grid) and print the override that applies it."
        )
        subparser = parser.add_parser(self.name, description=description, help=description)
        add_arguments(subparser)
        subparser.set_defaults(func=outside_bias_from_args)
        return subparser
