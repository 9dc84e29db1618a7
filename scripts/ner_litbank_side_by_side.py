"""
LitBank nested NER, entity-aware attention (LUKE) beside ordinary attention over [words; entities], for
several seeds in one run: trains ``training_configs/ner/litbank_minilm.jsonnet`` and
``litbank_minilm_plain_attention.jsonnet`` (identical but for the attention) once per seed through
``allennlp train``, reads each run's dev scores from its ``metrics.json`` and prints per-seed scores,
mean and standard deviation; writes ``OUT/side_by_side.json``.

    .venv/bin/python scripts/ner_litbank_side_by_side.py [--seeds 1 2 3] [--parallel 2] [--out outputs/ner_litbank]

Each training uses one torch thread; ``--parallel N`` runs N trainings at a time. A run whose
``metrics.json`` exists is not trained again, so an interrupted run resumes when started again. Needs
the LitBank files of the external data folder (``SPANBERT_LIB_EXTERNAL_DATA``, default ``../shared/data``).
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict

from spanbert_lib.evidence.external_data import require
from spanbert_lib.evidence.repository import REPO_ROOT
from spanbert_lib.evidence.runs import Run, RunResult, allennlp_train_run, best_validation_percent, run_all
from spanbert_lib.evidence.summary import seed_summary, seed_table

SYSTEMS = {
    "entity-aware attention": "training_configs/ner/litbank_minilm.jsonnet",
    "ordinary attention over [words; entities]": "training_configs/ner/litbank_minilm_plain_attention.jsonnet",
}
SCORES = ("precision", "recall", "f1")


def training_run(system: str, seed: int, out: Path) -> Run:
    """``allennlp train`` of the system's config with one seed; its ``metrics.json`` is the result."""
    config = SYSTEMS[system]
    return allennlp_train_run(system, seed, config, out / f"{Path(config).stem}_seed{seed}")


def scores_of(result: RunResult) -> Dict[str, Any]:
    """Dev precision / recall / F1 (%) of a finished run, allennlp's training duration and the measured cost."""
    metrics = json.loads(result.run.result_file.read_text())
    scores: Dict[str, Any] = best_validation_percent(metrics, SCORES)
    scores["training_seconds"] = metrics.get("training_duration")
    return scores | result.figures()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--out", default="outputs/ner_litbank")
    args = parser.parse_args()
    require("ner/litbank", "LitBank NER")
    out = REPO_ROOT / args.out
    out.mkdir(parents=True, exist_ok=True)
    runs = [training_run(system, seed, out) for system in SYSTEMS for seed in args.seeds]
    results: Dict[str, Dict[int, Dict[str, Any]]] = {system: {} for system in SYSTEMS}
    for result in run_all(runs, parallel=args.parallel):
        results[result.run.system][result.run.seed] = scores_of(result)
    summary = {
        system: {
            "config": SYSTEMS[system],
            **seed_summary(per_seed, SCORES),
        }
        for system, per_seed in results.items()
    }
    print(f"dev exact-span scores (%), LitBank documents 70-79, seeds {args.seeds}")
    print(seed_table(results, [("precision", "P"), ("recall", "R"), ("f1", "F1")]))
    (out / "side_by_side.json").write_text(json.dumps(summary, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
