"""
LitBank coreference, nine systems side by side in one run, several seeds each: this library's ``spanbert_coref``
(``training_configs/coref/litbank_minilm.jsonnet``, singletons on; ``ours_agreement``,
``litbank_minilm_agreement.jsonnet``: with the pair feature of agreement in gender and number; ``ours_coarse``,
``litbank_minilm_coarse.jsonnet``: the coarse antecedent score alone, F-coref's way; ``ours_topk`` and
``ours_coarse_topk``: the same configs predicting with the top 0.4 spans per word instead of the spans scored as
mentions, ``model.min_mention_score`` null, as before that option existed), allennlp-models' ``coref``
(``evidence/coref_litbank_baseline.py``), and today's tools in their own environment (``evidence/baselines/``):
fastcoref's F-coref architecture, fastcoref's LingMess, and Maverick (``mes``). All start from the same MiniLM encoder
(``pretrained/all-MiniLM-L6-v2``), train on the same LitBank documents (files sorted by name, the first 70) for the
same number of epochs (6, as ours), and predict the same dev documents (the next 10). Every system's predictions are
written as CoNLL and scored by the library's scorer (what ``allennlp coref-score`` runs) against the dev key WITH
LitBank's singletons and WITHOUT them (one-mention clusters left out of key and response alike;
``evidence/baselines/score_predictions.py``). Prints per-seed rows and mean ± std of every finished run in ``OUT``
(whichever command ran it); writes them to ``OUT/side_by_side.json``, and the tables the documentation shows to a
results file (``--results``; default ``results/coref_litbank.json`` for the full runs in the default folder,
``OUT/results.json`` otherwise).

    .venv/bin/python -m evidence.coref_litbank_side_by_side [--seeds 1 2 3] [--parallel 1] [--out outputs/coref_litbank]
    .venv/bin/python -m evidence.coref_litbank_side_by_side --systems ours fcoref       # a subset
    .venv/bin/python -m evidence.coref_litbank_side_by_side --summarise-only            # the table of finished runs
    .venv/bin/python -m evidence.coref_litbank_side_by_side --small                     # smoke: 3 docs, 1 epoch, 1 seed

The same number of EPOCHS, not the same CPU time: every system's own recipe is defined in epochs (passes over the
training documents, with warm-up and decay spread over them), so an equal number of passes runs each recipe as its
authors wrote it, only shorter; a CPU-time budget would cut some systems mid-schedule (or, for the slow ones, after a
few documents) and would depend on this machine's load. The CPU time each system spent is reported beside its scores.

Runs go seed-major (every system of seed 1, then of seed 2, ...), in the order ours, ours_agreement, ours_topk,
ours_coarse, ours_coarse_topk, allennlp-models, F-coref, LingMess, Maverick, so an interrupted run still compares
systems; a run whose result exists is not run again (start the same command to resume; fastcoref's runs, F-coref and
LingMess, also go on from their last epoch checkpoint, ``evidence/baselines/epoch_checkpoints.py``, so a run longer
than a session takes two), and a failed run does not stop the others. A seed sets allennlp's seeds and our reader's
``window_seed`` for the allennlp systems, and ``--seed`` of the anchors' adapters. Each training has one torch
thread; ``--parallel N`` runs N at a time (the anchors take up to ~5 GB each).

Measured per run: training CPU and wall seconds (ours: the ``allennlp train`` process; allennlp-models: its
``train_model`` call - both validate on the dev documents after every epoch, as their configs say; the anchors: their
training loop, which does not validate), prediction seconds (wall seconds to predict the 10 dev documents, one thread,
model already loaded) and peak resident memory (the process that trained and predicted; for ours the larger of the
training process and the process predicting the dev documents).

The anchors run with ``.venv-baselines/anchors/bin/python``, made from ``evidence/baselines/anchors.lock`` when missing
(``evidence/baselines/make_env.py``); when it cannot be made the script says so in one line and runs ours and
allennlp-models only. Their training data and the two dev keys are ``evidence/baselines/litbank_export.py``'s files
(``--data``, default ``runs/baselines/data``; exported first when missing). Each anchor run also keeps its trained
model in ``RUN/model`` (what the package's own loader reads: ``evidence/baselines/README.md``). Needs LitBank in the
external data folder (``SPANBERT_LIB_EXTERNAL_DATA``, default ``../shared/data``).
"""

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from evidence.anchors import (
    ANCHORS_PYTHON,
    BASELINES,
    anchors_python,
    ensure_litbank_export,
    last_line,
)
from evidence.external_data import config_data_overrides, external_path, require
from evidence.repository import REPO_ROOT, module_command, tool
from evidence.results import RESULTS_DIR, write_results
from evidence.results import table as results_table
from evidence.runs import Run, RunFailed, RunResult, finished, run_all
from evidence.summary import format_mean_std, mean_std, seed_overrides, seed_table

