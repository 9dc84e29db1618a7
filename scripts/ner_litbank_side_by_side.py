"""
LitBank nested NER, entity-aware attention (LUKE) beside ordinary attention over [words; entities], for
several seeds in one run: trains ``training_configs/ner/litbank_minilm.jsonnet`` and
``litbank_minilm_plain_attention.jsonnet`` (identical but for the attention) once per seed through
``allennlp train``, reads each run's dev scores from its ``metrics.json`` and prints per-seed scores,
mean and standard deviation; writes ``OUT/side_by_side.json``.

    .venv/bin/python scripts/ner_litbank_side_by_side.py [--seeds 1 2 3] [--parallel 2] [--out outputs/ner_litbank]

Each training uses one torch thread; ``--parallel N`` runs N trainings at a time. Needs the LitBank
files of the external data folder (``SPANBERT_LIB_EXTERNAL_DATA``, default ``../shared/data``).
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # training_runs, also when loaded by path
from training_runs import one_thread_env, seed_overrides  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = {
    "entity-aware attention": "training_configs/ner/litbank_minilm.jsonnet",
    "ordinary attention over [words; entities]": "training_configs/ner/litbank_minilm_plain_attention.jsonnet",
}
SCORES = ("precision", "recall", "f1")


def train(config: str, seed: int, run_dir: Path) -> dict:
    """Trains one config with one seed (unless its metrics already exist) and returns its dev scores."""
    metrics_file = run_dir / "metrics.json"
    seconds = None
    if not metrics_file.exists():
        overrides = json.dumps(seed_overrides(seed))
        env = one_thread_env()
        started = time.time()
        with open(run_dir.with_suffix(".log"), "w") as log:
            subprocess.run(
                [str(REPO_ROOT / ".venv" / "bin" / "allennlp"), "train", config, "-s", str(run_dir), "-o", overrides],
                cwd=REPO_ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                check=True,
            )
        seconds = time.time() - started
    metrics = json.loads(metrics_file.read_text())
    scores = {name: 100 * metrics[f"best_validation_{name}"] for name in SCORES}
    scores["training_seconds"] = metrics.get("training_duration")
    scores["wall_seconds"] = seconds
    return scores


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--out", default="outputs/ner_litbank")
    args = parser.parse_args()
    out = REPO_ROOT / args.out
    out.mkdir(parents=True, exist_ok=True)
    jobs = {
        (system, seed): (config, out / f"{Path(config).stem}_seed{seed}")
        for system, config in SYSTEMS.items()
        for seed in args.seeds
    }
    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        futures = {key: pool.submit(train, config, key[1], run_dir) for key, (config, run_dir) in jobs.items()}
        results = {key: future.result() for key, future in futures.items()}
    summary = {}
    print(f"dev exact-span scores (%), LitBank documents 70-79, seeds {args.seeds}")
    for system in SYSTEMS:
        per_seed = {seed: results[(system, seed)] for seed in args.seeds}
        f1s = [scores["f1"] for scores in per_seed.values()]
        spread = statistics.stdev(f1s) if len(f1s) > 1 else 0.0
        summary[system] = {
            "config": SYSTEMS[system],
            "per_seed": per_seed,
            "mean": {name: statistics.mean(s[name] for s in per_seed.values()) for name in SCORES},
            "f1_std": spread,
        }
        cells = " ".join(
            f"seed {seed}: {s['precision']:.1f}/{s['recall']:.1f}/{s['f1']:.1f}" for seed, s in per_seed.items()
        )
        mean = summary[system]["mean"]
        print(
            f"{system:<42} {cells} | mean P/R/F1 {mean['precision']:.1f}/{mean['recall']:.1f}/"
            f"{mean['f1']:.1f}, F1 std {spread:.1f}"
        )
    (out / "side_by_side.json").write_text(json.dumps(summary, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
