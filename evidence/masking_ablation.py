"""
What SpanBERT's objective buys, in miniature: MiniLM-L6 (``pretrained/all-MiniLM-L6-v2``) adapted on the nine
Gutenberg novels of the data folder (``corpus/gutenberg``, about 1.16 M words) with each masking objective of the
paper's ablation at the same budget, then LitBank coreference and span NER fine-tuned from each encoder with the
shipped configs, several seeds each:

* ``spanbert``: geometric spans (p 0.2, at most 10 words, 15 %) with MLM + SBO (SpanBERT);
* ``geometric``: the same spans, MLM alone;
* ``whole_word``: whole words, MLM alone;
* ``subword``: random wordpieces, MLM alone (BERT's original masking);
* ``none``: no adaptation (the pretrained encoder as shipped).

Every adaptation trains ``training_configs/pretraining/minilm_adapt_cpu.jsonnet`` (its optimiser and schedule)
for ``--steps`` optimizer steps of ``--batch-size`` blocks of 128 wordpieces; the last 5 % of each novel is held
out. After every "epoch" of ``--steps-per-point`` steps, the MLM head is evaluated on the held-out blocks with the
SAME fixed geometric-span masks for every objective (two masking seeds), at the positions shown as ``[MASK]``,
beside the unigram baseline (the training text's most frequent wordpiece): the curve that shows where learning
flattens. The final figures use five masking seeds.

The fine-tunes are the shipped configs (``training_configs/coref/litbank_minilm.jsonnet``,
``training_configs/ner/litbank_minilm.jsonnet``) with the encoder path replaced: same data split (LitBank files
sorted by name, the first 70 train, the next 10 dev), same epochs, nothing tuned. Coreference is scored on the dev
documents with and without singletons (``evidence/coref_litbank_baseline.py --ours``). The nine novels' LitBank
excerpts are all among the 70 training documents (their text is seen unlabelled during adaptation, as in
task-adaptive pre-training); no dev document comes from them.

    python -m evidence.masking_ablation run [--steps 3000] [--batch-size 64] [--seeds 1 2 3] [--parallel 8] \
        [--out outputs/masking_ablation] [--results results/masking_ablation.json]
    python -m evidence.masking_ablation run --small           # smoke: a few steps, one seed, 3+1 LitBank files
    python -m evidence.masking_ablation report                # the results file and plot of the finished runs

A finished stage (an adaptation with its exported encoder, a fine-tune with its scores) is not run again: the same
command resumes. On a machine with a GPU every training uses it (``--parallel`` trainings share it).
"""

import argparse
import json
import os
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from evidence.external_data import external_path, require
from evidence.repository import REPO_ROOT, module_command
from evidence.results import RESULTS_DIR, command_line, machine, table, write_results
from evidence.runs import Run, allennlp_train_run, offline_env, run_all
from evidence.summary import mean_std

PRETRAINING_CONFIG = "training_configs/pretraining/minilm_adapt_cpu.jsonnet"
BASE_ENCODER = "pretrained/all-MiniLM-L6-v2"
GEOMETRIC = {"type": "geometric_span", "geometric_p": 0.2, "max_span_length": 10, "masking_budget": 0.15}
HELDOUT_FRACTION = 0.05
CURVE_SEEDS, FINAL_SEEDS = (0, 1), (0, 1, 2, 3, 4)
DEFAULT_OUT = "outputs/masking_ablation"
DEFAULT_RESULTS = RESULTS_DIR / "masking_ablation.json"
PLOT = REPO_ROOT / "docs" / "masking_ablation_curve.png"


@dataclass(frozen=True)
class Objective:
    key: str
    label: str
    masker: Optional[Dict[str, Any]]
    """The adaptation's masker; None: no adaptation."""
    sbo_weight: float = 0.0