CONFIG = "training_configs/coref/litbank_minilm.jsonnet"
COARSE_CONFIG = "training_configs/coref/litbank_minilm_coarse.jsonnet"
AGREEMENT_CONFIG = "training_configs/coref/litbank_minilm_agreement.jsonnet"
BASELINE_MODULE = "evidence.coref_litbank_baseline"
COREF_FILES = ("coref_train.jsonl", "coref_dev.jsonl", "coref_dev_key.conll", "coref_dev_key_no_singletons.conll")
OURS, OURS_COARSE, THEIRS = "spanbert_coref", "spanbert_coref coarse-only", "allennlp-models coref"
OURS_TOPK, OURS_COARSE_TOPK = "spanbert_coref top-k only", "spanbert_coref coarse-only top-k only"
OURS_AGREEMENT = "spanbert_coref + agreement"
# predicting with the top 0.4 spans per word, as before min_mention_score (the configs' default before it)
TOPK_ONLY = (("model.min_mention_score", None),)
FCOREF, LINGMESS, MAVERICK = "fastcoref F-coref", "fastcoref LingMess", "Maverick mes"
SCORE_FILE = "dev_scores_spanbert_lib_scorer.json"  # the allennlp systems' scores, timings (coref_litbank_baseline.py)
COST_FILE = "training_cost.json"  # the harness's record of a run: command, wall / CPU seconds, peak RSS
ADAPTER_RECORD = "run.json"  # an anchor adapter's timings and settings (its last file)
PREDICTIONS, CONLL_SCORES = "dev_predictions.jsonl", "dev_scores.json"


@dataclass(frozen=True)
class System:
    """One of the compared systems: ``key`` names it on the command line and in run folders."""

    key: str
    label: str
    adapter: Optional[str] = None  # evidence/baselines/<adapter> for an anchor
    adapter_args: Tuple[str, ...] = ()
    config: Optional[str] = None  # this library's training config, trained with ``allennlp train``
    overrides: Tuple[Tuple[str, Any], ...] = ()  # (dotted key, value) pairs applied to ``config``


SYSTEMS = (
    System("ours", OURS, config=CONFIG),
    System("ours_agreement", OURS_AGREEMENT, config=AGREEMENT_CONFIG),
    System("ours_topk", OURS_TOPK, config=CONFIG, overrides=TOPK_ONLY),
    System("ours_coarse", OURS_COARSE, config=COARSE_CONFIG),
    System("ours_coarse_topk", OURS_COARSE_TOPK, config=COARSE_CONFIG, overrides=TOPK_ONLY),
    System("allennlp_models", THEIRS),
    System("fcoref", FCOREF, "fastcoref_litbank.py", ("--trainer", "fcoref")),
    System("lingmess", LINGMESS, "fastcoref_litbank.py", ("--trainer", "lingmess")),
    System("maverick", MAVERICK, "maverick_litbank.py"),
)
BY_LABEL = {system.label: system for system in SYSTEMS}
BY_KEY = {system.key: system for system in SYSTEMS}


@dataclass(frozen=True)
class Budget:
    """Which LitBank files (slices of the files sorted by name) train and predict, for how many epochs
    (``epochs``, or a system's own number in ``epochs_of``: ``(key, epochs)`` pairs)."""

    train_files: str
    dev_files: str
    epochs: int
    epochs_of: Tuple[Tuple[str, int], ...] = ()
    curve_every: int = 0  # the anchors also predict the dev documents every N epochs (ours validate every epoch)

    def epochs_for(self, key: str) -> int:
        return dict(self.epochs_of).get(key, self.epochs)

    def without_curve(self) -> "Budget":
        """What is trained (files and epochs): a learning curve changes what is measured along the way, not that."""
        return replace(self, curve_every=0)

    def trains_like(self, other: "Budget") -> bool:
        return self.without_curve() == other.without_curve()


