"""
Learning curves of the LitBank coreference side-by-side runs: dev CoNLL F1 (key with LitBank's singletons)
against epochs and against training CPU minutes, for every run folder of the given output folders of
``evidence/coref_litbank_side_by_side.py``:

    .venv/bin/python -m evidence.coref_litbank_curves outputs/coref_litbank outputs/coref_litbank_epochs12 \
        --png docs/coref_litbank_curves.png

- this library's runs (``ours``, ``ours_coarse``): the trainer's validation after every epoch
  (``metrics_epoch_N.json``'s ``validation_conll_f1``: the library's scorer on the same dev documents and key,
  checked here against the final predictions' CoNLL score); CPU minutes prorated over the epochs from the run's
  measured training CPU;
- the anchors (fastcoref, Maverick) run with ``--curve-every N``: their dev predictions after every N epochs
  (``RUN/curve/epoch_NNN/``), scored like their final predictions (``score_predictions.py``, both keys), at the
  training CPU measured when they were made (prediction time left out); a prediction that ran out of memory is a
  point without a score;
- every other finished run (allennlp-models): its final score alone.

Writes ``OUT/curves.json`` (default ``outputs/coref_litbank_curves``) and a PNG (``--png``, default
``OUT/curves.png``), and prints one line per curve. The table the documentation shows goes to a results file
(``--results``; default ``results/coref_litbank_curves.json``, or ``OUT/results.json`` when ``--out`` is given): one row
per system and number of epochs over the runs with a learning curve, dev CoNLL F1 every ``--table-every`` epochs and
the final model's scores and training CPU, each the mean of the runs' seeds.
"""

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from evidence.coref_litbank_side_by_side import (
    ADAPTER_RECORD,
    BY_KEY,
    COST_FILE,
    DATA,
    DISPLAY,
    FULL,
    PREDICTIONS,
    ScoringFailed,
    System,
    conll_scores,
    run_dirs_in,
)
from evidence.learning_curves import (
    collect_curves,
    plot_curves,
    read_json,
    save_curves,
    validation_points,
)
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, table, write_results

RESULTS = RESULTS_DIR / "coref_litbank_curves.json"
Point = Dict[str, Any]  # epoch, cpu_minutes, with_singletons, without_singletons (None where not measured)


def validation_curve(folder: Path) -> List[Point]:
    """Our runs: one point per epoch from ``metrics_epoch_N.json``; CPU prorated from ``training_cost.json``."""
    return [
        {
            "epoch": point["epoch"],
            "cpu_minutes": point["cpu_minutes"],
            "with_singletons": point["score"],
            "without_singletons": None,
        }
        for point in validation_points(folder, "conll_f1", COST_FILE)
    ]


def anchor_curve(folder: Path, data: Path) -> List[Point]:
    """An anchor's curve points (``run.json``'s, or ``curve/points.json`` of a run still going), scored."""
    curve = read_json(folder / ADAPTER_RECORD).get("learning_curve") or read_json(folder / "curve" / "points.json")
    if not curve:
        return []
    points = []
    for raw in curve["points"]:
        point: Point = {
            "epoch": raw["epoch"],
            "cpu_minutes": round(raw["training_cpu_seconds"] / 60, 2),
            "with_singletons": None,
            "without_singletons": None,
        }
        if "error" in raw:
            point["error"] = raw["error"]
        else:
            scores = conll_scores(Path(raw["run"]), data)
            point["with_singletons"] = scores["gold_with_singletons"]["conll_f1"]
            point["without_singletons"] = scores["gold_without_singletons"]["conll_f1"]
        points.append(point)
    return points


def final_point(folder: Path, data: Path, epochs: int) -> Optional[Point]:
    """A finished run's final dev score and training CPU, after its ``epochs``."""
    if not (folder / PREDICTIONS).exists():
        return None
    scores = conll_scores(folder, data)
    if (folder / ADAPTER_RECORD).exists():
        cpu = read_json(folder / ADAPTER_RECORD)["timings"]["training"]["cpu_seconds"]
    else:
        cpu = read_json(folder / COST_FILE).get("cpu_seconds")
    return {
        "epoch": epochs,
        "cpu_minutes": round(cpu / 60, 2) if cpu else None,
        "with_singletons": scores["gold_with_singletons"]["conll_f1"],
        "without_singletons": scores["gold_without_singletons"]["conll_f1"],
    }


