"""
fastcoref (Otmazgin et al. 2022; PyPI ``fastcoref`` 2.1.6) trained on LitBank from the MiniLM encoder, then run on
the dev documents. Runs in the anchors' environment (``.venv-baselines/anchors``, see README.md):

    .venv-baselines/anchors/bin/python evidence/baselines/fastcoref_litbank.py --trainer fcoref|lingmess \
        --train DATA/coref_train.jsonl --dev DATA/coref_dev.jsonl --encoder pretrained/all-MiniLM-L6-v2 \
        --epochs 6 --seed 1 --out RUN

Writes ``RUN/dev_predictions.jsonl`` (``{"doc_key", "clusters": [[[start, end], ...], ...]}``, inclusive word
offsets; fastcoref predicts no singletons), ``RUN/prediction_seconds.json``, ``RUN/run.json`` (timings, peak RSS,
settings, the training losses) and the trained model in ``RUN/model`` (``save_pretrained`` of the model and tokenizer,
what ``FCoref(model_name_or_path=RUN/model)`` / ``LingMessCoref(...)`` load; checked by loading it back that way and
comparing every tensor; ``fastcoref_inference.py`` runs it).

Training is fastcoref's own ``CorefTrainer`` loop (AdamW, encoder lr 1e-5 / head lr 3e-4, weight decay 0.01,
betas (0.9, 0.98), 10 % linear warm-up then decay, batches of up to 5,000 wordpieces = one LitBank document) on the
GOLD clusters: there is no LingMess teacher here, so ``--trainer fcoref`` trains the F-coref architecture (the
s2e-coref head over the encoder, ffnn 1024) directly, not by distillation; ``--trainer lingmess`` trains the
LingMess architecture (six category-specific antecedent scorers plus a shared one, its own loss) in the same loop
(fastcoref's trainer only builds the F-coref model; here its model loader is swapped). Documents longer than 512
wordpieces are cut into consecutive 512-piece segments encoded independently and concatenated (fastcoref's
``LeftOversCollator``, used for both architectures here; the package's LingMess inference pads whole documents
for a Longformer instead, which a 512-position encoder cannot take).

A run that stops (a session's end) resumes where its last checkpoint left it when started again with the same
settings: one is saved after every ``--curve-every`` epochs, or every epoch without a curve
(``epoch_checkpoints.py``); timings, losses, the curve and peak memory then cover every part of the run, the epochs
a stopped part did not finish left out.
"""

import logging
import sys
from pathlib import Path
from typing import Dict, List

from anchor_common import (
    LearningCurve,
    Stopwatch,
    base_parser,
    check_inputs,
    check_same_tensors,
    cpu_seconds,
    finish,
    limit_memory,
    offline_environment,
    peak_rss_mib,
    read_jsonl,
    require_modules,
    run_adapter,
    seed_everything,
    write_jsonl,
)
from epoch_checkpoints import EpochCheckpoints, offset_losses, summed
from fastcoref_inference import batch_clusters, load_coref

ONE_DOCUMENT_PER_BATCH = 1  # DynamicBatchSampler's max_tokens: every document alone, so nothing is padded


class LossLog(logging.Handler):
    """Keeps the ``loss step N: X`` lines fastcoref's trainer logs."""

    def __init__(self) -> None:
        super().__init__()
        self.losses = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("loss step "):
            step, loss = message[len("loss step ") :].split(":")
            self.losses.append([int(step), round(float(loss), 4)])


def lingmess_loader():
    """fastcoref's ``_load_f_coref_model`` building a LingMessModel instead (same config and tokenizer)."""
    from fastcoref.coref_models.modeling_lingmess import LingMessModel
    from transformers import AutoConfig, AutoTokenizer

    def load(args):
        config = AutoConfig.from_pretrained(args.model_name_or_path)
        config.coref_head = {
            "max_span_length": args.max_span_length,
            "top_lambda": args.top_lambda,
            "ffnn_size": args.ffnn_size,
            "dropout_prob": args.dropout_prob,
            "max_segment_len": args.max_segment_len,
        }
        tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path, use_fast=True, add_prefix_space=True)
        model = LingMessModel.from_pretrained(args.model_name_or_path, config=config)
        # transformers 4.5x's from_pretrained skips the constructor's initialisation of LingMess's raw antecedent
        # parameters (weights left 0, biases uninitialised memory up to ~1e6 measured, loss NaN): redo it
        model.reset_parameters()
        return model, tokenizer

    return load