FULL = Budget(":70", "70:80", 6)
# The smoke run: every path end to end in minutes. Maverick trains 20 epochs there: one epoch of 3 documents is one
# optimizer step (gradients accumulated over 4 documents), after which its start classifier still says ~0.5
# everywhere, every span of a sentence becomes a mention and the pairwise scoring of one dev document asks for
# > 20 GB; after 20 steps it proposes few (its predictions then take 1 GB).
SMALL = Budget(":3", "70:71", 1, (("maverick", 20),))
DATA = {FULL: REPO_ROOT / "runs" / "baselines" / "data", SMALL: REPO_ROOT / "runs" / "baselines" / "data_small"}


def run_dir_of(out: Path, system: str, seed: int) -> Path:
    return out / f"{BY_LABEL[system].key}_seed{seed}"


def run_dirs_in(out: Path) -> List[Tuple[System, int, Path]]:
    """The run folders of an output folder (what :func:`run_dir_of` names), with their system and seed."""
    found = []
    for folder in sorted(out.glob("*_seed*")):
        key, _, seed = folder.name.rpartition("_seed")
        if folder.is_dir() and key in BY_KEY and seed.isdigit():
            found.append((BY_KEY[key], int(seed), folder))
    return found


def training_run(
    system: str,
    seed: int,
    run_dir: Path,
    budget: Budget = FULL,
    data: Optional[Path] = None,
    anchors_python: Optional[str] = None,
) -> Run:
    """
    One system trained with one seed into ``run_dir`` and run on the dev documents; the run is finished when its
    result file exists (the allennlp systems: their score file; an anchor: its adapter's ``run.json``). Every
    system leaves ``run_dir/dev_predictions.jsonl``, scored afterwards by :func:`conll_scores`.
    """
    spec = BY_LABEL[system]
    predictions = run_dir / PREDICTIONS
    full = budget.trains_like(FULL)
    slices = [] if full else ["--dev-files", budget.dev_files]
    if spec.adapter is not None:
        data = data or DATA[budget.without_curve()]
        curve_every = recorded_curve_every(run_dir, budget.curve_every)
        command = [
            anchors_python or str(ANCHORS_PYTHON),
            str(BASELINES / spec.adapter),
            *spec.adapter_args,
            *("--train", str(data / "coref_train.jsonl"), "--dev", str(data / "coref_dev.jsonl")),
            *("--epochs", str(budget.epochs_for(spec.key)), "--seed", str(seed), "--out", str(run_dir)),
            *(("--curve-every", str(curve_every)) if curve_every else ()),
        ]
        then, result_file = [], run_dir / ADAPTER_RECORD
    elif spec.config is not None:
        overrides = {
            **(config_data_overrides(REPO_ROOT / spec.config) if full else small_data_overrides(budget)),
            **seed_overrides(seed),
            "dataset_reader.window_seed": seed,  # a dotted key: a nested dict would replace the reader
            **dict(spec.overrides),
        }
        command = [tool("allennlp"), "train", spec.config, "-s", str(run_dir), "--force", "-o", json.dumps(overrides)]
        score = ["--ours", str(run_dir / "model.tar.gz"), "--ours-json", str(run_dir / SCORE_FILE)]
        then = [[*module_command(BASELINE_MODULE), *score, "--ours-predictions", str(predictions), *slices]]
        result_file = run_dir / SCORE_FILE
    else:  # the baseline script trains, then predicts and scores
        command = [*module_command(BASELINE_MODULE), "-s", str(run_dir), "--seed", str(seed)]
        command += ["--predictions", str(predictions)]
        if not full:
            command += ["--epochs", str(budget.epochs), "--train-files", budget.train_files, *slices]
        then, result_file = [], run_dir / SCORE_FILE
    return Run(
        name=run_dir.name,
        system=system,
        seed=seed,
        command=command,
        log_file=run_dir.with_suffix(".log"),
        result_file=result_file,
        then=then,
        record_file=run_dir / COST_FILE,
    )


