"""
Does continued pre-training help downstream? LitBank nested NER with the encoder the main job ADAPTED (MLM + SBO
on fixtures/corpus, exported by ``allennlp export-encoder`` to ``outputs/main_job/encoder``) beside the ORIGINAL
MiniLM it started from: the same config (``training_configs/ner/litbank_minilm.jsonnet``: its split, documents
0-69 train and 70-79 dev, its budget of 300 batches of 8), the encoder (and its tokenizer files) the only
difference, several seeds; per-seed dev scores, mean and standard deviation; writes ``OUT/side_by_side.json`` and
the results file (``--results``, default ``results/adaptation_ner.json``; ``OUT/adaptation_ner.json`` with ``--out``).

    bash scripts/main.sh   # writes outputs/main_job/encoder
    nice -n 10 .venv/bin/python -m evidence.adaptation_ner_side_by_side [--adapted outputs/main_job/encoder] \\
        [--seeds 1 2 3] [--parallel 1] [--out outputs/adaptation_ner]

Each training uses one torch thread; ``--parallel N`` runs N at a time. A run whose ``metrics.json`` exists is
not trained again (an interrupted run resumes). Needs the LitBank files of the external data folder
(``SPANBERT_LIB_EXTERNAL_DATA``, default ``../shared/data``).
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping

from evidence.external_data import require
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, table, write_results
from evidence.runs import Run, RunResult, allennlp_train_run, best_validation_percent, run_all
from evidence.summary import format_mean_std, mean_std, seed_summary, seed_table

CONFIG = "training_configs/ner/litbank_minilm.jsonnet"
ORIGINAL = "original MiniLM (pretrained/all-MiniLM-L6-v2)"
ADAPTED = "MiniLM adapted by the main job (MLM + SBO on fixtures/corpus)"
SCORES = ("precision", "recall", "f1")
DEFAULT_OUT = "outputs/adaptation_ner"
SHOWN = {
    ORIGINAL: "original MiniLM (`pretrained/all-MiniLM-L6-v2`)",
    ADAPTED: "MiniLM adapted by the main job (MLM + SBO on `fixtures/corpus`)",
}


def training_run(system: str, encoder: str, seed: int, config: str, out: Path) -> Run:
    """``allennlp train`` of the config with ``encoder`` (reader tokenizer and model) and one seed."""
    run_dir = out / f"{'adapted' if system == ADAPTED else 'original'}_seed{seed}"
    encoder_overrides = {"dataset_reader.model_name": encoder, "model.encoder.model_name": encoder}
    return allennlp_train_run(system, seed, config, run_dir, encoder_overrides)


def scores_of(result: RunResult) -> Dict[str, Any]:
    """Dev precision / recall / F1 (%) of a finished run and its measured cost."""
    metrics = json.loads(result.run.result_file.read_text())
    return best_validation_percent(metrics, SCORES) | result.figures()


def results_table(results: Mapping[str, Mapping[int, Mapping[str, Any]]]) -> Dict[str, List]:
    """A row per encoder: F1 per seed, then P, R and F1 as mean ± sample standard deviation over the seeds."""
    seeds = sorted({seed for per_seed in results.values() for seed in per_seed})
    rows = []
    for system, per_seed in results.items():
        by_seed = [per_seed.get(seed, {}).get("f1") for seed in seeds]
        rows.append(
            [
                SHOWN.get(system, system),
                *(None if value is None else round(value, 1) for value in by_seed),
                *(format_mean_std(mean_std([scores[name] for scores in per_seed.values()])) for name in SCORES),
            ]
        )
    return table(["encoder", *(f"F1 seed {seed}" for seed in seeds), "P", "R", "F1"], rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adapted", default="outputs/main_job/encoder", help="the main job's exported encoder")
    parser.add_argument("--original", default="pretrained/all-MiniLM-L6-v2")
    parser.add_argument("--config", default=CONFIG)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument(
        "--results", type=Path, default=None, help="the results file (default results/adaptation_ner.json)"
    )
    args = parser.parse_args()
    require("ner/litbank", "LitBank NER")
    if not (REPO_ROOT / args.adapted / "config.json").is_file():
        sys.exit(f"error: no exported encoder at {args.adapted}; run `bash scripts/main.sh` first")
    out = REPO_ROOT / args.out
    out.mkdir(parents=True, exist_ok=True)
    encoders = {ORIGINAL: args.original, ADAPTED: args.adapted}
    runs = [
        training_run(system, encoder, seed, args.config, out)
        for seed in args.seeds
        for system, encoder in encoders.items()
    ]
    results: Dict[str, Dict[int, Dict[str, Any]]] = {system: {} for system in encoders}
    for result in run_all(runs, parallel=args.parallel):
        results[result.run.system][result.run.seed] = scores_of(result)
    summary = {
        system: {
            "encoder": encoders[system],
            "config": args.config,
            **seed_summary(per_seed, SCORES),
        }
        for system, per_seed in results.items()
    }
    print(f"dev exact-span scores (%), LitBank documents 70-79, {args.config}, seeds {args.seeds}")
    print(seed_table(results, [("precision", "P"), ("recall", "R"), ("f1", "F1")]))
    (out / "side_by_side.json").write_text(json.dumps(summary, indent=2, default=str))
    name = "adaptation_ner.json"
    results_file = args.results or (RESULTS_DIR / name if args.out == DEFAULT_OUT else out / name)
    write_results(
        results_file,
        "LitBank nested NER with the encoder the main job adapted and with the original MiniLM: dev exact-match span "
        f"scores (%), seeds {', '.join(map(str, args.seeds))}",
        "evidence.adaptation_ner_side_by_side",
        {"encoders": results_table(results)},
        [
            f"{args.config}: documents 0-69 train, 70-79 dev, one epoch of 300 batches of 8; the encoder (and its "
            "tokenizer) the only difference; one torch thread per training",
            f"the adapted encoder: {args.adapted}, exported by bash scripts/main.sh",
            "P, R, F1: mean ± sample standard deviation over the seeds",
        ],
        per_seed=results,
    )
    print(f"wrote {results_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
