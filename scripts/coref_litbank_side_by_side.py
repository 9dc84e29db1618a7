"""
LitBank coreference, this library's ``spanbert_coref`` beside allennlp-models' ``coref``, for several
seeds in one run: per seed, trains ``training_configs/coref/litbank_minilm.jsonnet`` through
``allennlp train`` and allennlp-models' ``coref`` through ``scripts/coref_litbank_baseline.py`` (same
encoder, windows, sizes, optimiser, epochs), scores both on the whole dev documents with the same
CoNLL-2012 scorer, and prints per-seed scores, mean and standard deviation; writes
``OUT/side_by_side.json``.

    .venv/bin/python scripts/coref_litbank_side_by_side.py [--seeds 1 2 3] [--parallel 2] [--out outputs/coref_litbank]

A seed sets allennlp's ``random_seed``/``numpy_seed``/``pytorch_seed`` and the reader's
``window_seed`` (which training window of each long document is drawn), for both systems alike.
Each training uses one torch thread; ``--parallel N`` runs N of them at a time. A run whose scores
already exist is not trained again, so an interrupted run can be resumed by starting it again.
Needs LitBank in the external data folder (``SPANBERT_LIB_EXTERNAL_DATA``, default ``../shared/data``).
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

from spanbert_lib.evidence.external_data import config_data_overrides, require
from spanbert_lib.evidence.repository import REPO_ROOT, tool
from spanbert_lib.evidence.runs import Run, RunResult, run_all
from spanbert_lib.evidence.summary import mean_std, seed_overrides, seed_table

CONFIG = "training_configs/coref/litbank_minilm.jsonnet"
BASELINE_SCRIPT = REPO_ROOT / "scripts" / "coref_litbank_baseline.py"
OURS, THEIRS = "spanbert_coref", "allennlp-models coref"
SCORE_FILE = "dev_scores_spanbert_lib_scorer.json"
COST_FILE = "training_cost.json"


def run_dir_of(out: Path, system: str, seed: int) -> Path:
    return out / f"{'ours' if system == OURS else 'allennlp_models'}_seed{seed}"


def training_run(system: str, seed: int, run_dir: Path) -> Run:
    """One system trained with one seed into ``run_dir`` and scored on the dev documents (the score file is
    the result); the training's cost is kept in ``run_dir/training_cost.json``."""
    if system == OURS:
        overrides = {
            **config_data_overrides(REPO_ROOT / CONFIG),
            **seed_overrides(seed),
            "dataset_reader.window_seed": seed,  # a dotted key: a nested dict would replace the reader
        }
        command = [tool("allennlp"), "train", CONFIG, "-s", str(run_dir), "--force", "-o", json.dumps(overrides)]
        score = ["--ours", str(run_dir / "model.tar.gz"), "--ours-json", str(run_dir / SCORE_FILE)]
        then = [[tool("python"), str(BASELINE_SCRIPT), *score]]
    else:  # the baseline script trains, then scores
        command, then = [tool("python"), str(BASELINE_SCRIPT), "-s", str(run_dir), "--seed", str(seed)], []
    return Run(
        name=run_dir.name,
        system=system,
        seed=seed,
        command=command,
        log_file=run_dir.with_suffix(".log"),
        result_file=run_dir / SCORE_FILE,
        then=then,
        record_file=run_dir / COST_FILE,
    )


def scores_of(result: RunResult) -> Dict[str, Any]:
    """A finished run's dev scores plus its training's wall and CPU seconds."""
    scores = json.loads(result.run.result_file.read_text())
    return scores | {"wall_seconds": result.wall_seconds, "cpu_seconds": result.cpu_seconds}


def _stats(values: List[float]) -> Dict[str, float]:
    return mean_std(values, digits=2)


def summarise(results: Dict[str, Dict[int, Dict[str, Any]]]) -> Dict[str, Any]:
    """Per system: per-seed scores and, for each CoNLL F1 and the training cost, mean and std."""
    summary = {}
    for system, per_seed in results.items():
        runs = list(per_seed.values())
        summary[system] = {
            "per_seed": per_seed,
            "conll_f1_with_singletons": _stats([r["gold_with_singletons"]["conll_f1"] for r in runs]),
            "conll_f1_without_singletons": _stats([r["gold_without_singletons"]["conll_f1"] for r in runs]),
            **{
                f"{metric}_f1_with_singletons": _stats([r["gold_with_singletons"][metric] for r in runs])
                for metric in ("muc", "bcub", "ceafe")
            },
            "training_wall_seconds": _stats([r["wall_seconds"] for r in runs]),
            "training_cpu_seconds": _stats([r["cpu_seconds"] for r in runs]),
            "predict_seconds": _stats([r["predict_seconds"] for r in runs]),
        }
    return summary


def table(results: Dict[str, Dict[int, Dict[str, Any]]]) -> str:
    """Per seed and mean ± std: CoNLL F1 against gold with and without singletons, training minutes."""
    rows = {
        system: {
            seed: {
                "with": r["gold_with_singletons"]["conll_f1"],
                "without": r["gold_without_singletons"]["conll_f1"],
                "wall": r["wall_seconds"] / 60 if r["wall_seconds"] is not None else None,
                "cpu": r["cpu_seconds"] / 60 if r["cpu_seconds"] is not None else None,
            }
            for seed, r in per_seed.items()
        }
        for system, per_seed in results.items()
    }
    columns = [
        ("with", "CoNLL F1 with singletons"),
        ("without", "without"),
        ("wall", "train min wall"),
        ("cpu", "train min CPU"),
    ]
    return seed_table(rows, columns)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "outputs" / "coref_litbank")
    args = parser.parse_args()
    require("coref/litbank", "LitBank")
    args.out.mkdir(parents=True, exist_ok=True)
    runs = [
        training_run(system, seed, run_dir_of(args.out, system, seed))
        for seed in args.seeds
        for system in (THEIRS, OURS)
    ]  # the longer runs first
    results: Dict[str, Dict[int, Dict[str, Any]]] = {OURS: {}, THEIRS: {}}
    for result in run_all(runs, parallel=args.parallel):
        results[result.run.system][result.run.seed] = scores_of(result)
    summary = summarise(results)
    (args.out / "side_by_side.json").write_text(json.dumps(summary, indent=2))
    print(f"LitBank dev (documents 70-79), CoNLL F1 against gold with singletons / without; seeds {args.seeds}")
    print(table({system: results[system] for system in (OURS, THEIRS)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
