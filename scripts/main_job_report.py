"""
The main job's report on a pre-training run (``scripts/main.sh`` step 5):

* held-out MLM and SBO accuracy with fixed masks (one pass per masking seed) against the unigram
  baseline, i.e. predicting the most frequent wordpiece of the training text at every masked position;
* the training curves (loss, MLM / SBO accuracy per epoch from allennlp's ``metrics_epoch_*.json``)
  drawn to ``OUT/training_curves.png``;
* a few held-out blocks with their masked spans and the model's fill-ins;
* ``OUT/summary.json`` with these figures and the job's wall-clock and CPU seconds.

    python scripts/main_job_report.py SERIALIZATION_DIR --train TRAIN_PATHS --heldout HELDOUT_PATH --out OUT

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
from typing import Any, Dict, List

HEADS = ("mlm", "sbo")


def _epoch_metrics(serialization_dir: Path) -> List[Dict[str, Any]]:
    paths = sorted(serialization_dir.glob("metrics_epoch_*.json"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    return [json.loads(path.read_text()) for path in paths]


def _steps_per_epoch(serialization_dir: Path) -> int:
    config = json.loads((serialization_dir / "config.json").read_text())
    return int(config.get("data_loader", {}).get("batches_per_epoch") or 0)


def plot_training_curves(
    epochs: List[Dict[str, Any]], steps_per_epoch: int, unigram_accuracy: float, output_path: Path
) -> None:
    """Loss (left) and MLM / SBO accuracy (right) per epoch, training and validation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [(row["epoch"] + 1) * steps_per_epoch if steps_per_epoch else row["epoch"] + 1 for row in epochs]
    figure, (loss_axes, accuracy_axes) = plt.subplots(1, 2, figsize=(11, 4))
    for split, style in (("training", "-"), ("validation", "--")):
        loss_axes.plot(x, [row.get(f"{split}_loss") for row in epochs], style, marker="o", label=f"{split} loss")
        for head, colour in zip(HEADS, ("tab:blue", "tab:orange")):
            accuracy_axes.plot(
                x,
                [row.get(f"{split}_{head}_accuracy") for row in epochs],
                style,
                color=colour,
                marker="o",
                label=f"{split} {head.upper()} accuracy",
            )
    accuracy_axes.axhline(unigram_accuracy, color="grey", linestyle=":", label="unigram baseline (held-out)")
    for axes, label in ((loss_axes, "loss (MLM + SBO)"), (accuracy_axes, "accuracy at masked positions")):
        axes.set_xlabel("optimizer step" if steps_per_epoch else "epoch")
        axes.set_ylabel(label)
        axes.grid(alpha=0.3)
        axes.legend(fontsize=8)
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
) -> Dict[str, Any]:
    """Evaluates ``SERIALIZATION_DIR/model.tar.gz``, draws ``OUT/training_curves.png``; returns the summary."""
    from allennlp.data import DatasetReader
    from allennlp.models.archival import load_archive

    import spanbert_lib.pretraining  # noqa: F401  (registers the reader and model)
    from spanbert_lib.pretraining.heldout_evaluation import evaluate_heldout, format_fill_ins, most_frequent_wordpiece

    serialization = Path(serialization_dir)
    archive = load_archive(str(serialization / "model.tar.gz"))
    model = archive.model
    reader = DatasetReader.from_params(archive.config["dataset_reader"].duplicate())
    tokenizer = reader.tokenizer
    heldout = list(itertools.islice(reader.read(heldout_path), max_heldout_blocks))
    evaluation = evaluate_heldout(model, heldout, seeds=range(seeds))
    unigram_id = most_frequent_wordpiece(reader.read(train_path), tokenizer.all_special_ids)
    summary: Dict[str, Any] = {
        "heldout_path": heldout_path,
        "heldout_blocks": len(heldout),
        "heldout_masking_seeds": seeds,
        "heldout_masked_tokens": evaluation.num_predictions,
        "heldout_mlm_accuracy": evaluation.accuracy("mlm"),
        "heldout_sbo_accuracy": evaluation.accuracy("sbo"),
        "unigram_token": tokenizer.convert_ids_to_tokens(unigram_id),
        "unigram_mlm_accuracy": evaluation.constant_accuracy(unigram_id),
        # Only the positions the model saw as [MASK] (80 % of spans; the rest were kept, which a
        # model can copy, or replaced by random wordpieces).
        "heldout_mlm_accuracy_at_mask": evaluation.accuracy("mlm", replaced_by_mask=True),
        "heldout_sbo_accuracy_at_mask": evaluation.accuracy("sbo", replaced_by_mask=True),
        "unigram_mlm_accuracy_at_mask": evaluation.constant_accuracy(unigram_id, replaced_by_mask=True),
    }
    epochs = _epoch_metrics(serialization)
    steps_per_epoch = _steps_per_epoch(serialization)
    if epochs:
        last = epochs[-1]
        summary.update(
            {
                "epochs": len(epochs),
                "optimizer_steps": len(epochs) * steps_per_epoch if steps_per_epoch else None,
                "first_training_loss": epochs[0]["training_loss"],
                "final_training_loss": last["training_loss"],
                "final_validation_loss": last.get("validation_loss"),
                "training_seconds": _seconds(last["training_duration"]),  # allennlp's figure is cumulative
                "parameters": sum(p.numel() for p in model.parameters()),
            }
        )
        plot_training_curves(
            epochs, steps_per_epoch, summary["unigram_mlm_accuracy"], Path(out) / "training_curves.png"
        )
    first_seed_blocks = evaluation.blocks[: len(heldout)]
    shown = [block for block in first_seed_blocks if len(block.positions)][:examples]
    summary["fill_ins"] = [format_fill_ins(block, tokenizer) for block in shown]
    return summary