def recorded_curve_every(run_dir: Path, asked: int) -> int:
    """
    ``--curve-every`` of the command that made the run in ``run_dir`` (its :data:`COST_FILE` record), or ``asked``
    when there is none: a finished run keeps the learning curve it was made with, so that runs with and without
    one sit in one table (the curve's predictions are left out of the training time, and do not change training).
    """
    try:
        command = json.loads((run_dir / COST_FILE).read_text())["command"]
    except (OSError, ValueError, KeyError, TypeError):
        return asked
    if "--curve-every" not in command[:-1]:
        return 0
    return int(command[command.index("--curve-every") + 1])


def small_data_overrides(budget: Budget) -> Dict[str, Any]:
    """Our config's data paths at the budget's slices, and its number of epochs."""
    litbank = external_path("coref/litbank")
    return {
        "train_data_path": f"{litbank}#files={budget.train_files}",
        "validation_data_path": f"{litbank}#files={budget.dev_files}",
        "trainer.num_epochs": budget.epochs,
    }


# ---------------------------------------------------------------- environment and data


def ensure_data(data: Path, budget: Budget) -> None:
    """``litbank_export.py``'s coreference files for the budget's slices in ``data`` (exported when missing)."""
    ensure_litbank_export(data, budget.train_files, budget.dev_files, COREF_FILES)


# ---------------------------------------------------------------- scores and costs of finished runs


class ScoringFailed(RuntimeError):
    """A finished run's predictions could not be scored (one line)."""


def conll_scores(run_dir: Path, data: Path) -> Dict[str, Any]:
    """``score_predictions.py coref`` on ``run_dir``'s predictions (CoNLL against both keys), kept in
    ``run_dir/dev_scores.json`` and redone only when the predictions are newer."""
    scores, predictions = run_dir / CONLL_SCORES, run_dir / PREDICTIONS
    if not scores.exists() or scores.stat().st_mtime < predictions.stat().st_mtime:
        command = [*module_command("evidence.baselines.score_predictions"), "coref", "--data", str(data)]
        completed = subprocess.run(command + ["--run", str(run_dir)], cwd=REPO_ROOT, capture_output=True, text=True)
        if completed.returncode != 0:
            raise ScoringFailed(f"{run_dir.name}: {last_line(completed)}")
    raw = json.loads(scores.read_text())
    return {
        f"gold_{name}": {metric: raw[name][metric]["f1"] for metric in ("muc", "bcub", "ceafe")}
        | {"conll_f1": raw[name]["conll_f1"], "repairs": raw[name].get("repairs")}
        for name in ("with_singletons", "without_singletons")
    }


def scores_of(result: RunResult, data: Optional[Path] = None) -> Dict[str, Any]:
    """
    A finished run's dev scores and costs: ``gold_with_singletons`` / ``gold_without_singletons`` (MUC, B3, CEAFe
    F1 and CoNLL F1), ``cpu_seconds`` / ``wall_seconds`` of training, ``predict_seconds`` and ``peak_rss_mb``.
    Scores are those of :func:`conll_scores` when ``data`` is given and the run left predictions; otherwise (a run
    of this script before predictions were written) the allennlp systems' own score file.
    """
    run = result.run
    run_dir = run.result_file.parent
    figures: Dict[str, Any] = {
        "wall_seconds": result.wall_seconds,
        "cpu_seconds": result.cpu_seconds,
        "peak_rss_mb": result.max_rss_mb,
        "process_wall_seconds": result.wall_seconds,
        "process_cpu_seconds": result.cpu_seconds,
    }
    if BY_LABEL[run.system].adapter is not None:
        record = json.loads((run_dir / ADAPTER_RECORD).read_text())
        timings = record["timings"]
        figures |= {
            "wall_seconds": timings["training"]["wall_seconds"],
            "cpu_seconds": timings["training"]["cpu_seconds"],
            "predict_seconds": timings["prediction"]["wall_seconds"],
            "predict_cpu_seconds": timings["prediction"]["cpu_seconds"],
            # a run resumed from a checkpoint: the harness saw its last process, the adapter every part
            "peak_rss_mb": max(
                (v for v in (result.max_rss_mb, record.get("peak_rss_mib")) if v is not None), default=None
            ),
        }
        own: Dict[str, Any] = {}
    else:
        own = json.loads((run_dir / SCORE_FILE).read_text())
        figures["predict_seconds"] = own.get("predict_seconds")
        figures["predict_cpu_seconds"] = own.get("predict_cpu_seconds")
        if "training_cpu_seconds" in own:  # allennlp-models: training alone, without the dev prediction
            figures["wall_seconds"], figures["cpu_seconds"] = own["training_wall_seconds"], own["training_cpu_seconds"]
        peaks = [value for value in (result.max_rss_mb, own.get("peak_rss_mb")) if value is not None]
        figures["peak_rss_mb"] = max(peaks) if peaks else None
    if data is not None and (run_dir / PREDICTIONS).exists():
        scores = conll_scores(run_dir, data) | {"scored_as": "CoNLL response, score_predictions.py"}
    elif own:
        scores = {key: own[key] for key in ("gold_with_singletons", "gold_without_singletons")}
        scores["scored_as"] = "the baseline script's own scoring (no predictions file)"
    else:
        raise ScoringFailed(f"{run.name}: no {PREDICTIONS}")
    return scores | figures


