"""
LitBank nested NER side by side, several seeds each in one run: this library's ``span_ner`` with entity-aware
attention (LUKE, ``training_configs/ner/litbank_minilm.jsonnet``), with ordinary attention over [words; entities]
(``litbank_minilm_plain_attention.jsonnet``), with half of its sampled non-entity spans hard ones overlapping a
gold entity (``litbank_minilm_hard_negatives.jsonnet``) and without entity tokens
(``litbank_minilm_no_entities.jsonnet``: ``[x_first; x_last]``, what allennlp's ``enumerate_spans`` +
``EndpointSpanExtractor`` + a linear layer compute), beside SpanMarker (PyPI ``span-marker``,
``evidence/baselines/spanmarker_litbank.py``, retrained here from the same MiniLM in the other tools' own
environment). Writes ``OUT/side_by_side.json`` and the results file
(``results/ner_litbank.json``; with ``--budgets N``, ``results/ner_litbank_budgets<N>.json``; with ``--out``,
beside the runs), and prints per-seed scores, mean and standard deviation of every finished run of ``OUT`` (a
command that trains one system keeps the others' figures; unfinished run folders are listed as left out).

    .venv/bin/python -m evidence.ner_litbank_side_by_side [--seeds 1 2 3] [--parallel 2] [--out outputs/ner_litbank]
    .venv/bin/python -m evidence.ner_litbank_side_by_side --systems entity_aware spanmarker        # a subset
    .venv/bin/python -m evidence.ner_litbank_side_by_side --summarise-only                         # trains nothing

Same encoder (MiniLM, ``pretrained/all-MiniLM-L6-v2``), data (LitBank's files sorted by name: the first 70 train, the
next 10 dev), training (2,400 training sentences: ours one epoch of 300 batches of 8, SpanMarker ``--epochs 0.386`` of
its 6,216 sentences at batch 8) and sizes (spans of up to 16 words, sentences of up to 256 wordpieces, 128 entities /
markers per encoder pass). Every system is scored by the library's exact-match span F1 (``ner_span_f1``) on the same
dev sentences: ours by its validation metric (``metrics.json``), SpanMarker's predictions by
``evidence/baselines/score_predictions.py ner`` against ``evidence/baselines/litbank_export.py``'s ``ner_dev.jsonl``
(``--data``, default ``runs/baselines/data``; exported when missing). SpanMarker's decoder keeps non-overlapping
spans only, so it predicts no nested entity; ours decode nested spans.

Each training uses one torch thread; ``--parallel N`` runs N at a time. A run whose result exists is not trained
again, so an interrupted run resumes when started again. Needs the LitBank files of the external data folder
(``SPANBERT_LIB_EXTERNAL_DATA``, default ``../shared/data``); without the other tools' environment (it is made from
``evidence/baselines/anchors.lock`` when missing) SpanMarker is left out with one line saying why.
"""

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from evidence.anchors import ANCHORS_PYTHON, BASELINES, anchors_python, ensure_litbank_export
from evidence.external_data import require
from evidence.repository import REPO_ROOT, module_command
from evidence.results import RESULTS_DIR, table, write_results
from evidence.runs import (
    Run,
    RunFailed,
    RunResult,
    allennlp_train_run,
    best_validation_percent,
    finished,
    run_all,
)
from evidence.summary import format_mean_std, mean_std, seed_summary, seed_table

SCORES = ("precision", "recall", "f1")
ENCODER = "pretrained/all-MiniLM-L6-v2"
TRAIN_FILES, DEV_FILES = ":70", "70:80"
NER_FILES = ("ner_train.jsonl", "ner_dev.jsonl")
# A budget: 2,400 of the 6,216 training sentences, 300 batches of 8 of training_configs/ner/litbank_minilm.libsonnet
SPANMARKER_EPOCHS_PER_BUDGET = 0.386  # 2,400 of its 6,216 sentences
# Measured (its trainer's epoch counter: 20 steps = 0.01463 epochs): SpanMarker spreads every sentence's candidate
# spans over samples of at most 128 span markers, 6,216 sentences over about 10,930 samples, 1,367 batches of 8
SPANMARKER_STEPS_PER_EPOCH = 1367
SPANMARKER_STEPS_PER_BUDGET = math.ceil(SPANMARKER_EPOCHS_PER_BUDGET * SPANMARKER_STEPS_PER_EPOCH)  # 528
SENTENCES_PER_BUDGET = 2400


def spanmarker_epochs(budgets: int) -> str:
    """SpanMarker's ``--epochs`` for ``budgets`` times our budget (its trainer stops after
    ceil(epochs * 1,367) steps: 528, 1,056)."""
    return f"{SPANMARKER_EPOCHS_PER_BUDGET * budgets:.3f}"