def budget_epochs(folder: Path) -> int:
    """The epochs a run trained for, from its own record: an anchor's ``run.json``, an allennlp run's
    ``config.json`` (``trainer.num_epochs``); else from the folder the side-by-side's ``--epochs N`` names
    (``..._epochs<N>/``), else 6."""
    epochs = read_json(folder / ADAPTER_RECORD).get("epochs") or read_json(folder / "config.json").get(
        "trainer", {}
    ).get("num_epochs")
    if epochs:
        return int(epochs)
    name = folder.parent.name
    return int(name.rsplit("_epochs", 1)[1]) if "_epochs" in name else FULL.epochs


def curve_of(system: System, seed: int, folder: Path, data: Path) -> Dict[str, Any]:
    if system.config is not None:
        points, source = validation_curve(folder), "validation after every epoch (metrics_epoch_N.json)"
    elif system.adapter is not None:
        points, source = anchor_curve(folder, data), "dev predictions every --curve-every epochs (RUN/curve/)"
    else:
        points, source = [], "final score only"
    epochs = budget_epochs(folder)
    final = final_point(folder, data, epochs)
    if final is not None and points and final["with_singletons"] is not None and system.config is not None:
        last = points[-1]["with_singletons"]
        if abs(last - final["with_singletons"]) > 0.01:
            source += f" (last epoch {last} differs from the final predictions' {final['with_singletons']})"
    return {
        "system": system.label,
        "key": system.key,
        "seed": seed,
        "epochs": epochs,
        "folder": str(folder.relative_to(REPO_ROOT) if folder.is_relative_to(REPO_ROOT) else folder),
        "points": points,
        "final": final,
        "source": source,
    }


def plot(curves: List[Dict[str, Any]], path: Path) -> None:
    """Two panels, F1 against epochs and against training CPU minutes; one colour per system, dashed where a run
    trained for more epochs than the side-by-side budget."""
    colours = {key: f"C{index}" for index, key in enumerate(BY_KEY)}
    shown = [
        {
            "label": f"{curve['system']} ({curve['epochs']} epochs)",
            "colour": colours[curve["key"]],
            "style": "-" if curve["epochs"] == FULL.epochs else "--",
            "points": curve["points"],
            "final": curve["final"],
        }
        for curve in curves
    ]
    plot_curves(
        shown,
        path,
        [("epoch", "epoch"), ("cpu_minutes", "training CPU minutes (one thread)")],
        ("with_singletons", "dev CoNLL F1, key with singletons"),
        "LitBank coreference from MiniLM: 70 training documents, 10 dev documents (x: out of memory)",
    )


def describe(curve: Dict[str, Any]) -> str:
    """One line: the folder, F1 (key with singletons) per epoch point, and the final score."""
    shown = " ".join(
        f"{p['epoch']}:{p['with_singletons'] if p['with_singletons'] is not None else 'OOM'}" for p in curve["points"]
    )
    final = curve["final"]["with_singletons"] if curve["final"] else None
    return f"{curve['folder']}: epoch:F1 {shown or '-'}; final {final}"


def mean(values: Sequence[Optional[float]], digits: int = 2) -> Optional[float]:
    present = [value for value in values if value is not None]
    return round(statistics.mean(present), digits) if present else None


