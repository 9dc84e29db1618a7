"""
SpanMarker (Aarsen; PyPI ``span-marker`` 1.8.1) trained on LitBank's nested NER from the MiniLM encoder, then run on
the dev sentences. Runs in the anchors' environment (``.venv-baselines/anchors``, see README.md):

    .venv-baselines/anchors/bin/python evidence/baselines/spanmarker_litbank.py \
        --train DATA/ner_train.jsonl --dev DATA/ner_dev.jsonl --encoder pretrained/all-MiniLM-L6-v2 \
        --epochs 0.386 --seed 1 --out RUN

Writes ``RUN/dev_predictions.jsonl`` (``{"id", "entities": [[start, end, "LABEL"], ...]}`` per sentence, inclusive
word offsets), ``RUN/prediction_seconds.json`` and ``RUN/run.json``.

``--epochs`` may be a fraction: the budget of ``training_configs/ner/litbank_minilm.libsonnet`` is one pass of 300
batches of 8 sentences, i.e. 2,400 of the 6,216 training sentences: ``--epochs 0.386`` (the Hugging Face trainer
stops after that share of one shuffled epoch). The model is sized as ours: spans of up to 16 words
(``entity_max_length``), sentences of up to 256 wordpieces (``model_max_length``), 128 span markers per pass, no
document context; training is SpanMarker's ``Trainer`` (the Hugging Face trainer: AdamW, lr 5e-5, weight decay 0.01,
10 % linear warm-up, batches of 8 samples), as its documentation trains.

Workarounds (README.md): SpanMarker's label normalisers read BIO / IO tag sequences, which cannot hold nested
entities; the entities go in as they are through a pass-through normaliser (the spans SpanMarker's tokenizer labels
take nesting as it is). Its evaluation loads ``seqeval`` from the hub, which is offline here: the trainer never
evaluates, and the predictions are scored by ``score_predictions.py ner`` (the library's exact-match span F1).
Prediction is ``SpanMarkerModel.predict``, whose decoding keeps the most probable non-overlapping spans: it
predicts no nested entity.
"""

import sys
from pathlib import Path
from typing import Dict, List

from anchor_common import (
    LearningCurve,
    Stopwatch,
    base_parser,
    check_inputs,
    finish,
    limit_memory,
    offline_environment,
    read_jsonl,
    require_modules,
    run_adapter,
    seed_everything,
    write_jsonl,
)

OUTSIDE = "O"


def labels_of(records):
    return [OUTSIDE] + sorted({entity[2] for record in records for entity in record["entities"]})


def pass_through_normalizer(config):
    """A SpanMarker label normaliser for entities given as ``(label id, start, end exclusive)`` already."""
    from span_marker.label_normalizer import LabelNormalizer

    class PassThrough(LabelNormalizer):
        def ner_tags_to_entities(self, ner_tags):
            return iter([tuple(entity) for entity in ner_tags])

    return PassThrough(config)


def training_dataset(records, label_ids):
    from datasets import Dataset

    return Dataset.from_list(
        [
            {
                "tokens": record["tokens"],
                "ner_tags": [[label_ids[label], start, end + 1] for start, end, label in record["entities"]],
            }
            for record in records
        ]
    )