def collect(runs: Sequence[Run], data: Optional[Path]) -> Tuple[Dict[str, Dict[int, Dict[str, Any]]], List[str]]:
    """Scores of the finished runs per system and seed, and a line for each run left out (unfinished, unscored)."""
    results: Dict[str, Dict[int, Dict[str, Any]]] = {}
    left_out = []
    for run in runs:
        try:
            if not finished(run):
                left_out.append(f"{run.name}: not finished")
                continue
            record = json.loads(run.record_path.read_text()) if run.record_path.exists() else {}
            result = RunResult(
                run, True, record.get("wall_seconds"), record.get("cpu_seconds"), record.get("max_rss_mb")
            )
            results.setdefault(run.system, {})[run.seed] = scores_of(result, data)
        except (RunFailed, ScoringFailed, OSError, ValueError, KeyError) as error:
            left_out.append(f"{run.name}: {str(error).splitlines()[0]}")
    return results, left_out


# ---------------------------------------------------------------- summary


def summarise(results: Dict[str, Dict[int, Dict[str, Any]]]) -> Dict[str, Any]:
    """Per system: per-seed scores and, for each score and cost, mean and sample standard deviation."""
    summary = {}
    for system, per_seed in results.items():
        runs = list(per_seed.values())

        def stats(values: List[Optional[float]]) -> Dict[str, Optional[float]]:
            return mean_std(values, digits=2)

        summary[system] = {
            "per_seed": per_seed,
            "conll_f1_with_singletons": stats([r["gold_with_singletons"]["conll_f1"] for r in runs]),
            "conll_f1_without_singletons": stats([r["gold_without_singletons"]["conll_f1"] for r in runs]),
            **{
                f"{metric}_f1_with_singletons": stats([r["gold_with_singletons"][metric] for r in runs])
                for metric in ("muc", "bcub", "ceafe")
            },
            "training_wall_seconds": stats([r.get("wall_seconds") for r in runs]),
            "training_cpu_seconds": stats([r.get("cpu_seconds") for r in runs]),
            "predict_seconds": stats([r.get("predict_seconds") for r in runs]),
            "peak_rss_mb": stats([r.get("peak_rss_mb") for r in runs]),
        }
    return summary


COLUMNS = [
    ("with", "CoNLL F1 w/ singletons"),
    ("without", "w/o"),
    ("muc", "MUC"),
    ("bcub", "B3"),
    ("ceafe", "CEAFe"),
    ("cpu", "train CPU min"),
    ("predict", "predict s"),
    ("rss", "peak RSS GB"),
]


def table(results: Dict[str, Dict[int, Dict[str, Any]]], markdown: bool = False) -> str:
    """Per seed and mean ± std: CoNLL F1 with / without singletons, MUC / B3 / CEAFe F1 with singletons, training
    CPU minutes, prediction seconds, peak RSS in GB."""

    def scaled(value: Optional[float], by: float) -> Optional[float]:
        return value / by if value is not None else None

    rows = {
        system: {
            seed: {
                "with": r["gold_with_singletons"]["conll_f1"],
                "without": r["gold_without_singletons"]["conll_f1"],
                **{metric: r["gold_with_singletons"][metric] for metric in ("muc", "bcub", "ceafe")},
                "cpu": scaled(r.get("cpu_seconds"), 60),
                "predict": r.get("predict_seconds"),
                "rss": scaled(r.get("peak_rss_mb"), 1024),
            }
            for seed, r in sorted(per_seed.items())
        }
        for system, per_seed in results.items()
    }
    return seed_table(rows, COLUMNS, markdown=markdown)