@dataclass(frozen=True)
class System:
    """One compared system: ``key`` on the command line and in run folders; a config of ours or another tool's
    adapter; ``shown``: its name in the results file."""

    key: str
    label: str
    config: Optional[str] = None
    adapter: Optional[str] = None
    shown: str = ""


SYSTEMS = (
    System(
        "entity_aware",
        "entity-aware attention",
        config="training_configs/ner/litbank_minilm.jsonnet",
        shown="entity-aware attention",
    ),
    System(
        "plain_attention",
        "ordinary attention over [words; entities]",
        config="training_configs/ner/litbank_minilm_plain_attention.jsonnet",
        shown="ordinary attention over words and entities",
    ),
    System(
        "no_entities",
        "no entity tokens ([x_first; x_last])",
        config="training_configs/ner/litbank_minilm_no_entities.jsonnet",
        shown="no entity tokens: first and last word states",
    ),
    System(
        "hard_negatives",
        "entity-aware attention, hard negatives",
        config="training_configs/ner/litbank_minilm_hard_negatives.jsonnet",
        shown="entity-aware attention, 12 of the 24 negatives overlapping a gold entity",
    ),
    System(
        "spanmarker",
        "SpanMarker 1.8.1",
        adapter="spanmarker_litbank.py",
        shown="SpanMarker 1.8.1, retrained here from the same MiniLM",
    ),
)
BY_KEY = {system.key: system for system in SYSTEMS}
BY_LABEL = {system.label: system for system in SYSTEMS}


def run_folder_name(system: System, seed: int) -> str:
    """The run folder of one system and seed inside the output folder (what :func:`training_run` writes)."""
    return f"{Path(system.config).stem if system.config else system.key}_seed{seed}"


def training_run(
    system: str,
    seed: int,
    out: Path,
    data: Optional[Path] = None,
    python: Optional[str] = None,
    budgets: int = 1,
) -> Run:
    """
    One system (its label) with one seed for ``budgets`` times the budget: ``allennlp train`` of our config
    (``metrics.json`` is the result; with several budgets, one epoch each, validated after each), or another tool's
    adapter in the other tools' interpreter ``python`` on ``data``'s exported files (with several budgets its dev
    predictions after each but the last, ``--curve-every-steps``), scored afterwards (``dev_scores.json`` is the
    result).
    """
    spec = BY_LABEL[system]
    run_dir = out / run_folder_name(spec, seed)
    if spec.config is not None:
        epochs = {"trainer.num_epochs": budgets} if budgets > 1 else None
        return allennlp_train_run(system, seed, spec.config, run_dir, epochs)
    data = data or REPO_ROOT / "runs" / "baselines" / "data"
    command = [
        python or str(ANCHORS_PYTHON),
        str(BASELINES / spec.adapter),
        *("--train", str(data / "ner_train.jsonl"), "--dev", str(data / "ner_dev.jsonl"), "--encoder", ENCODER),
        *("--epochs", spanmarker_epochs(budgets), "--seed", str(seed), "--out", str(run_dir)),
        *(("--curve-every-steps", str(SPANMARKER_STEPS_PER_BUDGET)) if budgets > 1 else ()),
    ]
    score = [*module_command("evidence.baselines.score_predictions"), "ner", "--data", str(data), "--run", str(run_dir)]
    return Run(
        name=run_dir.name,
        system=system,
        seed=seed,
        command=command,
        log_file=run_dir.with_suffix(".log"),
        result_file=run_dir / "dev_scores.json",
        then=[score],
        record_file=run_dir / "training_cost.json",
    )


def run_folders(out: Path) -> List[Tuple[System, int, Path]]:
    """``(system, seed, folder)`` for every run folder of an output folder (what :func:`run_folder_name` names)."""
    by_prefix = {run_folder_name(system, 0)[: -len("0")]: system for system in SYSTEMS}
    found = []
    for folder in sorted(path for path in out.glob("*_seed*") if path.is_dir()):
        prefix, _, seed = folder.name.rpartition("_seed")
        system = by_prefix.get(f"{prefix}_seed")
        if system is not None and seed.isdigit():
            found.append((system, int(seed), folder))
    return found