def _seconds(duration: str) -> float:
    """allennlp's ``H:MM:SS.ffffff`` durations in seconds."""
    hours, minutes, seconds = duration.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def print_report(summary: Dict[str, Any]) -> None:
    print(
        f"held-out text {summary['heldout_path']}: {summary['heldout_blocks']} blocks, "
        f"{summary['heldout_masked_tokens']} masked wordpieces over "
        f"{summary['heldout_masking_seeds']} fixed masking seeds"
    )
    print(f"  {'accuracy at':<44} {'all masked positions':>22} {'positions shown [MASK]':>24}")
    rows = [
        (f"unigram baseline (always {summary['unigram_token']!r})", "unigram_mlm_accuracy"),
        ("MLM head", "heldout_mlm_accuracy"),
        ("SBO head (span boundaries + position only)", "heldout_sbo_accuracy"),
    ]
    for name, key in rows:
        cells = []
        for suffix, baseline_key in (("", "unigram_mlm_accuracy"), ("_at_mask", "unigram_mlm_accuracy_at_mask")):
            value, baseline = summary[key + suffix], summary[baseline_key]
            ratio = f" ({value / baseline:.1f}x)" if baseline and not key.startswith("unigram") else ""
            cells.append(f"{value:.4f}{ratio}")
        print(f"  {name:<44} {cells[0]:>22} {cells[1]:>24}")
    if "first_training_loss" in summary:
        print(
            f"training loss {summary['first_training_loss']:.3f} -> {summary['final_training_loss']:.3f} over "
            f"{summary['optimizer_steps'] or summary['epochs']} {'steps' if summary['optimizer_steps'] else 'epochs'}"
        )
    print("held-out blocks, masked spans as [original -> MLM fill-in]:")
    for text in summary["fill_ins"]:
        print(f"  * {text}")


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
        args.serialization_dir, args.train, args.heldout, args.out, args.seeds, args.examples, args.max_heldout_blocks
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
    return 0 if summary["heldout_mlm_accuracy"] > summary["unigram_mlm_accuracy"] else 1


if __name__ == "__main__":
    sys.exit(main())