# ---------------------------------------------------------------- the results file (what the documentation shows)


RESULTS = RESULTS_DIR / "coref_litbank.json"
# how the documentation names each system
DISPLAY = {
    OURS: "`spanbert_coref` (`litbank_minilm.jsonnet`)",
    OURS_AGREEMENT: "`spanbert_coref` + agreement (`litbank_minilm_agreement.jsonnet`)",
    OURS_TOPK: "`spanbert_coref`, top 0.4 spans per word",
    OURS_COARSE: "`spanbert_coref`, one antecedent score (`litbank_minilm_coarse.jsonnet`)",
    OURS_COARSE_TOPK: "one antecedent score, top 0.4 spans per word",
    THEIRS: "allennlp-models `coref`",
    FCOREF: "fastcoref F-coref",
    LINGMESS: "fastcoref LingMess",
    MAVERICK: "Maverick `mes`",
}
SYSTEMS_COLUMNS = [
    "system",
    "seeds",
    "CoNLL F1 with singletons",
    "per seed",
    "without singletons",
    "MUC",
    "B3",
    "CEAFe",
    "training CPU min",
    "dev prediction s",
    "peak RSS GB",
]
OPTIONS_COLUMNS = [
    "configuration",
    "`fine_scoring`",
    "`min_mention_score`",
    "CoNLL F1 with singletons",
    "without singletons",
    "training CPU min",
    "dev prediction s",
]
# (system, fine_scoring, min_mention_score) of the configurations the options table compares
OPTIONS = (
    (OURS, "`true`", "`0.0`"),
    (OURS_TOPK, "`true`", "`null`"),
    (OURS_COARSE, "`false`", "`0.0`"),
    (OURS_COARSE_TOPK, "`false`", "`null`"),
)
PUBLISHED_COLUMNS = ["system", "encoder", "split", "CoNLL F1", "reference"]
PUBLISHED = [
    [
        "Maverick `mes` (`sapienzanlp/maverick-mes-litbank`)",
        "DeBERTa-v3-large, about 500M parameters in all",
        "LitBank's official split, trained to convergence",
        78.0,
        "Martinelli, Barba and Navigli, *Maverick: Efficient and Accurate Coreference Resolution Defying Recent "
        "Trends*, ACL 2024",
    ]
]


def mean_of(values: Sequence[Optional[float]], scale: float = 1.0, digits: int = 1) -> Optional[float]:
    """The mean of the values present, divided by ``scale`` and rounded; None when none is."""
    mean = mean_std(values)["mean"]
    return None if mean is None else round(mean / scale, digits)


def f1_cells(per_seed: Dict[int, Dict[str, Any]], key: str, best: Optional[float]) -> str:
    """``"51.5 ± 0.5"`` of a CoNLL F1 over the seeds, the mean in bold where it is the best of its column."""
    stats = mean_std([run[key]["conll_f1"] for run in per_seed.values()])
    text = format_mean_std(stats, 1)
    if best is not None and stats["mean"] is not None and round(stats["mean"], 1) == best:
        text = text.replace(f"{stats['mean']:.1f}", f"**{stats['mean']:.1f}**", 1)
    return text