def runs_on_disk(
    out: Path, data: Optional[Path], python: Optional[str], budgets: int = 1
) -> Tuple[List[Run], List[str]]:
    """
    The finished runs of every system in ``out`` (any seed), and a line for each run folder left out (unfinished,
    or made by another command): the summary holds the whole folder, not only one command's runs.
    """
    found, left_out = [], []
    for system, seed, _ in run_folders(out):
        run = training_run(system.label, seed, out, data, python, budgets)
        try:
            if finished(run):
                found.append(run)
            else:
                left_out.append(f"{run.name}: not finished")
        except RunFailed as error:
            left_out.append(str(error).splitlines()[0])
    return found, left_out


def scores_of(result: RunResult) -> Dict[str, Any]:
    """Dev precision / recall / F1 (%) of a finished run and its measured cost (ours: allennlp's training duration)."""
    figures = json.loads(result.run.result_file.read_text())
    if BY_LABEL[result.run.system].config is None:
        scores: Dict[str, Any] = {name: figures[name] for name in SCORES}
        record = json.loads((result.run.result_file.parent / "run.json").read_text())
        scores["training_seconds"] = record.get("timings", {}).get("training", {}).get("wall_seconds")
    else:
        scores = best_validation_percent(figures, SCORES)
        scores["training_seconds"] = figures.get("training_duration")
    return scores | result.figures()


# A published system on LitBank's nested entities, for scale (trained to convergence, the paper's own split)
PUBLISHED = [
    [
        "layered BiLSTM-CRF trained on LitBank (Bamman, Popat and Shen, NAACL 2019)",
        "LitBank, the paper's own split and test set",
        68.3,
        "<https://paperswithcode.com/paper/an-annotated-dataset-of-literary-entities>",
    ]
]


def results_path(out: Optional[str], budgets: int) -> Path:
    """``results/ner_litbank.json`` (``_budgets<N>`` for N budgets) for the default output folder, else
    ``OUT/results.json``."""
    if out is not None:
        return REPO_ROOT / out / "results.json"
    return RESULTS_DIR / ("ner_litbank.json" if budgets == 1 else f"ner_litbank_budgets{budgets}.json")


def training_words(budgets: int) -> str:
    if budgets == 1:
        return f"one training of {SENTENCES_PER_BUDGET:,} sentences"
    return f"{budgets} times {SENTENCES_PER_BUDGET:,} training sentences"


def results_tables(results: Dict[str, Dict[int, Dict[str, Any]]], budgets: int = 1) -> Dict[str, Dict[str, List]]:
    """
    ``systems``: a row per system (its config, mean P and R, F1 mean ± sample std, F1 per seed, CPU minutes and
    peak RSS of its first seed's run), from ``results[label][seed]`` (:func:`scores_of`); ``published``:
    :data:`PUBLISHED`.
    """
    seeds = sorted({seed for per_seed in results.values() for seed in per_seed})
    first = seeds[0] if seeds else None
    columns = ["system", "config", "P", "R", "F1", *(f"F1 seed {seed}" for seed in seeds)]
    which = f" (seed {first})" if first is not None else ""
    columns += [f"CPU minutes{which}", f"peak RSS GB{which}"]
    rows = []
    for label, per_seed in results.items():
        system = BY_LABEL[label]
        config = (
            f"`{Path(system.config).name}`"
            if system.config
            else f"its `Trainer`, `--epochs {spanmarker_epochs(budgets)}`"
        )
        means = {name: mean_std([scores.get(name) for scores in per_seed.values()], 1)["mean"] for name in SCORES}
        f1 = format_mean_std(mean_std([scores.get("f1") for scores in per_seed.values()]))
        by_seed = [_rounded(per_seed.get(seed, {}).get("f1"), 1) for seed in seeds]
        cost = per_seed.get(first, {})
        cpu = cost.get("cpu_seconds")
        rss = cost.get("max_rss_mb")
        rows.append(
            [
                system.shown or label,
                config,
                means["precision"],
                means["recall"],
                f1,
                *by_seed,
                None if cpu is None else round(cpu / 60, 1),
                None if rss is None else round(rss / 1000, 1),
            ]
        )
    return {
        "systems": table(columns, rows),
        "published": table(["system", "data", "F1", "reference"], PUBLISHED),
    }