def train(args, out: Path):
    import time

    import spacy
    from fastcoref import trainer as fastcoref_trainer

    wall, cpu = time.perf_counter(), cpu_seconds()  # the trainer's set-up counts, as it did before checkpoints
    if args.trainer == "lingmess":
        fastcoref_trainer._load_f_coref_model = lingmess_loader()
    training_args = fastcoref_trainer.TrainingArgs(
        model_name_or_path=args.encoder,
        output_dir=f"fastcoref_{args.trainer}",  # also wandb's project name, which may hold no '/'
        overwrite_output_dir=True,
        epochs=args.epochs,
        seed=args.seed,
        device="cpu",
        max_segment_len=512,
        logging_steps=args.logging_steps,
        eval_steps=10**9,
        cache_dir=str(out / "hf_cache"),
    )
    losses = LossLog()
    logging.getLogger(fastcoref_trainer.__name__).addHandler(losses)
    # a blank English pipeline: the documents come tokenised, and no spaCy model may be downloaded
    trainer = fastcoref_trainer.CorefTrainer(args=training_args, train_file=args.train, nlp=spacy.blank("en"))
    epochs = int(args.epochs)  # the trainer's loop runs int(epochs) passes
    settings = ("trainer", "train", "encoder", "epochs", "seed", "curve_every")
    identity = {key: str(getattr(args, key)) for key in settings}
    checkpoints = EpochCheckpoints(out, args.curve_every, identity)
    curve = LearningCurve(out, args.curve_every, epochs, lambda: dev_records(trainer, args.dev))
    before = checkpoints.earlier("training_seconds", {"wall_seconds": 0.0, "cpu_seconds": 0.0})
    if checkpoints.state:
        curve.resume(checkpoints.earlier("curve", curve.record()), before["cpu_seconds"])
    if args.curve_every:
        evaluate_as_curve(trainer, curve, checkpoints.done)
    steps_before = checkpoints.steps

    def kept() -> Dict:
        """What a checkpoint keeps beside the trainer's states: the run so far."""
        part = {"wall_seconds": time.perf_counter() - wall, "cpu_seconds": cpu_seconds() - cpu}
        return {
            "losses": checkpoints.earlier("losses", []) + offset_losses(losses.losses, steps_before),
            "training_seconds": summed(before, curve.deduct(part)),
            "curve": curve.record(),
            "peak_rss_mib": max(peak_rss_mib(), checkpoints.earlier("peak_rss_mib", 0.0)),
        }

    checkpoints.install(fastcoref_trainer, trainer, kept)
    trainer.train()
    curve.after(epochs)
    run_so_far = kept()
    return trainer, run_so_far, curve, checkpoints


