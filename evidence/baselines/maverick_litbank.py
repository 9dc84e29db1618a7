"""
Maverick (Martinelli et al., ACL 2024; PyPI ``maverick-coref`` 1.0.7), its default ``mes`` model (mention extraction,
then multi-expert antecedent scorers), trained on LitBank from the MiniLM encoder and run on the dev documents with
singletons predicted (its LitBank mode). Runs in the anchors' environment (``.venv-baselines/anchors``, README.md):

    .venv-baselines/anchors/bin/python evidence/baselines/maverick_litbank.py \
        --train DATA/coref_train.jsonl --dev DATA/coref_dev.jsonl --encoder pretrained/all-MiniLM-L6-v2 \
        --epochs 6 --seed 1 --out RUN

Writes ``RUN/dev_predictions.jsonl`` (``{"doc_key", "clusters": [[[start, end], ...], ...]}``, inclusive word
offsets, predicted singletons included), ``RUN/prediction_seconds.json``, ``RUN/run.json`` and the trained model as
``RUN/model/weights.ckpt`` (the Lightning checkpoint, weights and hyper-parameters, that
``Maverick(hf_name_or_path=RUN/model)`` loads; checked by loading it back that way and comparing every tensor;
``maverick_inference.py`` runs it).

Training is Maverick's own: its data module and dataset (``OntonotesDataset`` over the JSONL), its Lightning module
(``BasePLModule``: Adafactor, encoder lr 2e-5 / head lr 3e-4, 10 % linear warm-up then decay) and the trainer settings
of its ``default_train.yaml`` (batches of one document, gradients accumulated over 4, clipped at 1.0, seeded,
deterministic), configured by ``maverick_litbank.yaml`` (the wheel ships no config); prediction is its
``Maverick.predict`` on the sentence-split dev documents with ``singletons=True``. What differs, and why, is said in
``maverick_litbank.yaml`` and ``maverick_segments.py`` (512-position segments for MiniLM).
"""

import math
import os
import shutil
import sys
from pathlib import Path
from typing import Dict, List

from anchor_common import (
    LearningCurve,
    Stopwatch,
    base_parser,
    check_inputs,
    check_same_tensors,
    finish,
    limit_memory,
    offline_environment,
    read_jsonl,
    require_modules,
    run_adapter,
    seed_everything,
    write_jsonl,
)
from maverick_inference import CHECKPOINT, load_maverick

HERE = Path(__file__).resolve().parent  # maverick_litbank.yaml; also on sys.path, for maverick_segments
ACCUMULATE = 4  # default_train.yaml's accumulate_grad_batches


def configuration(args, out: Path, train_documents: int):
    """The Hydra config (``maverick_litbank.yaml``) with this run's values; Hydra's runtime is initialised, as
    Maverick's dataset reads paths relative to ``hydra.utils.get_original_cwd()``."""
    from hydra import compose, initialize_config_dir
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    with initialize_config_dir(config_dir=str(HERE), version_base=None):
        hydra_config = compose(config_name="maverick_litbank", return_hydra_config=True)
    HydraConfig.instance().set_config(hydra_config)
    cwd = hydra_config.hydra.runtime.cwd
    conf = OmegaConf.load(HERE / "maverick_litbank.yaml")
    cache = out / "maverick_processed"
    shutil.rmtree(cache, ignore_errors=True)  # Maverick reuses a processed dataset it finds there
    steps = math.ceil(train_documents / ACCUMULATE) * math.ceil(args.epochs)
    dataset = conf.data.datamodule.dataset
    conf.seed, conf.encoder = args.seed, os.path.abspath(args.encoder)
    dataset.train.path = os.path.relpath(args.train, cwd)
    dataset.train.processed_dataset_path = os.path.relpath(cache / "train", cwd)
    dataset.val.path = os.path.relpath(args.dev, cwd)
    dataset.val.processed_dataset_path = os.path.relpath(cache / "val", cwd)
    conf.model.module.lr_scheduler.num_training_steps = steps
    conf.model.module.lr_scheduler.num_warmup_steps = int(0.1 * steps)
    conf.train.pl_trainer.max_epochs = math.ceil(args.epochs)
    return conf


def loss_recorder():
    import pytorch_lightning as pl

    class EpochLosses(pl.Callback):
        """Mean training loss (start + mention + coreference) of each epoch."""

        def __init__(self) -> None:
            self.epochs, self._current = [], []

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
            loss = outputs["loss"] if isinstance(outputs, dict) else outputs
            self._current.append(float(loss))

        def on_train_epoch_end(self, trainer, pl_module) -> None:
            self.epochs.append(round(sum(self._current) / max(len(self._current), 1), 4))
            self._current = []
            print(f"epoch {len(self.epochs)}: mean training loss {self.epochs[-1]}", flush=True)

    return EpochLosses()


def curve_follower(curve: LearningCurve):
    import pytorch_lightning as pl

    class FollowCurve(pl.Callback):
        """The learning curve's dev prediction at the end of its epochs (the module back in training mode after)."""

        def on_train_epoch_end(self, trainer, pl_module) -> None:
            curve.after(trainer.current_epoch + 1)
            pl_module.train()

    return FollowCurve()