def results_notes(budgets: int, left_out: List[str]) -> List[str]:
    sentences = SENTENCES_PER_BUDGET * budgets
    return [
        "LitBank's files sorted by name: documents 0-69 train, 70-79 dev (740 sentences); every system scored by the "
        "library's exact-match span F1 (ner_span_f1) on the same dev sentences",
        f"training: {sentences:,} training sentences (ours: {budgets} epoch(s) of 300 batches of 8 with 24 sampled "
        f"non-entity spans a sentence, the best epoch kept; SpanMarker: --epochs {spanmarker_epochs(budgets)} of its "
        f"6,216 sentences at batch 8, {SPANMARKER_STEPS_PER_BUDGET * budgets:,} of its steps)",
        "spans of up to 16 words, sentences of up to 256 wordpieces, 128 entities / markers per encoder pass; one "
        "torch thread per training",
        "P, R: mean over the seeds; F1: mean ± sample standard deviation over the seeds (random_seed = numpy_seed = "
        "pytorch_seed = the seed)",
        "CPU minutes: ours the whole allennlp train process, dev evaluation included; SpanMarker its training and its "
        "dev prediction",
        "SpanMarker's decoder keeps non-overlapping spans only, so it predicts no nested entity",
        "published: a layered BiLSTM-CRF trained to convergence on the paper's split, test F1 from the paper's "
        "abstract; not comparable with these dev figures of a short training",
        *(f"left out: {line}" for line in left_out),
    ]


def _rounded(value: Optional[float], digits: int) -> Optional[float]:
    return None if value is None else round(float(value), digits)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument(
        "--budgets",
        type=int,
        default=1,
        help="train every system N times as long (2,400 sentences each time), scored after each: ours one epoch "
        "each time, SpanMarker a learning curve every 528 of its steps (default 1; output folder "
        "outputs/ner_litbank_budgets<N>, results file results/ner_litbank_budgets<N>.json)",
    )
    parser.add_argument("--out", default=None, help="default outputs/ner_litbank (with --budgets N > 1: _budgets<N>)")
    parser.add_argument("--systems", nargs="+", choices=list(BY_KEY), default=list(BY_KEY), help="default: all")
    parser.add_argument("--data", type=Path, default=REPO_ROOT / "runs" / "baselines" / "data")
    parser.add_argument("--summarise-only", action="store_true", help="print the table of the finished runs")
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="the results file (default results/ner_litbank.json, results/ner_litbank_budgets<N>.json with "
        "--budgets N; with --out: OUT/results.json)",
    )
    args = parser.parse_args()
    require("ner/litbank", "LitBank NER")
    out = REPO_ROOT / (args.out or "outputs/ner_litbank" + (f"_budgets{args.budgets}" if args.budgets > 1 else ""))
    out.mkdir(parents=True, exist_ok=True)
    systems: List[System] = [BY_KEY[key] for key in args.systems]
    python = None
    if not args.summarise_only and any(system.adapter for system in systems):
        python = anchors_python()
        if python is None:
            systems = [system for system in systems if system.adapter is None]
        else:
            ensure_litbank_export(args.data, TRAIN_FILES, DEV_FILES, NER_FILES)
    runs = (
        []
        if args.summarise_only
        else [
            training_run(system.label, seed, out, args.data, python, args.budgets)
            for seed in args.seeds
            for system in systems
        ]
    )
    try:
        done = run_all(runs, parallel=args.parallel)
    except RunFailed as failure:
        print(f"FAILED: {str(failure).splitlines()[0]}", file=sys.stderr)
        return 1
    # every finished run of the folder, not only this command's: a run of one system keeps the others' figures
    others, left_out = runs_on_disk(out, args.data, python, args.budgets)
    this_command = {run.name for run in runs}
    done += run_all([other for other in others if other.name not in this_command])
    per_system: Dict[str, Dict[int, Dict[str, Any]]] = {}
    for result in done:
        per_system.setdefault(result.run.system, {})[result.run.seed] = scores_of(result)
    results = {system.label: per_system[system.label] for system in SYSTEMS if system.label in per_system}
    summary = {
        label: {"config": BY_LABEL[label].config or BY_LABEL[label].adapter, **seed_summary(per_seed, SCORES)}
        for label, per_seed in results.items()
    }
    seeds = sorted({seed for per_seed in results.values() for seed in per_seed})
    print(f"dev exact-span scores (%), LitBank documents 70-79, every finished run of {out} (seeds {seeds})")
    print(seed_table(results, [("precision", "P"), ("recall", "R"), ("f1", "F1")]))
    for line in left_out:
        print(f"left out: {line}")
    (out / "side_by_side.json").write_text(json.dumps(summary | {"left_out": left_out}, indent=2, default=str))
    results_file = args.results or results_path(args.out, args.budgets)
    write_results(
        results_file,
        f"LitBank nested NER from MiniLM, {training_words(args.budgets)}: dev exact-match span scores (%), "
        "this library's span NER and SpanMarker retrained here",
        "evidence.ner_litbank_side_by_side",
        results_tables(results, args.budgets),
        results_notes(args.budgets, left_out),
        per_seed=results,
    )
    print(f"wrote {results_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