def curves_table(curves: List[Dict[str, Any]], every: int = 2) -> Dict[str, List]:
    """
    One row per system and number of epochs, over its runs with a learning curve (two points or more; a run with a
    final score only is in the side-by-side's table): the seeds, dev CoNLL F1 (key with singletons) after every
    ``every`` epochs, the final model's CoNLL F1 with and without singletons and its training CPU minutes, each the
    mean over the seeds (None where no run has the figure).
    """
    groups: Dict[tuple, List[Dict[str, Any]]] = {}
    for curve in curves:
        if sum(point.get("with_singletons") is not None for point in curve["points"]) >= 2:
            groups.setdefault((curve["key"], curve["epochs"]), []).append(curve)
    order = list(BY_KEY)
    keys = sorted(groups, key=lambda key: (order.index(key[0]), key[1]))
    last = max((epochs for _, epochs in keys), default=0)
    marks = list(range(every, last + 1, every))
    rows = []
    for key, epochs in keys:
        runs = sorted(groups[(key, epochs)], key=lambda curve: curve["seed"])
        at = [
            mean(
                [
                    next((p["with_singletons"] for p in run["points"] if p["epoch"] == mark), None)
                    for run in runs
                    if mark <= epochs
                ]
            )
            for mark in marks
        ]
        finals = [run["final"] or {} for run in runs]
        rows.append(
            [
                DISPLAY[BY_KEY[key].label],
                " / ".join(str(run["seed"]) for run in runs),
                epochs,
                *at,
                mean([final.get("with_singletons") for final in finals]),
                mean([final.get("without_singletons") for final in finals]),
                mean([final.get("cpu_minutes") for final in finals], 1),
            ]
        )
    columns = [
        "system",
        "seeds",
        "epochs",
        *(f"epoch {mark}" for mark in marks),
        "final model",
        "final model, without singletons",
        "training CPU min",
    ]
    return table(columns, rows)


def save_results(path: Path, curves: List[Dict[str, Any]], every: int) -> None:
    write_results(
        path,
        "LitBank coreference learning curves: dev CoNLL F1 after every few epochs of training",
        "evidence.coref_litbank_curves",
        {"curves": curves_table(curves, every)},
        [
            "dev CoNLL F1 against LitBank's key with its singletons, by this library's scorer; this library's runs: "
            "the trainer's validation after every epoch; the other tools: their dev predictions every few epochs "
            "(--curve-every), scored the same way",
            "final model: what the run kept (ours: the epoch with the best dev CoNLL F1; the other tools: the last)",
            "every figure is the mean over the seeds named; training CPU minutes leave the curve's predictions out",
            "a schedule decays the learning rate over the whole run, so epoch 6 of a 12-epoch run is not a 6-epoch run",
        ],
        curves=curves,
    )
    print(f"wrote {path}", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("outputs", type=Path, nargs="+", help="coref_litbank_side_by_side.py output folders")
    parser.add_argument("--data", type=Path, default=DATA[FULL], help="litbank_export.py's folder (the dev keys)")
    parser.add_argument("--out", type=Path, default=None, help="default outputs/coref_litbank_curves")
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help=f"results file (default {RESULTS.relative_to(REPO_ROOT)}, or OUT/results.json when --out is given)",
    )
    parser.add_argument("--table-every", type=int, default=2, help="the results table's epochs: every N (default 2)")
    parser.add_argument("--png", type=Path, default=None, help="default OUT/curves.png")
    plain = [key for key, system in BY_KEY.items() if not system.overrides]
    parser.add_argument(
        "--systems",
        nargs="+",
        choices=list(BY_KEY),
        default=plain,
        help=f"default: {' '.join(plain)} (not the variants of our configs with an option off)",
    )
    args = parser.parse_args()
    results = args.results or (RESULTS if args.out is None else args.out / "results.json")
    args.out = args.out or REPO_ROOT / "outputs" / "coref_litbank_curves"
    missing = [str(output) for output in args.outputs if not output.is_dir()]
    if missing:
        sys.exit(
            f"error: no such output folder: {', '.join(missing)} (run python -m evidence.coref_litbank_side_by_side)"
        )
    if not (args.data / "coref_dev_key.conll").exists():
        sys.exit(f"error: {args.data} holds no coref_dev_key.conll (evidence/baselines/litbank_export.py writes it)")
    curves, skipped = collect_curves(
        (run for output in args.outputs for run in run_dirs_in(output.resolve()) if run[0].key in args.systems),
        lambda system, seed, folder: curve_of(system, seed, folder, args.data),
        (ScoringFailed, OSError, ValueError, KeyError),
    )
    save_curves(args.out, args.png or args.out / "curves.png", curves, skipped, plot, describe)
    save_results(results, curves, args.table_every)
    return 0


if __name__ == "__main__":
    sys.exit(main())