OBJECTIVES = {
    objective.key: objective
    for objective in (
        Objective("spanbert", "geometric spans, MLM + SBO (SpanBERT)", GEOMETRIC, 1.0),
        Objective("geometric", "geometric spans, MLM", GEOMETRIC),
        Objective("whole_word", "whole words, MLM", {"type": "whole_word", "masking_budget": 0.15}),
        Objective("subword", "random wordpieces, MLM (BERT)", {"type": "subword", "masking_budget": 0.15}),
        Objective("none", "no adaptation", None),
    )
}


@dataclass(frozen=True)
class Task:
    key: str
    config: str
    data: str
    scores: Sequence[str]


TASKS = {
    "coref": Task("coref", "training_configs/coref/litbank_minilm.jsonnet", "coref/litbank", ("conll_f1",)),
    "ner": Task("ner", "training_configs/ner/litbank_minilm.jsonnet", "ner/litbank", ("f1", "precision", "recall")),
}
SMALL_DATA = {"train": "#files=:3", "dev": "#files=70:71"}


def cuda_device() -> int:
    import torch

    return 0 if torch.cuda.is_available() else -1


# ----------------------------------------------------------------------------------------------- the corpus


def prepare_corpus(out: Path, small: bool) -> Dict[str, Any]:
    """
    ``OUT/corpus/train/*.txt`` (each novel but its last 5 %, cut at a paragraph) and ``OUT/corpus/heldout.txt``
    (those tails); ``--small`` keeps 20,000 characters of each novel.
    """
    novels = sorted(require("corpus/gutenberg", "the Gutenberg novels").glob("*.txt"))
    corpus = out / "corpus"
    (corpus / "train").mkdir(parents=True, exist_ok=True)
    tails, words = [], {"train": 0, "heldout": 0}
    for novel in novels:
        text = novel.read_text(encoding="utf-8")
        if small:
            text = text[:20_000]
        cut = text.rfind("\n\n", 0, int(len(text) * (1 - HELDOUT_FRACTION)))
        cut = cut if cut > 0 else int(len(text) * (1 - HELDOUT_FRACTION))
        (corpus / "train" / novel.name).write_text(text[:cut], encoding="utf-8")
        tails.append(text[cut:].strip())
        words["train"] += len(text[:cut].split())
        words["heldout"] += len(tails[-1].split())
    (corpus / "heldout.txt").write_text("\n\n".join(tails) + "\n", encoding="utf-8")
    litbank = sorted(path.name for path in external_path("coref/litbank").glob("*.conll"))
    from_novels = [name for name in litbank if any(name.startswith(novel.stem + "_") for novel in novels)]
    return {
        "novels_without_a_litbank_document_here": [
            novel.name for novel in novels if not any(name.startswith(novel.stem + "_") for name in litbank)
        ],
        "novels": [novel.name for novel in novels],
        "words": words,
        "litbank_documents_from_the_novels": from_novels,
        "their_litbank_split": {name: "train" if litbank.index(name) < 70 else "dev" for name in from_novels},
    }


# ------------------------------------------------------------------------------------------------ adaptation


