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
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))  # training_runs, also when loaded by path
from training_runs import one_thread_env, seed_overrides  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = REPO_ROOT / ".venv" / "bin"
CONFIG = "training_configs/coref/litbank_minilm.jsonnet"
BASELINE_SCRIPT = REPO_ROOT / "scripts" / "coref_litbank_baseline.py"
OURS, THEIRS = "spanbert_coref", "allennlp-models coref"
SCORE_FILE = "dev_scores_spanbert_lib_scorer.json"


def _run(command: List[str], log_file: Path) -> Dict[str, float]:
    """Runs ``command`` with one torch thread; returns its wall and CPU seconds (children included)."""
    env = one_thread_env()
    started = time.time()
    with open(log_file, "a") as log:
        process = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed; see {log_file}")
    return {"wall_seconds": round(time.time() - started), "cpu_seconds": round(usage.ru_utime + usage.ru_stime)}


def train_and_score(system: str, seed: int, run_dir: Path) -> Dict[str, Any]:
    """Trains one system with one seed into ``run_dir`` (unless already scored) and returns its dev scores
    plus the training's wall/CPU seconds."""
    score_file, cost_file = run_dir / SCORE_FILE, run_dir / "training_cost.json"
    log_file = run_dir.with_suffix(".log")
    if not score_file.exists():
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        if system == OURS:
            overrides = {
                **seed_overrides(seed),
                "dataset_reader.window_seed": seed,
            }  # a dotted key: a nested dict would replace the reader
            cost = _run(
                [
                    str(VENV_BIN / "allennlp"),
                    "train",
                    CONFIG,
                    "-s",
                    str(run_dir),
                    "--force",
                    "-o",
                    json.dumps(overrides),
                ],
                log_file,
            )
            cost_file.write_text(json.dumps(cost))
            _run(
                [
                    str(VENV_BIN / "python"),
                    str(BASELINE_SCRIPT),
                    "--ours",
                    str(run_dir / "model.tar.gz"),
                    "--ours-json",
                    str(score_file),
                ],
                log_file,
            )
        else:
            cost = _run(
                [str(VENV_BIN / "python"), str(BASELINE_SCRIPT), "-s", str(run_dir), "--seed", str(seed)], log_file
            )
            cost_file.write_text(json.dumps(cost))
    return json.loads(score_file.read_text()) | json.loads(cost_file.read_text())


def _mean_std(values: List[float]) -> Dict[str, float]:
    return {
        "mean": round(statistics.mean(values), 2),
        "std": round(statistics.stdev(values), 2) if len(values) > 1 else 0.0,
    }


def summarise(results: Dict[str, Dict[int, Dict[str, Any]]]) -> Dict[str, Any]:
    """Per system: per-seed scores and, for each CoNLL F1 and the training cost, mean and std."""
    summary = {}
    for system, per_seed in results.items():
        runs = list(per_seed.values())
        summary[system] = {
            "per_seed": per_seed,
            "conll_f1_with_singletons": _mean_std([r["gold_with_singletons"]["conll_f1"] for r in runs]),
            "conll_f1_without_singletons": _mean_std([r["gold_without_singletons"]["conll_f1"] for r in runs]),
            **{
                f"{metric}_f1_with_singletons": _mean_std([r["gold_with_singletons"][metric] for r in runs])
                for metric in ("muc", "bcub", "ceafe")
            },
            "training_wall_seconds": _mean_std([r["wall_seconds"] for r in runs]),
            "training_cpu_seconds": _mean_std([r["cpu_seconds"] for r in runs]),
            "predict_seconds": _mean_std([r["predict_seconds"] for r in runs]),
        }
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "outputs" / "coref_litbank")
    args = parser.parse_args()
    litbank = (
        Path(os.environ.get("SPANBERT_LIB_EXTERNAL_DATA", REPO_ROOT.parent / "shared" / "data")) / "coref" / "litbank"
    )
    if not litbank.is_dir():
        print(f"LitBank not found at {litbank} (set SPANBERT_LIB_EXTERNAL_DATA); nothing to do")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    run_dirs = {
        (system, seed): args.out / f"{'ours' if system == OURS else 'allennlp_models'}_seed{seed}"
        for seed in args.seeds
        for system in (THEIRS, OURS)
    }  # the longer runs first
    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        futures = {key: pool.submit(train_and_score, *key, run_dir) for key, run_dir in run_dirs.items()}
        results: Dict[str, Dict[int, Dict[str, Any]]] = {OURS: {}, THEIRS: {}}
        for (system, seed), future in futures.items():
            results[system][seed] = future.result()
    summary = summarise(results)
    (args.out / "side_by_side.json").write_text(json.dumps(summary, indent=2))
    print(f"LitBank dev (documents 70-79), CoNLL F1 against gold with singletons / without; seeds {args.seeds}")
    for system in (OURS, THEIRS):
        cells = "  ".join(
            f"seed {seed}: {r['gold_with_singletons']['conll_f1']:.1f} / {r['gold_without_singletons']['conll_f1']:.1f}"
            for seed, r in results[system].items()
        )
        s = summary[system]
        print(
            f"{system:<22} {cells} | mean {s['conll_f1_with_singletons']['mean']:.1f} ± "
            f"{s['conll_f1_with_singletons']['std']:.1f} / {s['conll_f1_without_singletons']['mean']:.1f} ± "
            f"{s['conll_f1_without_singletons']['std']:.1f}; training {s['training_wall_seconds']['mean'] / 60:.0f} "
            f"min wall, {s['training_cpu_seconds']['mean'] / 60:.0f} min CPU"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
