"""
The main job's report on a pre-training run (``evidence/main_job.py``, the held-out evaluation stage):

* held-out MLM and SBO accuracy with fixed masks (one pass per masking seed) against the unigram
  baseline, i.e. predicting the most frequent wordpiece of the training text at every masked position;
* with ``--frozen DIR``: the same figures, same masks and held-out blocks, for a second run whose
  heads were trained on the FROZEN encoder (``model.freeze_encoder``), beside the ADAPTED one
  (keys ``frozen_*``), i.e. what adapting the encoder bought;
* the training curves (loss, MLM / SBO accuracy per epoch from allennlp's ``metrics_epoch_*.json``)
  drawn to ``OUT/training_curves.png`` (both runs when there are two);
* a few held-out blocks in whole words with their masked spans and the model's fill-ins;
* ``OUT/summary.json`` with these figures and the job's wall-clock and CPU seconds;
* with ``--results FILE``: the held-out table as a results file (``evidence/results.py``).

    python -m evidence.main_job_report SERIALIZATION_DIR --train TRAIN_PATHS --heldout HELDOUT_PATH --out OUT \
        [--frozen FROZEN_SERIALIZATION_DIR] [--results results/NAME.json]

Exits with 1 when the model does no better than the unigram baseline on the held-out text.
"""

import argparse
import itertools
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

HEADS = ("mlm", "sbo")
HELDOUT_COLUMNS = [
    "predicted by",
    "all masked: accuracy",
    "all masked: x unigram",
    "at [MASK]: accuracy",
    "at [MASK]: x unigram",
    "at [MASK]: perplexity",
]