def curve_callback(curve: LearningCurve, model):
    """A trainer callback that hands every optimizer step but the last to ``curve`` (the last step's point is the
    run's final predictions), the model in eval mode while it predicts."""
    from transformers import TrainerCallback

    class Curve(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            curve.epochs = state.max_steps

        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step < state.max_steps and curve.due(state.global_step):
                model.eval()
                curve.after(state.global_step)
                model.train()

    return Curve()


def train(args, records, dev, out: Path):
    from span_marker import SpanMarkerModel, Trainer
    from transformers import TrainingArguments

    labels = labels_of(records)
    label_ids = {label: index for index, label in enumerate(labels)}
    model = SpanMarkerModel.from_pretrained(
        args.encoder,
        labels=labels,
        model_max_length=args.model_max_length,
        marker_max_length=args.marker_max_length,
        entity_max_length=args.entity_max_length,
    )
    training_args = TrainingArguments(
        output_dir=str(out / "trainer"),
        learning_rate=args.lr,
        per_device_train_batch_size=args.batch_size,
        num_train_epochs=args.epochs,
        weight_decay=0.01,
        warmup_ratio=0.1,
        lr_scheduler_type="linear",
        eval_strategy="no",
        save_strategy="no",
        logging_steps=args.logging_steps,
        report_to=[],
        seed=args.seed,
        data_seed=args.seed,
        use_cpu=True,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    curve = LearningCurve(out, args.curve_every_steps, 0, lambda: dev_records(model, dev), unit="step")
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=training_dataset(records, label_ids),
        callbacks=[curve_callback(curve, model)] if args.curve_every_steps else None,
    )
    trainer.label_normalizer = pass_through_normalizer(model.config)
    trainer.train()
    losses = [[entry["step"], entry["loss"]] for entry in trainer.state.log_history if "loss" in entry]
    steps = {
        "optimizer_steps": trainer.state.global_step,
        # its samples spread a sentence's candidate spans over several, so an epoch is not sentences / batch size
        "steps_per_epoch": round(trainer.state.global_step / trainer.state.epoch) if trainer.state.epoch else None,
    }
    return model, losses, curve, steps


def predict(model, records, batch_size: int):
    sentences = model.predict([record["tokens"] for record in records], batch_size=batch_size)
    return [
        [[entity["word_start_index"], entity["word_end_index"] - 1, entity["label"]] for entity in sentence]
        for sentence in sentences
    ]


def dev_records(model, dev) -> List[Dict]:
    """``{"id", "entities"}`` per dev sentence, in the file's order."""
    return [
        {"id": record["id"], "entities": entities} for record, entities in zip(dev, predict(model, dev, batch_size=16))
    ]


def main() -> int:
    parser = base_parser(__doc__.strip().split("\n\n")[0])
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--entity-max-length", type=int, default=16, help="longest span, in words")
    parser.add_argument("--model-max-length", type=int, default=256, help="wordpieces of a sentence")
    parser.add_argument("--marker-max-length", type=int, default=128, help="span markers per encoder pass")
    parser.add_argument("--logging-steps", type=int, default=20)
    parser.add_argument(
        "--curve-every-steps",
        type=int,
        default=0,
        help="also predict the dev sentences after every N optimizer steps (RUN/curve/step_NNN/): a learning curve; "
        "its time is left out of the training time (default 0: no curve)",
    )
    args = parser.parse_args()
    check_inputs(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    offline_environment(out / "hf_datasets_cache")
    limit_memory(args.memory_limit_gb)
    require_modules("span-marker", ["span_marker", "datasets"])
    seed_everything(args.seed)
    records, dev = read_jsonl(args.train), read_jsonl(args.dev)
    stopwatch = Stopwatch()
    with stopwatch.measure("training"):
        model, losses, curve, steps = train(args, records, dev, out)
    stopwatch.records["training"] = curve.deduct(stopwatch.records["training"])
    with stopwatch.measure("prediction"):
        predicted = dev_records(model.eval(), dev)
    write_jsonl(out / "dev_predictions.jsonl", predicted)
    finish(
        out,
        stopwatch,
        len(dev),
        {
            "system": "span-marker 1.8.1, flat decoding (SpanMarkerModel.predict)",
            "encoder": args.encoder,
            "epochs": args.epochs,
            "seed": args.seed,
            "training_sentences": len(records),
            "settings": {k: getattr(args, k) for k in ("lr", "batch_size", "entity_max_length", "model_max_length")},
            **steps,
            "losses": losses,
            **({"learning_curve": curve.record()} if args.curve_every_steps else {}),
        },
    )
    print(f"{out / 'dev_predictions.jsonl'}: {len(dev)} sentences")
    return 0


if __name__ == "__main__":
    sys.exit(run_adapter(main))
