"""
Learning curves of the LitBank span NER side-by-side runs (``evidence/ner_litbank_side_by_side.py``): dev exact-match
span F1 against budgets (one budget = 2,400 training sentences, 300 batches of 8) and against training CPU minutes,
for every run folder of the given output folders:

    .venv/bin/python -m evidence.ner_litbank_curves outputs/ner_litbank outputs/ner_litbank_budgets2 \
        --png docs/ner_litbank_curves.png

- this library's runs: the trainer's validation after every epoch (one epoch is one budget; ``metrics_epoch_N.json``'s
  ``validation_f1``, the library's ``ner_span_f1`` on the dev sentences); CPU minutes prorated over the epochs from
  the run's measured training CPU;
- SpanMarker runs with ``--budgets N`` (``--curve-every-steps 528``, a budget of its steps): its dev predictions
  after every budget but the last (``RUN/curve/step_NNN/``), scored like its final predictions
  (``score_predictions.py ner``), at the training CPU measured when they were made (prediction time left out), at
  ``step / steps a budget`` budgets (the run's own steps per epoch where it recorded them); the last point is the
  run's final predictions. (A run made with ``--curve-every-steps 300`` has its points at 0.57, 1.14, ... budgets.)

Writes ``OUT/curves.json`` (default ``outputs/ner_litbank_curves``), a PNG (``--png``, default ``OUT/curves.png``)
and the results file (``--results``, default ``results/ner_litbank_curves.json``; ``OUT/ner_litbank_curves.json``
with ``--out``): a row per run trained for more than one budget (every run when none was), with its dev F1 after
each point, the precision, recall and F1 of the model it kept (ours: the best epoch; SpanMarker: the end of
training) and its training CPU minutes; and prints one line per curve.
"""

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from evidence.baselines.score_predictions import score_ner
from evidence.learning_curves import (
    collect_curves,
    plot_curves,
    read_json,
    save_curves,
    validation_points,
)
from evidence.ner_litbank_side_by_side import (
    SENTENCES_PER_BUDGET,
    SPANMARKER_EPOCHS_PER_BUDGET,
    SPANMARKER_STEPS_PER_EPOCH,
    SYSTEMS,
    System,
    run_folders,
)
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, command_line, table, write_results
from evidence.runs import best_validation_percent

ADAPTER_RECORD, OUR_COST = "run.json", "metrics.run.json"
DEFAULT_OUT = REPO_ROOT / "outputs" / "ner_litbank_curves"
MODULE = "evidence.ner_litbank_curves"
SCORES = ("precision", "recall", "f1")
Point = Dict[str, Any]  # budgets, cpu_minutes, f1 (None where not measured)


def validation_curve(folder: Path) -> List[Point]:
    """Our runs: one point per epoch (= budget) from ``metrics_epoch_N.json``; CPU prorated from the run's record."""
    return [
        {"budgets": point["epoch"], "cpu_minutes": point["cpu_minutes"], "f1": point["score"]}
        for point in validation_points(folder, "f1", OUR_COST)
    ]


def spanmarker_curve(folder: Path, data: Path) -> List[Point]:
    """SpanMarker's curve points (``run.json``'s, or ``curve/points.json`` of a run still going), scored, then its
    final predictions at the run's whole budget."""
    record = read_json(folder / ADAPTER_RECORD)
    curve = record.get("learning_curve") or read_json(folder / "curve" / "points.json")
    steps_per_budget = SPANMARKER_EPOCHS_PER_BUDGET * record.get("steps_per_epoch", SPANMARKER_STEPS_PER_EPOCH)
    points = []
    for raw in curve.get("points", []):
        point: Point = {
            "budgets": round(raw["step"] / steps_per_budget, 2),
            "cpu_minutes": round(raw["training_cpu_seconds"] / 60, 2),
            "f1": None,
        }
        if "error" in raw:
            point["error"] = raw["error"]
        else:
            point["f1"] = score_ner(data, Path(raw["run"]))["f1"]
        points.append(point)
    final = read_json(folder / "dev_scores.json")
    if record and final:
        points.append(
            {
                "budgets": round(float(record["epochs"]) / SPANMARKER_EPOCHS_PER_BUDGET, 2),
                "cpu_minutes": round(record["timings"]["training"]["cpu_seconds"] / 60, 2),
                "f1": final["f1"],
            }
        )
    return points


def kept_model(system: System, folder: Path) -> Optional[Dict[str, float]]:
    """Dev precision, recall and F1 (%) of the model a run kept: ours the best epoch's (``metrics.json``),
    SpanMarker's its final predictions' (``dev_scores.json``); None before the run has them."""
    if system.config:
        metrics = read_json(folder / "metrics.json")
        if "best_validation_f1" not in metrics:
            return None
        return {name: round(value, 2) for name, value in best_validation_percent(metrics, SCORES).items()}
    scores = read_json(folder / "dev_scores.json")
    return {name: scores[name] for name in SCORES} if "f1" in scores else None