def results_tables(results: Dict[str, Dict[int, Dict[str, Any]]]) -> Dict[str, Dict[str, List]]:
    """
    The tables of the results file: ``systems`` (every system as shipped, mean ± sample std over its seeds, per seed,
    costs as means), ``options`` (our two configs with ``min_mention_score`` and without it) and ``published``
    (LitBank figures published elsewhere, and ours beside them).
    """
    shown = [system.label for system in SYSTEMS if not system.overrides and system.label in results]

    def best(key: str, labels: Sequence[str]) -> Optional[float]:
        means = [mean_of([run[key]["conll_f1"] for run in results[label].values()]) for label in labels]
        return max((mean for mean in means if mean is not None), default=None)

    def row_costs(per_seed: Dict[int, Dict[str, Any]]) -> List[Optional[float]]:
        runs = per_seed.values()
        return [
            mean_of([run.get("cpu_seconds") for run in runs], 60),
            mean_of([run.get("predict_seconds") for run in runs]),
        ]

    best_with, best_without = best("gold_with_singletons", shown), best("gold_without_singletons", shown)
    systems = []
    for label in shown:
        per_seed = dict(sorted(results[label].items()))
        runs = per_seed.values()
        systems.append(
            [
                DISPLAY[label],
                " / ".join(str(seed) for seed in per_seed),
                f1_cells(per_seed, "gold_with_singletons", best_with),
                " / ".join(f"{run['gold_with_singletons']['conll_f1']:.1f}" for run in runs),
                f1_cells(per_seed, "gold_without_singletons", best_without),
                *(
                    mean_of([run["gold_with_singletons"][metric] for run in runs])
                    for metric in ("muc", "bcub", "ceafe")
                ),
                *row_costs(per_seed),
                mean_of([run.get("peak_rss_mb") for run in runs], 1024),
            ]
        )
    options = [
        [
            DISPLAY[label],
            fine,
            threshold,
            f1_cells(results[label], "gold_with_singletons", None),
            f1_cells(results[label], "gold_without_singletons", None),
            *row_costs(results[label]),
        ]
        for label, fine, threshold in OPTIONS
        if label in results
    ]
    published = [list(row) for row in PUBLISHED]
    if OURS in results:
        ours = mean_of([run["gold_with_singletons"]["conll_f1"] for run in results[OURS].values()])
        published.append(
            [
                f"{DISPLAY[OURS]}, this page",
                "MiniLM-L6-H384, 22M parameters",
                "LitBank's first 70 documents train for 6 epochs, the next 10 are scored",
                ours,
                "the table above",
            ]
        )
    return {
        "systems": results_table(SYSTEMS_COLUMNS, systems),
        "options": results_table(OPTIONS_COLUMNS, options),
        "published": results_table(PUBLISHED_COLUMNS, published),
    }


def save_results(path: Path, budget: Budget, results: Dict[str, Dict[int, Dict[str, Any]]]) -> Dict[str, Any]:
    """The results file of the finished runs (:func:`results_tables`), their per-seed figures kept beside."""
    return write_results(
        path,
        "LitBank coreference: this library beside the other tools, each retrained here from MiniLM",
        "evidence.coref_litbank_side_by_side",
        results_tables(results),
        [
            f"LitBank files sorted by name: {budget.train_files} train, {budget.dev_files} are scored (dev); every "
            f"system trained from MiniLM-L6-H384 for {budget.epochs} epochs with its own trainer, one torch thread",
            "CoNLL F1 = mean of MUC, B3 and CEAFe F1, by this library's scorer (reference scorer v8.01 semantics); "
            "with singletons: LitBank's key as it is; without: one-mention clusters dropped from key and response",
            "mean ± sample standard deviation over the seeds; MUC / B3 / CEAFe (key with singletons), training CPU "
            "minutes, dev prediction seconds (10 documents, model loaded) and peak RSS are means over the seeds",
            "a seed sets allennlp's random, numpy and torch seeds and the training windows' seed, or the other "
            "tools' --seed",
        ],
        summary=summarise(results),
    )


def default_results(args, budget: Budget, default_out: Path) -> Path:
    """``results/coref_litbank.json`` for the full runs in the default folder, ``OUT/results.json`` otherwise."""
    if args.results is not None:
        return args.results
    return RESULTS if budget.trains_like(FULL) and args.out == default_out else args.out / "results.json"


# ---------------------------------------------------------------- main


def planned_runs(args, budget: Budget, systems: List[System], python: Optional[str]) -> List[Run]:
    """Seed-major: every chosen system of the first seed, then of the next, ..."""
    return [
        training_run(system.label, seed, run_dir_of(args.out, system.label, seed), budget, args.data, python)
        for seed in args.seeds
        for system in systems
    ]


def runs_on_disk(args, budget: Budget, planned: Sequence[Run]) -> List[Run]:
    """The runs of ``args.out`` (``<system>_seed<N>`` folders) other than ``planned``, as :func:`training_run`
    describes them (what :func:`collect` reads back)."""
    names = {run.name for run in planned}
    return [
        training_run(system.label, seed, folder, budget, args.data)
        for system, seed, folder in run_dirs_in(args.out)
        if folder.name not in names
    ]


