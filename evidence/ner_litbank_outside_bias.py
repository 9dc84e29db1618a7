"""
LitBank span NER with its non-entity bias chosen on held-out TRAINING documents, never on dev (trained on the gold
spans and 24 sampled non-entity spans a sentence, the model over-predicts entities; SpanMarker, trained on every
span, is the more precise):

    .venv/bin/python -m evidence.ner_litbank_outside_bias [--seeds 1 2 3] [--out outputs/ner_litbank_outside_bias]

1. per seed, ``training_configs/ner/litbank_minilm.jsonnet`` (entity-aware attention, the shipped config) trained on
   the first 60 of the 70 training documents (``#files=:60``; the same budget of 2,400 sentences), no validation;
2. ``allennlp ner-outside-bias`` chooses its ``outside_logit_bias`` on the other 10 training documents (60:70) and
   scores the dev documents (70:80) at bias 0 and at the chosen bias;
3. the mean of the seeds' chosen biases is given to the models trained on all 70 training documents
   (``outputs/ner_litbank/litbank_minilm_seedN/model.tar.gz``, ``evidence/ner_litbank_side_by_side.py``), with
   ``allennlp evaluate -o '{"model.outside_logit_bias": B}'`` on the dev documents; their bias-0 scores are their
   training's validation (``metrics.json``).

Every step is a run of :mod:`evidence.runs` (one torch thread, resumed when started again). Prints one
table (dev exact-match span P / R / F1, %), writes ``OUT/summary.json`` and the results file (``--results``, default
``results/ner_litbank_outside_bias.json``; ``OUT/ner_litbank_outside_bias.json`` with ``--out``) and draws the
held-out sweeps (F1 against the bias, precision against recall; ``--png``, default ``OUT/heldout_sweeps.png``).
Needs the LitBank files of the external data folder (``SPANBERT_LIB_EXTERNAL_DATA``, default ``../shared/data``).
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

from evidence.external_data import require
from evidence.repository import REPO_ROOT, tool
from evidence.results import RESULTS_DIR, table, write_results
from evidence.runs import Run, RunFailed, allennlp_train_run, best_validation_percent, run_all
from evidence.summary import format_mean_std, mean_std, seed_table

CONFIG = "training_configs/ner/litbank_minilm.jsonnet"
FULL_RUNS = REPO_ROOT / "outputs" / "ner_litbank"  # the entity-aware runs of ner_litbank_side_by_side
DEFAULT_OUT = REPO_ROOT / "outputs" / "ner_litbank_outside_bias"
TRAIN, HELDOUT, DEV = ":60", "60:70", "70:80"
SCORES = ("precision", "recall", "f1")


def percent(scores: Dict[str, float]) -> Dict[str, float]:
    return {name: 100 * scores[name] for name in SCORES}


def part_runs(seed: int, out: Path, litbank: Path) -> List[Run]:
    """Training on 60 documents, then the choice on the held-out 10 (scoring dev at 0 and at the choice)."""
    run_dir = out / f"train60_seed{seed}"
    train = allennlp_train_run(
        "entity-aware, 60 documents",
        seed,
        CONFIG,
        run_dir,
        {"train_data_path": f"{litbank}#files={TRAIN}", "validation_data_path": None},
    )
    choose = Run(
        name=f"choose_seed{seed}",
        system="bias chosen on documents 60-69",
        seed=seed,
        command=[
            tool("allennlp"),
            "ner-outside-bias",
            str(run_dir / "model.tar.gz"),
            f"{litbank}#files={HELDOUT}",
            *("--evaluate", f"{litbank}#files={DEV}", "--output-file", str(out / f"choose_seed{seed}.json")),
        ],
        log_file=out / f"choose_seed{seed}.log",
        result_file=out / f"choose_seed{seed}.json",
    )
    return [train, choose]


def apply_run(seed: int, bias: float, out: Path, litbank: Path) -> Run:
    """The 70-document model of ``seed`` on the dev documents with ``bias``."""
    return Run(
        name=f"full70_seed{seed}",
        system="70 documents, mean chosen bias",
        seed=seed,
        command=[
            tool("allennlp"),
            "evaluate",
            str(FULL_RUNS / f"litbank_minilm_seed{seed}" / "model.tar.gz"),
            f"{litbank}#files={DEV}",
            *("-o", json.dumps({"model.outside_logit_bias": bias})),
            *("--output-file", str(out / f"full70_seed{seed}.json")),
        ],
        log_file=out / f"full70_seed{seed}.log",
        result_file=out / f"full70_seed{seed}.json",
    )


def plot_sweeps(chosen: Dict[int, Dict[str, Any]], path: Path) -> None:
    """Each seed's held-out sweep: F1 against the bias (the choice marked), precision against recall (bias 0 a
    square, the choice a circle)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (by_bias, by_recall) = plt.subplots(1, 2, figsize=(11, 4.2))
    for (seed, choice), colour in zip(sorted(chosen.items()), ("tab:blue", "tab:orange", "tab:green", "tab:red")):
        grid, best, zero = choice["grid"], choice["best"], choice["at_zero"]
        by_bias.plot(
            [row["bias"] for row in grid], [100 * row["f1"] for row in grid], color=colour, label=f"seed {seed}"
        )
        by_bias.plot([best["bias"]], [100 * best["f1"]], "o", color=colour)
        predicting = [row for row in grid if row["predicted"]]  # no precision without a predicted entity
        by_recall.plot(
            [100 * row["recall"] for row in predicting], [100 * row["precision"] for row in predicting], color=colour
        )
        by_recall.plot([100 * best["recall"]], [100 * best["precision"]], "o", color=colour)
        if zero:
            by_recall.plot([100 * zero["recall"]], [100 * zero["precision"]], "s", color=colour)
    by_bias.set(xlabel="outside_logit_bias (added to the non-entity logit)", ylabel="held-out exact-span F1 (%)")
    by_recall.set(xlabel="held-out recall (%)", ylabel="held-out precision (%)")
    by_bias.legend()
    for axis in (by_bias, by_recall):
        axis.grid(alpha=0.3)
    figure.suptitle("LitBank span NER: the decision bias chosen on training documents 60-69 (models trained on 0-59)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


ROW_NAMES = (
    "trained on documents 0-59",
    "the same, bias chosen on documents 60-69",
    "trained on documents 0-69 (the shipped split)",
    "the same, the mean chosen bias",
)


def results_table(results: Dict[str, Dict[int, Dict[str, Any]]]) -> Dict[str, List]:
    """
    A row per set of models (the four of ``results``, in order): the bias (one number, or the seeds' choices),
    mean P and R, F1 mean ± sample std, and F1 and held-out F1 per seed (``a / b / c`` in seed order).
    """
    rows = []
    for name, per_seed in zip(ROW_NAMES, results.values()):
        seeds = sorted(per_seed)
        biases = sorted({per_seed[seed]["bias"] for seed in seeds})
        bias = biases[0] if len(biases) == 1 else " / ".join(f"{per_seed[seed]['bias']:g}" for seed in seeds)
        heldout = [per_seed[seed].get("heldout_f1") for seed in seeds]
        rows.append(
            [
                name,
                bias,
                mean_std([per_seed[seed]["precision"] for seed in seeds], 1)["mean"],
                mean_std([per_seed[seed]["recall"] for seed in seeds], 1)["mean"],
                format_mean_std(mean_std([per_seed[seed]["f1"] for seed in seeds])),
                " / ".join(f"{per_seed[seed]['f1']:.1f}" for seed in seeds),
                None if None in heldout else " / ".join(f"{value:.1f}" for value in heldout),
            ]
        )
    columns = ["models", "bias", "P", "R", "F1", "F1 per seed", "held-out F1 per seed"]
    return table(columns, rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--png", type=Path, default=None, help="default OUT/heldout_sweeps.png")
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="the results file (default results/ner_litbank_outside_bias.json; with --out: in OUT)",
    )
    args = parser.parse_args()
    litbank = require("ner/litbank", "LitBank NER")
    missing = [seed for seed in args.seeds if not (FULL_RUNS / f"litbank_minilm_seed{seed}" / "metrics.json").exists()]
    if missing:
        print(
            f"no trained 70-document model for seeds {missing} in {FULL_RUNS}: run "
            "python -m evidence.ner_litbank_side_by_side --systems entity_aware "
            f"--seeds {' '.join(map(str, missing))} first",
            file=sys.stderr,
        )
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        run_all([run for seed in args.seeds for run in part_runs(seed, args.out, litbank)])
        chosen = {
            seed: json.loads((args.out / f"choose_seed{seed}.json").read_text(encoding="utf-8")) for seed in args.seeds
        }
        mean_bias = round(mean_std([choice["best"]["bias"] for choice in chosen.values()])["mean"], 4)
        applied = run_all([apply_run(seed, mean_bias, args.out, litbank) for seed in args.seeds])
    except RunFailed as failure:
        print(f"FAILED: {str(failure).splitlines()[0]}", file=sys.stderr)
        return 1
    dev = f"{litbank}#files={DEV}"
    results: Dict[str, Dict[int, Dict[str, Any]]] = {
        "60 documents, bias 0": {},
        "60 documents, bias chosen on 60-69": {},
        "70 documents, bias 0": {},
        f"70 documents, bias {mean_bias:g} (mean chosen)": {},
    }
    rows = list(results.values())
    for seed, choice in chosen.items():
        heldout = {"heldout_f1_at_0": 100 * choice["at_zero"]["f1"], "heldout_f1": 100 * choice["best"]["f1"]}
        at_zero = {"heldout_f1": heldout["heldout_f1_at_0"]}
        rows[0][seed] = {"bias": 0.0, **percent(choice["evaluate"][dev]["at_zero"]), **at_zero}
        rows[1][seed] = {"bias": choice["best"]["bias"], **percent(choice["evaluate"][dev]["at_best"]), **heldout}
        full = json.loads((FULL_RUNS / f"litbank_minilm_seed{seed}" / "metrics.json").read_text(encoding="utf-8"))
        rows[2][seed] = {"bias": 0.0, **best_validation_percent(full, SCORES)}
    for result in applied:
        figures = json.loads(result.run.result_file.read_text(encoding="utf-8"))
        rows[3][result.run.seed] = {"bias": mean_bias, **percent(figures)}
    print(f"dev exact-span scores (%), LitBank documents 70-79 (seeds {args.seeds}); biases chosen on documents 60-69")
    columns = [("bias", "bias"), ("precision", "P"), ("recall", "R"), ("f1", "F1"), ("heldout_f1", "held-out F1")]
    print(seed_table(results, columns, digits=2))
    plot_sweeps(chosen, args.png or args.out / "heldout_sweeps.png")
    (args.out / "summary.json").write_text(
        json.dumps({"mean_chosen_bias": mean_bias, "results": results}, indent=2), encoding="utf-8"
    )
    name = "ner_litbank_outside_bias.json"
    results_file = args.results or (RESULTS_DIR / name if args.out == DEFAULT_OUT else args.out / name)
    write_results(
        results_file,
        "LitBank span NER with its decision bias (outside_logit_bias) chosen on held-out training documents: dev "
        f"exact-match span scores (%), seeds {', '.join(map(str, args.seeds))}",
        "evidence.ner_litbank_outside_bias",
        {"bias": results_table(results)},
        [
            f"{CONFIG} (entity-aware attention), one epoch of 300 batches of 8; dev: documents 70-79",
            "allennlp ner-outside-bias chooses the bias on documents 60-69 (a grid from -2 to 6 in steps of 0.25), "
            "which the first models were not trained on; the models trained on 0-69 get the mean of the choices",
            "P, R: mean over seeds; F1: mean ± sample standard deviation; per seed: in seed order",
        ],
        mean_chosen_bias=mean_bias,
        per_seed=results,
    )
    print(f"wrote {results_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