def curve_of(system: System, seed: int, folder: Path, data: Path) -> Dict[str, Any]:
    points = validation_curve(folder) if system.config else spanmarker_curve(folder, data)
    return {
        "system": system.label,
        "key": system.key,
        "seed": seed,
        "budgets": points[-1]["budgets"] if points else None,
        "folder": str(folder.relative_to(REPO_ROOT) if folder.is_relative_to(REPO_ROOT) else folder),
        "points": points,
        "kept": kept_model(system, folder),
    }


def results_table(curves: List[Dict[str, Any]]) -> Dict[str, List]:
    """
    A row per curve of the runs trained for more than one budget (every curve when none was): system, seed, dev F1
    after each point (a column per number of training sentences seen, ``None`` where a run has no point), the kept
    model's P / R / F1 and the training CPU minutes of its last point.
    """
    longer = [curve for curve in curves if (curve["budgets"] or 0) > 1]
    shown = longer or curves
    budgets = sorted({point["budgets"] for curve in shown for point in curve["points"]})
    columns = ["system", "seed", *(f"F1 after {round(b * SENTENCES_PER_BUDGET):,} sentences" for b in budgets)]
    columns += ["P (model kept)", "R (model kept)", "F1 (model kept)", "training CPU minutes"]
    names = {system.key: system.shown or system.label for system in SYSTEMS}
    order = {system.key: index for index, system in enumerate(SYSTEMS)}
    rows = []
    for curve in sorted(shown, key=lambda curve: (order[curve["key"]], curve["seed"])):
        f1 = {point["budgets"]: point["f1"] for point in curve["points"]}
        kept = curve.get("kept") or {}
        last = curve["points"][-1] if curve["points"] else {}
        rows.append(
            [
                names[curve["key"]],
                curve["seed"],
                *(_one_decimal(f1.get(b)) for b in budgets),
                *(_one_decimal(kept.get(name)) for name in SCORES),
                _one_decimal(last.get("cpu_minutes")),
            ]
        )
    return table(columns, rows)


def _one_decimal(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(float(value), 1)


def plot(curves: List[Dict[str, Any]], path: Path) -> None:
    """Two panels, F1 against budgets and against training CPU minutes; one colour per system."""
    colours = {system.key: f"C{index}" for index, system in enumerate(SYSTEMS)}
    shown = [
        {
            "label": curve["system"],
            "colour": colours[curve["key"]],
            "style": "-" if curve["key"] != "spanmarker" else "--",
            "points": curve["points"],
            "final": None,
        }
        for curve in curves
    ]
    plot_curves(
        shown,
        path,
        [
            ("budgets", f"training sentences seen (x {SENTENCES_PER_BUDGET:,})"),
            ("cpu_minutes", "training CPU minutes (one thread)"),
        ],
        ("f1", "dev exact-match span F1"),
        "LitBank nested NER from MiniLM: 6,216 training sentences, 740 dev sentences (x: out of memory)",
    )


def describe(curve: Dict[str, Any]) -> str:
    """One line: the folder and F1 per budget point."""
    shown = " ".join(f"{p['budgets']:g}:{p['f1'] if p['f1'] is not None else 'OOM'}" for p in curve["points"])
    return f"{curve['folder']}: budgets:F1 {shown}"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("outputs", type=Path, nargs="+", help="ner_litbank_side_by_side.py output folders")
    parser.add_argument(
        "--data", type=Path, default=REPO_ROOT / "runs" / "baselines" / "data", help="litbank_export.py's folder"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--png", type=Path, default=None, help="default OUT/curves.png")
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="the results file (default results/ner_litbank_curves.json; with --out: OUT/ner_litbank_curves.json)",
    )
    args = parser.parse_args(argv)
    missing = [str(output) for output in args.outputs if not output.is_dir()]
    if missing:
        sys.exit(
            f"error: no such output folder: {', '.join(missing)} (run python -m evidence.ner_litbank_side_by_side)"
        )
    curves, skipped = collect_curves(
        (run for output in args.outputs for run in run_folders(output.resolve())),
        lambda system, seed, folder: curve_of(system, seed, folder, args.data),
        (OSError, ValueError, KeyError),
    )
    save_curves(
        args.out,
        args.png or args.out / "curves.png",
        curves,
        skipped,
        plot,
        describe,
    )
    results_file = args.results or (
        RESULTS_DIR / "ner_litbank_curves.json" if args.out == DEFAULT_OUT else args.out / "ner_litbank_curves.json"
    )
    write_results(
        results_file,
        "LitBank nested NER given more training: dev exact-match span F1 (%) along the way, this library's span NER "
        "and SpanMarker retrained here",
        MODULE,
        {"curves": results_table(curves)},
        [
            "ours: one epoch of 300 batches of 8 (2,400 sentences) at a time, validated after each; SpanMarker: its "
            "dev predictions every 528 of its steps (2,400 sentences: it spreads a sentence's candidate spans over "
            "several samples)",
            "model kept: ours the epoch with the best dev F1 (allennlp's validation_metric), SpanMarker the end of "
            "training",
            "training CPU minutes: ours the whole allennlp train process; SpanMarker its training, the predictions "
            "along the way left out",
            *(f"skipped: {line}" for line in skipped),
        ],
        command=None if argv is None else shlex.join([*shlex.split(command_line(MODULE))[:3], *argv]),
    )
    print(f"wrote {results_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