def train(conf, args, out: Path, dev):
    import hydra
    import pytorch_lightning as pl

    pl.seed_everything(conf.seed, workers=True)
    data_module = hydra.utils.instantiate(conf.data.datamodule, _recursive_=False)
    data_module.prepare_data()
    data_module.setup("fit")
    module = hydra.utils.instantiate(conf.model.module, _recursive_=False)
    losses = loss_recorder()
    epochs = conf.train.pl_trainer.max_epochs
    curve = LearningCurve(out, args.curve_every, epochs, lambda: dev_records(module, conf.encoder, dev, args))
    callbacks = [losses, curve_follower(curve)] if args.curve_every else [losses]
    trainer = hydra.utils.instantiate(conf.train.pl_trainer, callbacks=callbacks)
    # from_pretrained leaves the encoder in eval mode, and Lightning 2.x no longer switches submodules to train
    # mode (the Lightning Maverick was written for did): without this the encoder would train without dropout
    module.train()
    trainer.fit(module, datamodule=data_module)
    return trainer, module, losses.epochs, curve


def dev_records(module, encoder: str, dev, args) -> List[Dict]:
    """``{"doc_key", "clusters"}`` per dev document (Maverick's ``predict``, its word offsets)."""
    inference = predictor(module, encoder)
    return [
        {
            "doc_key": document["doc_key"],
            "clusters": [
                [list(span) for span in cluster]
                for cluster in inference.predict(document["sentences"], singletons=not args.no_singletons)[
                    "clusters_token_offsets"
                ]
            ],
        }
        for document in dev
    ]


def save_model(trainer, module, model_dir: Path) -> Dict:
    """The trained module saved as the Lightning checkpoint Maverick's own loader reads (weights and
    hyper-parameters, no optimizer state), then loaded back with ``Maverick(hf_name_or_path=model_dir)`` and compared
    tensor by tensor."""
    import torch
    from omegaconf import OmegaConf

    model_dir.mkdir(parents=True, exist_ok=True)
    path = str(model_dir / CHECKPOINT)
    trainer.save_checkpoint(path, weights_only=True)
    # Lightning keeps the Hydra config objects among the hyper-parameters, which torch >= 2.6's default safe
    # loading (what Maverick's loader gets) refuses: store them as plain dicts and lists
    checkpoint = torch.load(path, map_location="cpu", weights_only=False)  # the file just written
    checkpoint["hyper_parameters"] = OmegaConf.to_container(
        OmegaConf.create(dict(checkpoint["hyper_parameters"])), resolve=True
    )
    torch.save(checkpoint, path)
    loaded = load_maverick(model_dir)
    check_same_tensors(module.model.state_dict(), loaded.model.state_dict(), model_dir)
    return {"path": str(model_dir), "loaded_with": "maverick.Maverick"}


def predictor(module, encoder: str):
    """Maverick's own inference object around the trained model (its constructor would load a checkpoint)."""
    from maverick import Maverick
    from transformers import AutoTokenizer

    inference = Maverick.__new__(Maverick)
    inference.device = "cpu"
    inference.model = module.model.eval()
    tokenizer = AutoTokenizer.from_pretrained(encoder, use_fast=True, add_prefix_space=True)
    tokenizer.add_special_tokens({"additional_special_tokens": ["[SPEAKER_START]", "[SPEAKER_END]"]})
    inference.tokenizer = tokenizer
    return inference


def main() -> int:
    parser = base_parser(__doc__.strip().split("\n\n")[0])
    parser.add_argument("--no-singletons", action="store_true", help="predict clusters of 2+ mentions only")
    args = parser.parse_args()
    check_inputs(args)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    offline_environment(out / "hf_datasets_cache")
    limit_memory(args.memory_limit_gb)
    require_modules("maverick-coref", ["maverick", "hydra", "pytorch_lightning"])
    seed_everything(args.seed)
    train_documents = len(read_jsonl(args.train))
    conf = configuration(args, out, train_documents)
    dev = read_jsonl(args.dev)
    stopwatch = Stopwatch()
    with stopwatch.measure("training"):
        trainer, module, losses, curve = train(conf, args, out, dev)
    stopwatch.records["training"] = curve.deduct(stopwatch.records["training"])
    with stopwatch.measure("prediction"):
        records = dev_records(module, conf.encoder, dev, args)
    saved = save_model(trainer, module, out / "model")
    write_jsonl(out / "dev_predictions.jsonl", records)
    finish(
        out,
        stopwatch,
        len(dev),
        {
            "system": "maverick-coref 1.0.7, Maverick_mes over 512-position segments",
            "encoder": conf.encoder,
            "epochs": args.epochs,
            "seed": args.seed,
            "singletons": not args.no_singletons,
            "training_documents": train_documents,
            "optimizer_steps": conf.model.module.lr_scheduler.num_training_steps,
            "epoch_losses": losses,
            "learning_curve": curve.record(),
            "model": saved,
        },
    )
    print(f"{out / 'dev_predictions.jsonl'}: {len(dev)} documents")
    return 0


if __name__ == "__main__":
    sys.exit(run_adapter(main))