def _epoch_metrics(serialization_dir: Path) -> List[Dict[str, Any]]:
    paths = sorted(serialization_dir.glob("metrics_epoch_*.json"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    return [json.loads(path.read_text()) for path in paths]


def _steps_per_epoch(serialization_dir: Path) -> int:
    config = json.loads((serialization_dir / "config.json").read_text())
    return int(config.get("data_loader", {}).get("batches_per_epoch") or 0)


def plot_training_curves(
    runs: Dict[str, List[Dict[str, Any]]], steps_per_epoch: int, unigram_accuracy: float, output_path: Path
) -> None:
    """
    Loss, MLM accuracy and SBO accuracy per epoch, training (solid) and validation (dashed), of every run.

    # Parameters

    runs : `Dict[str, List[Dict[str, Any]]]`
        Run name (legend) -> its epochs' metrics.
    steps_per_epoch : `int`
        Optimizer steps of an epoch (0: the x axis counts epochs).
    unigram_accuracy : `float`
        The held-out unigram baseline, drawn on the accuracy panels.
    output_path : `Path`
        The PNG to write.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, panels = plt.subplots(1, 3, figsize=(15, 4.2))
    colours = ("tab:orange", "tab:blue", "tab:green", "tab:red")
    for (run, epochs), colour in zip(runs.items(), colours):
        x = [(row["epoch"] + 1) * steps_per_epoch if steps_per_epoch else row["epoch"] + 1 for row in epochs]
        prefix = f"{run}: " if len(runs) > 1 else ""
        for split, style in (("training", "-"), ("validation", "--")):
            for axes, metric in zip(panels, ("loss", "mlm_accuracy", "sbo_accuracy")):
                axes.plot(
                    x,
                    [row.get(f"{split}_{metric}") for row in epochs],
                    style,
                    color=colour,
                    marker="o",
                    markersize=3,
                    label=f"{prefix}{split}",
                )
    titles = ("loss (MLM + SBO)", "MLM accuracy at masked positions", "SBO accuracy at masked positions")
    for index, (axes, title) in enumerate(zip(panels, titles)):
        if index:
            axes.axhline(unigram_accuracy, color="grey", linestyle=":", label="unigram baseline (held-out)")
        axes.set_title(title, fontsize=10)
        axes.set_xlabel("optimizer step" if steps_per_epoch else "epoch")
        axes.grid(alpha=0.3)
        axes.legend(fontsize=7)
    figure.suptitle("SpanBERT pre-training (validation = the held-out text)")
    figure.tight_layout()
    output_path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output_path, dpi=100)
    plt.close(figure)


def build_report(
    serialization_dir: str,
    train_path: str,
    heldout_path: str,
    out: str,
    seeds: int = 10,
    examples: int = 3,
    max_heldout_blocks: int = 256,
    frozen_dir: Optional[str] = None,
) -> Dict[str, Any]:
    """
    Evaluates ``SERIALIZATION_DIR/model.tar.gz`` (and ``FROZEN_DIR/model.tar.gz`` on the same masks), draws
    ``OUT/training_curves.png``; returns the summary.
    """
    import torch
    from allennlp.data import DatasetReader
    from allennlp.models.archival import load_archive

    import spanbert_lib.pretraining  # noqa: F401  (registers the reader and model)
    from spanbert_lib.pretraining.heldout_evaluation import (
        evaluate_heldout,
        most_frequent_wordpiece,
        wordpiece_log_probabilities,
    )

    serialization = Path(serialization_dir)
    archive = load_archive(str(serialization / "model.tar.gz"))
    model = archive.model
    reader = DatasetReader.from_params(archive.config["dataset_reader"].duplicate())
    tokenizer = reader.tokenizer
    heldout = list(itertools.islice(reader.read(heldout_path), max_heldout_blocks))
    evaluation = evaluate_heldout(model, heldout, seeds=range(seeds))
    training_blocks = list(reader.read(train_path))
    unigram_id = most_frequent_wordpiece(training_blocks, tokenizer.all_special_ids)
    unigram_log_probs = wordpiece_log_probabilities(training_blocks, tokenizer.all_special_ids, model.vocab_size)
    summary: Dict[str, Any] = {
        "heldout_path": heldout_path,
        "heldout_blocks": len(heldout),
        "heldout_masking_seeds": seeds,
        "heldout_masked_tokens": evaluation.num_predictions,
        "unigram_token": tokenizer.convert_ids_to_tokens(unigram_id),
        "unigram_mlm_accuracy": evaluation.constant_accuracy(unigram_id),
        # Only the positions the model saw as [MASK] (80 % of spans; the rest were kept, which a
        # model can copy, or replaced by random wordpieces).
        "unigram_mlm_accuracy_at_mask": evaluation.constant_accuracy(unigram_id, replaced_by_mask=True),
        # The training text's wordpiece frequencies (add-one) as the prediction everywhere.
        "unigram_perplexity_at_mask": evaluation.unigram_perplexity(unigram_log_probs, replaced_by_mask=True),
        "encoder": archive.config["model"]["encoder"].get("model_name"),
        **_run_figures(model, evaluation, serialization, prefix=""),
    }
    runs = {"adapted" if frozen_dir else "model": _epoch_metrics(serialization)}
    shown = [index for index, block in enumerate(evaluation.blocks[: len(heldout)]) if len(block.positions)][:examples]
    summary["fill_ins"] = _fill_ins(evaluation, shown, tokenizer)
    if frozen_dir is not None:
        frozen_serialization = Path(frozen_dir)
        frozen = load_archive(str(frozen_serialization / "model.tar.gz")).model
        frozen_evaluation = evaluate_heldout(frozen, heldout, seeds=range(seeds))
        if any(
            not torch.equal(a.positions, b.positions) or not torch.equal(a.seen_ids, b.seen_ids)
            for a, b in zip(evaluation.blocks, frozen_evaluation.blocks)
        ):
            raise RuntimeError(f"{frozen_dir}: its held-out masks differ from {serialization_dir}'s (another masker?)")
        summary.update(_run_figures(frozen, frozen_evaluation, frozen_serialization, prefix="frozen_"))
        summary["frozen_fill_ins"] = _fill_ins(frozen_evaluation, shown, tokenizer)
        runs = {"heads on the frozen encoder": _epoch_metrics(frozen_serialization), **runs}
    if all(runs.values()):
        plot_training_curves(
            runs, _steps_per_epoch(serialization), summary["unigram_mlm_accuracy"], Path(out) / "training_curves.png"
        )
    return summary


def _run_figures(model, evaluation, serialization: Path, prefix: str) -> Dict[str, Any]:
    """One run's held-out accuracies and training figures, keys prefixed with ``prefix``."""
    figures: Dict[str, Any] = {
        "heldout_mlm_accuracy": evaluation.accuracy("mlm"),
        "heldout_sbo_accuracy": evaluation.accuracy("sbo"),
        "heldout_mlm_accuracy_at_mask": evaluation.accuracy("mlm", replaced_by_mask=True),
        "heldout_sbo_accuracy_at_mask": evaluation.accuracy("sbo", replaced_by_mask=True),
        "heldout_mlm_perplexity_at_mask": evaluation.perplexity("mlm", replaced_by_mask=True),
        "heldout_sbo_perplexity_at_mask": evaluation.perplexity("sbo", replaced_by_mask=True),
        "parameters": sum(p.numel() for p in model.parameters()),
        "trained_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
    }
    epochs = _epoch_metrics(serialization)
    steps_per_epoch = _steps_per_epoch(serialization)
    if epochs:
        last = epochs[-1]
        figures.update(
            {
                "epochs": len(epochs),
                "optimizer_steps": len(epochs) * steps_per_epoch if steps_per_epoch else None,
                "first_training_loss": epochs[0]["training_loss"],
                "final_training_loss": last["training_loss"],
                "final_validation_loss": last.get("validation_loss"),
                "training_seconds": _seconds(last["training_duration"]),  # allennlp's figure is cumulative
            }
        )
    return {prefix + key: value for key, value in figures.items()}


def _fill_ins(evaluation, indices: List[int], tokenizer) -> List[str]:
    from spanbert_lib.pretraining.heldout_evaluation import format_fill_ins

    return [format_fill_ins(evaluation.blocks[index], tokenizer) for index in indices]


def _seconds(duration: str) -> float:
    """allennlp's ``H:MM:SS.ffffff`` durations in seconds."""
    hours, minutes, seconds = duration.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def heldout_rows(summary: Dict[str, Any]) -> List[List[Any]]:
    """
    The held-out comparison as table rows (:data:`HELDOUT_COLUMNS`): the unigram baseline, then each head (of
    the frozen run, when there is one, then of the adapted one): accuracy over all masked positions and at the
    positions shown as ``[MASK]``, each with its ratio to the baseline, and the perplexity at ``[MASK]``.
    """
    compared = "frozen_heldout_mlm_accuracy" in summary
    adapted = "adapted encoder: " if compared else ""
    heads = [("frozen_", "heads on the frozen encoder: ")] if compared else []
    heads.append(("", adapted))
    rows: List[List[Any]] = [
        [
            f"unigram baseline (always `{summary['unigram_token']}`)",
            round(summary["unigram_mlm_accuracy"], 3),
            None,
            round(summary["unigram_mlm_accuracy_at_mask"], 3),
            None,
            _whole(summary.get("unigram_perplexity_at_mask")),
        ]
    ]
    for prefix, name in heads:
        for head in HEADS:
            key = f"{prefix}heldout_{head}_accuracy"
            cells = []
            for suffix, baseline_key in (("", "unigram_mlm_accuracy"), ("_at_mask", "unigram_mlm_accuracy_at_mask")):
                value, baseline = summary[key + suffix], summary[baseline_key]
                cells += [round(value, 3), round(value / baseline, 1) if baseline else None]
            perplexity = summary.get(f"{prefix}heldout_{head}_perplexity_at_mask")
            rows.append([f"{name}{head.upper()} head", *cells, _whole(perplexity)])
    return rows


def _whole(value: Optional[float]) -> Optional[int]:
    return None if value is None else round(value)


def print_report(summary: Dict[str, Any]) -> None:
    print(
        f"held-out text {summary['heldout_path']}: {summary['heldout_blocks']} blocks, "
        f"{summary['heldout_masked_tokens']} masked wordpieces over "
        f"{summary['heldout_masking_seeds']} fixed masking seeds"
    )
    print(
        f"  {'accuracy at':<52} {'all masked positions':>22} {'positions shown [MASK]':>24} "
        f"{'perplexity at [MASK]':>21}"
    )
    compared = "frozen_heldout_mlm_accuracy" in summary
    rows = [(f"unigram baseline (always {summary['unigram_token']!r})", "unigram_mlm_accuracy")]
    perplexity_keys = {"unigram_mlm_accuracy": "unigram_perplexity_at_mask"}
    if compared:
        rows += [
            ("heads on the FROZEN encoder: MLM head", "frozen_heldout_mlm_accuracy"),
            ("heads on the FROZEN encoder: SBO head", "frozen_heldout_sbo_accuracy"),
        ]
    adapted = "ADAPTED encoder: " if compared else ""
    rows += [
        (f"{adapted}MLM head", "heldout_mlm_accuracy"),
        (f"{adapted}SBO head (span boundaries + position only)", "heldout_sbo_accuracy"),
    ]
    for name, key in rows:
        cells = []
        for suffix, baseline_key in (("", "unigram_mlm_accuracy"), ("_at_mask", "unigram_mlm_accuracy_at_mask")):
            value, baseline = summary[key + suffix], summary[baseline_key]
            ratio = f" ({value / baseline:.1f}x)" if baseline and not key.startswith("unigram") else ""
            cells.append(f"{value:.4f}{ratio}")
        perplexity = summary.get(perplexity_keys.get(key, key.replace("accuracy", "perplexity_at_mask")))
        cells.append(f"{perplexity:.0f}" if perplexity is not None else "")
        print(f"  {name:<52} {cells[0]:>22} {cells[1]:>24} {cells[2]:>21}")
    for prefix, run in (("frozen_", "heads on the frozen encoder"), ("", "adapted encoder" if compared else "")):
        if f"{prefix}first_training_loss" in summary:
            steps = summary[f"{prefix}optimizer_steps"]
            print(
                f"{run + ': ' if run else ''}training loss {summary[f'{prefix}first_training_loss']:.3f} -> "
                f"{summary[f'{prefix}final_training_loss']:.3f} over {steps or summary[f'{prefix}epochs']} "
                f"{'steps' if steps else 'epochs'}, {summary[f'{prefix}trained_parameters']:,} parameters trained"
            )
    print("held-out blocks in whole words, masked spans as [original words -> the MLM head's words]:")
    for index, text in enumerate(summary["fill_ins"]):
        print(f"  * {'adapted: ' if compared else ''}{text}")
        if compared:
            print(f"    frozen:  {summary['frozen_fill_ins'][index]}")


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("serialization_dir")
    parser.add_argument("--train", required=True, help="the training corpus (for the unigram baseline)")
    parser.add_argument("--heldout", required=True, help="held-out text (not in the training corpus)")
    parser.add_argument("--out", required=True, help="directory for summary.json and training_curves.png")
    parser.add_argument("--seeds", type=int, default=10, help="masking seeds over the held-out text")
    parser.add_argument("--examples", type=int, default=3, help="held-out blocks to print with fill-ins")
    parser.add_argument("--max-heldout-blocks", type=int, default=256, help="evaluate the first N held-out blocks")
    parser.add_argument(
        "--frozen", default=None, help="serialization directory of the same heads trained on the frozen encoder"
    )
    parser.add_argument(
        "--results", default=None, help="also write the held-out table to this results file (results/NAME.json)"
    )
    parser.add_argument(
        "--job-start",
        type=float,
        default=None,
        help="epoch seconds when the job started: `seconds` then covers the whole job",
    )
    parser.add_argument(
        "--job-cpu-seconds",
        type=float,
        default=0.0,
        help="CPU seconds the job used before this report (this report's own are added)",
    )
    args = parser.parse_args(argv)
    started = time.time()
    summary = build_report(
        args.serialization_dir,
        args.train,
        args.heldout,
        args.out,
        args.seeds,
        args.examples,
        args.max_heldout_blocks,
        frozen_dir=args.frozen,
    )
    own = resource.getrusage(resource.RUSAGE_SELF)
    summary["seconds"] = round(time.time() - (args.job_start if args.job_start is not None else started), 1)
    summary["cpu_seconds"] = round(args.job_cpu_seconds + own.ru_utime + own.ru_stime, 1)
    summary["cpu_count"] = os.cpu_count()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print_report(summary)
    print(f"figures in {out / 'summary.json'}, training curves in {out / 'training_curves.png'}")
    if args.results:
        from evidence.results import table, write_results

        write_results(
            Path(args.results),
            f"Held-out MLM and SBO accuracy of {args.serialization_dir} against the unigram baseline",
            "evidence.main_job_report",
            {"heldout": table(HELDOUT_COLUMNS, heldout_rows(summary))},
            [
                f"held out: {args.heldout}, {summary['heldout_masked_tokens']:,} masked wordpieces over "
                f"{summary['heldout_masking_seeds']} fixed masking seeds; training text: {args.train}",
                "at [MASK]: only the positions shown to the model as [MASK]; the unigram baseline's perplexity comes "
                "from the training text's add-one wordpiece frequencies",
            ],
            summary=summary,
        )
        print(f"wrote {args.results}")
    return 0 if summary["heldout_mlm_accuracy"] > summary["unigram_mlm_accuracy"] else 1


if __name__ == "__main__":
    sys.exit(main())