def evaluate_as_curve(trainer, curve: LearningCurve, epochs_before: int = 0) -> None:
    """
    fastcoref's trainer evaluates every ``eval_steps`` optimizer steps when it has a dev set (and keeps the best
    model by its F1). Here that evaluation is the learning curve's prediction: ``eval_steps`` becomes ``curve.every``
    epochs once the trainer has made its batches, and the F1 handed back never counts as best, so the trainer saves
    no model of its own. A resumed run counts its steps from 0 again: ``epochs_before`` (a multiple of
    ``curve.every``, where checkpoints are made) are added.
    """
    from fastcoref.utilities import coref_dataset

    make_batches = coref_dataset.create_batches
    steps_per_epoch = []

    def create_batches(*args, **kwargs):
        batches = make_batches(*args, **kwargs)
        steps_per_epoch.append(len(batches))
        trainer.args.eval_steps = len(batches) * curve.every
        return batches

    def evaluate(test: bool = False, prefix: str = "") -> Dict[str, float]:
        step = int(prefix.rsplit("_", 1)[1])  # the trainer's prefix: step_<global step>
        curve.after(epochs_before + step // steps_per_epoch[-1])
        return {"f1": -1.0}

    coref_dataset.create_batches = create_batches
    trainer.dev_sampler = "the learning curve"  # the trainer evaluates only when this is not None
    trainer.evaluate = evaluate


def dev_records(trainer, dev_file: str) -> List[Dict]:
    """``{"doc_key", "clusters"}`` per dev document, in the file's order."""
    predicted = predict(trainer, dev_file)
    return [{"doc_key": d["doc_key"], "clusters": predicted[d["doc_key"]]} for d in read_jsonl(dev_file)]


def predict(trainer, dev_file: str):
    """Clusters per dev document, as fastcoref's ``evaluate`` computes them, mapped from wordpieces to words."""
    from fastcoref.utilities import coref_dataset
    from fastcoref.utilities.collate import DynamicBatchSampler

    dataset = coref_dataset.create(file=dev_file, tokenizer=trainer.tokenizer, nlp=trainer.nlp)
    sampler = DynamicBatchSampler(
        dataset=dataset,
        collator=trainer.collator,
        max_tokens=ONE_DOCUMENT_PER_BATCH,
        max_segment_len=trainer.args.max_segment_len,
    )
    model = trainer.model.eval()
    predictions = {}
    for batch in sampler:
        for doc_key, clusters in zip(batch["doc_key"], batch_clusters(model, batch)):
            predictions[doc_key] = clusters
    return predictions


def save_model(trainer, model_dir: Path) -> Dict:
    """The trained model and tokenizer saved as fastcoref saves its best model (``save_pretrained``), then loaded
    back with fastcoref's ``FCoref`` / ``LingMessCoref`` and compared tensor by tensor."""
    from fastcoref.utilities.util import save_all

    save_all(model=trainer.model, tokenizer=trainer.tokenizer, output_dir=str(model_dir))
    coref = load_coref(model_dir)
    check_same_tensors(trainer.model.state_dict(), coref.model.state_dict(), model_dir)
    return {"path": str(model_dir), "loaded_with": f"fastcoref.{type(coref).__name__}"}


def main() -> int:
    parser = base_parser(__doc__.strip().split("\n\n")[0])
    parser.add_argument("--trainer", choices=["fcoref", "lingmess"], default="fcoref")
    parser.add_argument("--logging-steps", type=int, default=10, help="log the mean loss every N steps")
    args = parser.parse_args()
    check_inputs(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    offline_environment(out / "hf_datasets_cache")
    limit_memory(args.memory_limit_gb)
    require_modules("fastcoref", ["fastcoref", "spacy", "wandb"])
    seed_everything(args.seed)
    stopwatch = Stopwatch()
    trainer, run_so_far, curve, checkpoints = train(args, out)
    stopwatch.records["training"] = run_so_far["training_seconds"]
    dev = read_jsonl(args.dev)
    with stopwatch.measure("prediction"):
        records = dev_records(trainer, args.dev)
    saved = save_model(trainer, out / "model")
    write_jsonl(out / "dev_predictions.jsonl", records)
    finish(
        out,
        stopwatch,
        len(dev),
        {
            "system": f"fastcoref 2.1.6, {args.trainer} architecture trained on gold clusters",
            "encoder": args.encoder,
            "epochs": args.epochs,
            "seed": args.seed,
            "training_documents": len(read_jsonl(args.train)),
            "losses": run_so_far["losses"],
            "learning_curve": curve.record(),
            "model": saved,
            "resumed_after_epoch": checkpoints.earlier("epoch", None),
        },
        earlier_peak_rss_mib=checkpoints.earlier("peak_rss_mib", 0.0),
    )
    checkpoints.remove()
    print(f"{out / 'dev_predictions.jsonl'}: {len(dev)} documents")
    return 0


if __name__ == "__main__":
    sys.exit(run_adapter(main))