def execute(runs: List[Run], parallel: int) -> List[str]:
    """Runs the unfinished runs (one at a time, or a seed's runs ``parallel`` at a time); a failure is reported
    and the next runs go on. Returns the failures."""
    if parallel <= 1:
        groups = [[run] for run in runs]
    else:
        seeds = list(dict.fromkeys(run.seed for run in runs))
        groups = [[run for run in runs if run.seed == seed] for seed in seeds]
    failures = []
    for group in groups:
        try:
            run_all(group, parallel=parallel)
        except RunFailed as error:
            failures.append(str(error))
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=None, help="default 1 2 3 (--small: 1)")
    parser.add_argument("--parallel", type=int, default=1, help="trainings at a time (each one torch thread)")
    parser.add_argument("--out", type=Path, default=None, help="default outputs/coref_litbank (--small: _small)")
    parser.add_argument("--systems", nargs="+", choices=list(BY_KEY), default=list(BY_KEY), help="default: all")
    parser.add_argument("--data", type=Path, default=None, help="litbank_export.py's folder (made when missing)")
    parser.add_argument(
        "--small",
        action="store_true",
        help=f"smoke run: files {SMALL.train_files} / {SMALL.dev_files}, {SMALL.epochs} epoch, seed 1",
    )
    parser.add_argument(
        "--epochs",
        type=int,
        default=None,
        help=f"every system trains this many epochs instead of {FULL.epochs} (more training for the other tools; "
        "default --out then outputs/coref_litbank_epochs<N>)",
    )
    parser.add_argument(
        "--curve-every",
        type=int,
        default=0,
        help="the anchors also predict the dev documents every N epochs: a learning curve "
        "(python -m evidence.coref_litbank_curves plots it; ours validate every epoch anyway)",
    )
    parser.add_argument("--summarise-only", action="store_true", help="print the table of the finished runs")
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help=f"results file (default {RESULTS.relative_to(REPO_ROOT)} for the full runs in the default --out, "
        "else OUT/results.json)",
    )
    args = parser.parse_args()
    preset = SMALL if args.small else FULL
    budget = replace(
        preset,
        epochs=args.epochs or preset.epochs,
        epochs_of=() if args.epochs else preset.epochs_of,
        curve_every=args.curve_every,
    )
    args.seeds = args.seeds or ([1] if args.small else [1, 2, 3])
    name = "coref_litbank" + ("_small" if args.small else "") + (f"_epochs{args.epochs}" if args.epochs else "")
    default_out = (REPO_ROOT / "outputs" / name).resolve()
    args.out = (args.out or default_out).resolve()
    args.data = (args.data or DATA[preset]).resolve()
    require("coref/litbank", "LitBank")
    systems = [BY_KEY[key] for key in BY_KEY if key in args.systems]
    python = None
    if not args.summarise_only and any(system.adapter for system in systems):
        python = anchors_python()
        if python is None:
            systems = [system for system in systems if system.adapter is None]
    ensure_data(args.data, budget)
    args.out.mkdir(parents=True, exist_ok=True)
    runs = planned_runs(args, budget, systems, python)
    failures: List[str] = []
    if not args.summarise_only:
        print("runs, in order: " + ", ".join(run.name for run in runs), flush=True)
        failures = execute(runs, args.parallel)
    # the summary holds every run of the folder, not only this command's: a run of one system keeps the others
    results, left_out = collect(runs + runs_on_disk(args, budget, runs), args.data)
    ordered = {system.label: results[system.label] for system in SYSTEMS if system.label in results}
    (args.out / "side_by_side.json").write_text(
        json.dumps(
            {
                "budget": {
                    "train_files": budget.train_files,
                    "dev_files": budget.dev_files,
                    "epochs": {label: budget.epochs_for(BY_LABEL[label].key) for label in ordered},
                },
                "seeds": sorted({seed for per_seed in results.values() for seed in per_seed}),
                "systems": summarise(ordered),
                "left_out": left_out,
            },
            indent=2,
        )
    )
    print(
        f"LitBank coreference, dev files {budget.dev_files}, trained on files {budget.train_files} for "
        f"{budget.epochs} epoch(s) from MiniLM; every finished run of {args.out}; F1 in %, MUC/B3/CEAFe against "
        "the key with singletons"
    )
    print(table(ordered))
    for line in left_out:
        print(f"left out: {line}")
    if ordered:
        results_path = default_results(args, budget, default_out)
        save_results(results_path, budget, ordered)
        print(f"wrote {results_path}", file=sys.stderr)
    for failure in failures:
        print(f"FAILED: {failure.splitlines()[0]}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