def adaptation_overrides(objective: Objective, corpus: Path, args: argparse.Namespace) -> Dict[str, Any]:
    """
    The pre-training config's overrides for one objective; with ``--patience N``, training also stops once the
    held-out MLM accuracy (allennlp's validation, the objective's own masks) has not improved for N points.
    """
    epochs = args.steps // args.steps_per_point
    patience = getattr(args, "patience", None)
    stopping = {"trainer.patience": patience, "trainer.validation_metric": "+mlm_accuracy"} if patience else {}
    return {
        **stopping,
        "train_data_path": str(corpus / "train"),
        "validation_data_path": str(corpus / "heldout.txt"),
        "dataset_reader.document_separator": "file",
        "validation_dataset_reader.document_separator": "file",
        "model.masker": objective.masker,
        "model.sbo_weight": objective.sbo_weight,
        "data_loader.batch_size": args.batch_size,
        "data_loader.batches_per_epoch": args.steps_per_point,
        "trainer.num_epochs": epochs,
        "trainer.learning_rate_scheduler.warmup_steps": max(1, args.steps // 10),
        "trainer.cuda_device": cuda_device(),
        "random_seed": 1,
        "numpy_seed": 1,
        "pytorch_seed": 1,
    }


class HeldoutCurve:
    """
    The MLM head's held-out accuracy and perplexity at ``[MASK]`` with fixed geometric-span masks (the same for
    every objective), and the unigram baseline's on the same masks; one point per :meth:`measure`.
    """

    def __init__(self, corpus: Path, max_blocks: int, seeds: Sequence[int]) -> None:
        import itertools

        from allennlp.common import Params
        from allennlp.data import DatasetReader

        from spanbert_lib.pretraining.heldout_evaluation import most_frequent_wordpiece, wordpiece_log_probabilities
        from spanbert_lib.pretraining.masking import Masker

        reader_params = Params.from_file(PRETRAINING_CONFIG)["dataset_reader"]
        reader_params["document_separator"] = "file"
        reader = DatasetReader.from_params(reader_params)
        special = reader.tokenizer.all_special_ids
        self.blocks = list(itertools.islice(reader.read(str(corpus / "heldout.txt")), max_blocks))
        training = list(reader.read(str(corpus / "train")))
        self.unigram_id = most_frequent_wordpiece(training, special)
        self.unigram_token = reader.tokenizer.convert_ids_to_tokens(self.unigram_id)
        self.unigram_log_probs = wordpiece_log_probabilities(training, special, reader.tokenizer.vocab_size)
        self.masker = Masker.from_params(Params(dict(GEOMETRIC)))
        self.seeds = list(seeds)
        self.points: List[Dict[str, Any]] = []

    def measure(self, model, step: int) -> Dict[str, Any]:
        from spanbert_lib.pretraining.heldout_evaluation import evaluate_heldout

        own_masker = model.masker
        model.masker = self.masker
        try:
            evaluation = evaluate_heldout(model, self.blocks, seeds=self.seeds)
        finally:
            model.masker = own_masker
        point = {
            "step": step,
            "mlm_accuracy_at_mask": round(evaluation.accuracy("mlm", replaced_by_mask=True), 4),
            "mlm_perplexity_at_mask": round(evaluation.perplexity("mlm", replaced_by_mask=True), 1),
            "unigram_accuracy_at_mask": round(evaluation.constant_accuracy(self.unigram_id, replaced_by_mask=True), 4),
            "unigram_perplexity_at_mask": round(
                evaluation.unigram_perplexity(self.unigram_log_probs, replaced_by_mask=True), 1
            ),
            "masked_at_mask": int(sum(int((b.seen_ids == model.mask_token_id).sum()) for b in evaluation.blocks)),
        }
        self.points.append(point)
        return point


def adapt(objective: Objective, args: argparse.Namespace) -> None:
    """One adaptation into ``OUT/adapt/KEY`` (curve in ``curve.json``), its encoder exported to ``OUT/encoders/KEY``."""
    from allennlp.commands.train import train_model_from_file
    from allennlp.training.callbacks import TrainerCallback

    import spanbert_lib.plugin  # noqa: F401  (registers the library's readers and models)
    from evidence.main_job import trainer_callback_added
    from spanbert_lib.commands.export_encoder import export_encoder

    out = Path(args.out)
    run_dir, encoder_dir = out / "adapt" / objective.key, out / "encoders" / objective.key
    curve = HeldoutCurve(out / "corpus", args.heldout_blocks, CURVE_SEEDS)
    started, cpu_started = time.time(), time.process_time()
    training_seconds = {"wall": 0.0, "cpu": 0.0}

    class CurvePoint(TrainerCallback):
        def on_start(self, trainer, is_primary: bool = True, **_) -> None:
            self._measured(trainer.model, 0)

        def on_epoch(self, trainer, metrics, epoch, is_primary: bool = True, **_) -> None:
            self._measured(trainer.model, (epoch + 1) * args.steps_per_point)

        def _measured(self, model, step: int) -> None:
            wall, cpu = time.time(), time.process_time()
            point = curve.measure(model, step)
            point["training_seconds"] = round(wall - started - training_seconds["wall"], 1)
            training_seconds["wall"] += time.time() - wall
            training_seconds["cpu"] += time.process_time() - cpu
            print(f"[{objective.key}] held-out at [MASK]: {json.dumps(point)}", flush=True)

    overrides = adaptation_overrides(objective, out / "corpus", args)
    with trainer_callback_added(CurvePoint):
        train_model_from_file(PRETRAINING_CONFIG, str(run_dir), overrides=json.dumps(overrides), force=True)
    wall = time.time() - started - training_seconds["wall"]
    cpu = time.process_time() - cpu_started - training_seconds["cpu"]

    from allennlp.models.archival import load_archive

    model = load_archive(str(run_dir / "model.tar.gz"), cuda_device=cuda_device()).model
    final = HeldoutCurve(out / "corpus", args.heldout_blocks * 4, FINAL_SEEDS).measure(model, args.steps)
    export_encoder(str(run_dir / "model.tar.gz"), str(encoder_dir))
    record = {
        "objective": objective.key,
        "overrides": overrides,
        "curve": curve.points,
        "final": final,
        "unigram_token": curve.unigram_token,
        "training_wall_seconds": round(wall, 1),
        "training_process_cpu_seconds": round(cpu, 1),
        "device": _device_name(),
    }
    (run_dir / "adaptation.json").write_text(json.dumps(record, indent=2) + "\n")


def _device_name() -> str:
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"CPU ({os.cpu_count()} cores)"


def adaptation_run(objective: Objective, args: argparse.Namespace) -> Run:
    out = Path(args.out)
    arguments = ["adapt", objective.key, "--out", str(out), "--steps", str(args.steps)]
    arguments += ["--steps-per-point", str(args.steps_per_point), "--batch-size", str(args.batch_size)]
    arguments += ["--heldout-blocks", str(args.heldout_blocks)]
    arguments += ["--patience", str(args.patience)] if args.patience else []
    return Run(
        name=f"adapt_{objective.key}",
        system=objective.key,
        seed=1,
        command=[*module_command("evidence.masking_ablation"), *arguments],
        log_file=out / "adapt" / f"{objective.key}.log",
        result_file=out / "adapt" / objective.key / "adaptation.json",
        env={"OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads)},
    )


# ------------------------------------------------------------------------------------------------ fine-tunes


def encoder_of(objective: Objective, out: Path) -> str:
    return BASE_ENCODER if objective.masker is None else str(out / "encoders" / objective.key)


def finetune_config(task: Task, objective: Objective, out: Path, small: bool) -> Path:
    """The shipped config with every mention of the base encoder replaced by the objective's, as JSON."""
    from allennlp.common import Params

    def replaced(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: replaced(item) for key, item in value.items()}
        if isinstance(value, list):
            return [replaced(item) for item in value]
        return encoder_of(objective, out) if value == BASE_ENCODER else value

    config = replaced(Params.from_file(task.config).as_dict(quiet=True))
    if small:
        for key, part in (("train_data_path", "train"), ("validation_data_path", "dev")):
            config[key] = config[key].split("#")[0] + SMALL_DATA[part]
        config["trainer"]["num_epochs"] = 1
    path = out / "configs" / f"{task.key}_{objective.key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


def finetune_run(task: Task, objective: Objective, seed: int, args: argparse.Namespace) -> Run:
    out = Path(args.out)
    run_dir = out / "finetune" / f"{task.key}_{objective.key}_seed{seed}"
    config = finetune_config(task, objective, out, args.small)
    run = allennlp_train_run(objective.key, seed, str(config), run_dir, {"trainer.cuda_device": cuda_device()})
    run.command = [sys.executable, "-m", "allennlp", *run.command[1:], "--include-package", "spanbert_lib"]
    if task.key == "coref":
        dev = SMALL_DATA["dev"].split("=")[1] if args.small else "70:80"
        scores = ["--ours", str(run_dir / "model.tar.gz"), "--ours-json", str(run_dir / "dev_scores.json")]
        run.then = [[*module_command("evidence.coref_litbank_baseline"), *scores, "--dev-files", dev]]
        run.result_file = run_dir / "dev_scores.json"
        run.record_file = run_dir / "run.json"
    run.env = {"OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads)}
    return run


def finetune_scores(task: Task, run_dir: Path) -> Dict[str, float]:
    metrics = json.loads((run_dir / "metrics.json").read_text())
    if task.key == "coref":
        dev = json.loads((run_dir / "dev_scores.json").read_text())
        return {
            "conll_f1": dev["gold_with_singletons"]["conll_f1"],
            "conll_f1_without_singletons": dev["gold_without_singletons"]["conll_f1"],
            "training_seconds": training_seconds(metrics),
        }
    return {
        "f1": round(100 * metrics["best_validation_f1"], 2),
        "precision": round(100 * metrics["best_validation_precision"], 2),
        "recall": round(100 * metrics["best_validation_recall"], 2),
        "training_seconds": training_seconds(metrics),
    }


def training_seconds(metrics: Dict[str, Any]) -> float:
    """A training's wall seconds from allennlp's ``metrics.json`` (its ``H:MM:SS`` duration)."""
    from evidence.main_job_report import _seconds

    return round(_seconds(metrics["training_duration"]), 1)


# ---------------------------------------------------------------------------------------------------- report


def report(args: argparse.Namespace) -> Dict[str, Any]:
    """The results file and the curve plot from what ``OUT`` holds."""
    out = Path(args.out)
    corpus = json.loads((out / "corpus.json").read_text())
    adaptations = {
        key: json.loads(path.read_text())
        for key in OBJECTIVES
        if (path := out / "adapt" / key / "adaptation.json").exists()
    }
    finetunes: Dict[str, Dict[str, Dict[int, Dict[str, float]]]] = {}
    for task in TASKS.values():
        for objective in OBJECTIVES.values():
            for seed in args.seeds:
                run_dir = out / "finetune" / f"{task.key}_{objective.key}_seed{seed}"
                if (run_dir / "metrics.json").exists() and (
                    task.key != "coref" or (run_dir / "dev_scores.json").exists()
                ):
                    finetunes.setdefault(task.key, {}).setdefault(objective.key, {})[seed] = finetune_scores(
                        task, run_dir
                    )
    first: Optional[Dict[str, Any]] = next(iter(adaptations.values()), None)  # the unigram baseline is the same in all
    rows = []
    for objective in OBJECTIVES.values():
        adaptation = adaptations.get(objective.key)
        final = adaptation["final"] if adaptation else None
        coref = finetunes.get("coref", {}).get(objective.key, {})
        ner = finetunes.get("ner", {}).get(objective.key, {})

        def cell(per_seed: Dict[int, Dict[str, float]], key: str) -> Optional[str]:
            values = [scores[key] for scores in per_seed.values()]
            if not values:
                return None
            stats = mean_std(values, digits=1)
            return f"{stats['mean']:.1f}" + (f" ± {stats['std']:.1f}" if stats["std"] is not None else "")

        at_mask = final["mlm_accuracy_at_mask"] if final else None
        perplexity = final["mlm_perplexity_at_mask"] if final else None
        rows.append(
            [
                objective.label,
                None if at_mask is None else round(100 * at_mask, 1),
                perplexity,
                cell(coref, "conll_f1"),
                cell(coref, "conll_f1_without_singletons"),
                cell(ner, "f1"),
                None if adaptation is None else round(adaptation["training_wall_seconds"] / 60, 1),
                max(len(coref), len(ner)) or None,
            ]
        )
    if first is not None:
        rows.insert(
            0,
            [
                f"unigram baseline (always `{first['unigram_token']}`)",
                round(100 * first["final"]["unigram_accuracy_at_mask"], 1),
                first["final"]["unigram_perplexity_at_mask"],
                None,
                None,
                None,
                None,
                None,
            ],
        )
    columns = [
        "objective",
        "held-out MLM accuracy at [MASK] %",
        "perplexity at [MASK]",
        "coref CoNLL F1 (with singletons)",
        "coref CoNLL F1 (without)",
        "span NER F1",
        "adaptation minutes",
        "seeds",
    ]
    measured = [index for index in range(len(columns)) if index == 0 or any(row[index] is not None for row in rows)]
    columns, rows = [columns[i] for i in measured], [[row[i] for i in measured] for row in rows]
    curve_rows = [
        [key, point["step"], round(100 * point["mlm_accuracy_at_mask"], 1), point["mlm_perplexity_at_mask"]]
        for key, adaptation in adaptations.items()
        for point in adaptation["curve"]
    ]
    if adaptations:
        plot_curves(adaptations, PLOT if args.results == str(DEFAULT_RESULTS) else out / PLOT.name)
    device = first["device"] if first else "?"
    steps = first["overrides"] if first else {}
    ran = {key: adaptation["curve"][-1]["step"] for key, adaptation in adaptations.items()}
    stopped = [f"{key} after {step}" for key, step in ran.items() if step < args.steps]
    notes = [
        f"adaptation: {args.steps} optimizer steps of {args.batch_size} blocks of 128 wordpieces "
        f"({args.steps * args.batch_size * 128 / 1e6:.0f} M wordpieces seen), config {PRETRAINING_CONFIG} "
        f"(its optimiser and schedule, warm-up {steps.get('trainer.learning_rate_scheduler.warmup_steps')} steps), "
        f"seed 1, on {device}"
        + (
            f"; stopped early (patience {steps['trainer.patience']} points): {', '.join(stopped)}"
            if "trainer.patience" in steps and stopped
            else ""
        ),
        f"corpus: {len(corpus['novels'])} Gutenberg novels, {corpus['words']['train']:,} words trained on; the last "
        f"5 % of each ({corpus['words']['heldout']:,} words) held out",
        "at [MASK]: the held-out positions shown to the model as [MASK], with the same geometric-span masks for "
        f"every objective ({len(FINAL_SEEDS)} masking seeds); the unigram baseline predicts the training text's most "
        "frequent wordpiece (perplexity: its add-one wordpiece frequencies)",
        f"fine-tunes: {TASKS['coref'].config} and {TASKS['ner'].config} as shipped with the encoder replaced, "
        f"seeds {', '.join(map(str, args.seeds))} (mean ± sample std), LitBank dev documents (files 70-80 by name)",
        "LitBank documents from the adaptation novels, all in the training split (seen unlabelled during "
        f"adaptation): {', '.join(corpus['litbank_documents_from_the_novels'])}; no dev document comes from them, "
        "so every dev figure is on text the adaptation never saw",
        *(
            [
                "LitBank's excerpts of "
                + ", ".join(corpus["novels_without_a_litbank_document_here"])
                + " are not among the 80 documents used here"
            ]
            if corpus.get("novels_without_a_litbank_document_here")
            else []
        ),
    ]
    where = {"machine": f"{device} (trainings); report written on {machine()}"} if "CPU" not in device else {}
    return write_results(
        Path(args.results),
        "The masking ablation: MiniLM adapted on novels with each objective, held-out MLM and LitBank fine-tunes",
        "evidence.masking_ablation",
        {
            "ablation": table(columns, rows),
            "curve": table(["objective", "step", "accuracy at [MASK] %", "perplexity"], curve_rows),
        },
        notes,
        command=run_command(args),
        **where,
        corpus=corpus,
        adaptations=adaptations,
        finetunes=finetunes,
    )


def plot_curves(adaptations: Dict[str, Dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4.2))
    for key, adaptation in adaptations.items():
        points = adaptation["curve"]
        axis.plot(
            [p["step"] for p in points],
            [100 * p["mlm_accuracy_at_mask"] for p in points],
            marker="o",
            markersize=3,
            label=OBJECTIVES[key].label,
        )
    unigram = 100 * next(iter(adaptations.values()))["curve"][-1]["unigram_accuracy_at_mask"]
    axis.axhline(unigram, color="grey", linestyle="--", label="unigram baseline")
    axis.set_xlabel("optimizer steps")
    axis.set_ylabel("held-out MLM accuracy at [MASK] (%)")
    axis.set_title("MiniLM adapted on nine novels (the same held-out masks for all)")
    axis.legend(fontsize=8)
    axis.grid(alpha=0.3)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def run_command(args: argparse.Namespace) -> str:
    """The ``run`` command that gives these results (its options that change them)."""
    module = shlex.join(shlex.split(command_line("evidence.masking_ablation"))[:3])  # without this process's argv
    parts = [f"{module} run", f"--steps {args.steps}"]
    parts += [f"--steps-per-point {args.steps_per_point}", f"--batch-size {args.batch_size}"]
    parts += [f"--heldout-blocks {args.heldout_blocks}"]
    if getattr(args, "patience", None):
        parts.append(f"--patience {args.patience}")
    if list(getattr(args, "tasks", TASKS)) != list(TASKS):
        parts.append(" ".join(["--tasks", *args.tasks]))
    parts.append(" ".join(["--seeds", *map(str, args.seeds)]))
    return " ".join(parts)


# ------------------------------------------------------------------------------------------------------ main


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    corpus = prepare_corpus(out, args.small)
    (out / "corpus.json").write_text(json.dumps(corpus, indent=2) + "\n")
    print(
        f"corpus: {corpus['words']['train']:,} words to adapt on, {corpus['words']['heldout']:,} held out", flush=True
    )
    chosen = [OBJECTIVES[key] for key in args.objectives]
    adapted = [objective for objective in chosen if objective.masker is not None]
    run_all([adaptation_run(objective, args) for objective in adapted], parallel=args.parallel)
    finetunes = [
        finetune_run(task, objective, seed, args)
        for seed in args.seeds
        for task in (TASKS[key] for key in args.tasks)
        for objective in chosen
    ]
    run_all(finetunes, parallel=args.parallel)
    results = report(args)
    for row in results["tables"]["ablation"]["rows"]:
        print(" | ".join("" if cell is None else str(cell) for cell in row))
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stage", choices=("run", "adapt", "report"))
    parser.add_argument("objective", nargs="?", choices=tuple(OBJECTIVES))
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--results", default=None)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--steps-per-point", type=int, default=250)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument(
        "--patience", type=int, default=None, help="stop an adaptation after N points without held-out improvement"
    )
    parser.add_argument("--heldout-blocks", type=int, default=256, help="held-out blocks of each curve point")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--parallel", type=int, default=1, help="trainings at a time (a GPU takes several)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of each training")
    parser.add_argument("--objectives", nargs="+", choices=tuple(OBJECTIVES), default=list(OBJECTIVES))
    parser.add_argument("--tasks", nargs="*", choices=tuple(TASKS), default=list(TASKS), help="none: adapt only")
    parser.add_argument("--small", action="store_true", help="smoke run: a few steps, 3 training files, 1 seed")
    args = parser.parse_args(argv)
    if args.small:
        args.steps, args.steps_per_point, args.batch_size, args.heldout_blocks = 4, 2, 4, 8
        args.seeds = args.seeds[:1]
        args.out = args.out if args.out != DEFAULT_OUT else DEFAULT_OUT + "_small"
    if args.results is None:
        args.results = str(DEFAULT_RESULTS if not args.small else Path(args.out) / "results.json")
    if args.steps % args.steps_per_point:
        parser.error("--steps must be a multiple of --steps-per-point")
    os.chdir(REPO_ROOT)
    os.environ.update({key: offline_env()[key] for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")})
    if args.stage == "adapt":
        if args.objective is None:
            parser.error("adapt needs an objective")
        adapt(OBJECTIVES[args.objective], args)
        return 0
    if args.stage == "report":
        report(args)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
