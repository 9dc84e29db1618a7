"""
A usable model in one command: trains the LitBank coreference and span-NER models from the shipped configs into
``models/litbank_coref/`` and ``models/litbank_ner/`` (``model.tar.gz`` beside the run's checkpoints and logs),
with one progress bar, says how long it will take before it starts and prints the dev scores and the time taken.

    bash scripts/models.sh coref|ner|all          # (creates the environment, then runs this module)
    python -m evidence.litbank_models coref|ner|all [--force] [--record-results]

LitBank is read from the data folder the project uses (``$SPANBERT_LIB_EXTERNAL_DATA``, default
``../shared/data``): ``coref/litbank/*.conll`` and ``ner/litbank/*.tsv``. Where to get it: docs/data.md. The split
is the configs' own (files sorted by name: the first 70 train, the next 10 are dev). On a machine with a GPU
the training uses it.

The time said before training is the last run's on this machine (``models/TASK/training.json``), else the
run recorded in ``results/litbank_models.json`` (``--record-results`` writes it).
"""

import argparse
import json
import os
import platform
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Dict, Iterator, List, Optional

from evidence.external_data import config_data_overrides, external_path, missing_data_message
from evidence.repository import REPO_ROOT

RESULTS_FILE = REPO_ROOT / "results" / "litbank_models.json"
MODELS_DIR = REPO_ROOT / "models"
LITBANK_SOURCE = "https://github.com/dbamman/litbank (CC BY 4.0): see docs/data.md"


@dataclass(frozen=True)
class LitBankModel:
    """One model this command trains."""

    task: str
    title: str
    config: str
    data: str
    """The LitBank folder under the data folder."""
    scores: Dict[str, str]
    """Metric of ``metrics.json`` (without ``best_validation_``) -> how the summary names it."""

    @property
    def directory(self) -> Path:
        return MODELS_DIR / f"litbank_{self.task}"


MODELS = {
    "coref": LitBankModel(
        "coref",
        "coreference",
        "training_configs/coref/litbank_minilm.jsonnet",
        "coref/litbank",
        {"conll_f1": "CoNLL F1", "muc_f1": "MUC", "bcub_f1": "B3", "ceafe_f1": "CEAFe"},
    ),
    "ner": LitBankModel(
        "ner",
        "span NER",
        "training_configs/ner/litbank_minilm.jsonnet",
        "ner/litbank",
        {"f1": "F1", "precision": "P", "recall": "R"},
    ),
}


def machine() -> str:
    import torch

    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"{os.cpu_count()} CPU cores"
    return f"{platform.system()} {platform.machine()}, {device}, torch {torch.__version__}"


def shown(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it."""
    return os.path.relpath(path) if Path(path).resolve().is_relative_to(Path.cwd().resolve()) else str(path)


def _read_json(path: Path) -> Optional[dict]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def expected_seconds(model: LitBankModel) -> Optional[tuple]:
    """``(seconds, where it was measured)`` of the last run here, else of the recorded one; None when neither."""
    here = _read_json(model.directory / "training.json")
    if here and "seconds" in here:
        return here["seconds"], f"the last run on this machine ({here.get('machine', '?')})"
    recorded = (_read_json(RESULTS_FILE) or {}).get("runs", {}).get(model.task)
    if recorded:
        return recorded["seconds"], f"measured on {recorded['machine']}"
    return None


def announce(model: LitBankModel) -> None:
    expected = expected_seconds(model)
    cost = f"about {expected[0] / 60:.0f} minutes ({expected[1]})" if expected else "a quarter of an hour on a CPU"
    print(f"{model.title}: {model.config} on LitBank {model.data} -> {shown(model.directory)}/")
    print(f"  this takes {cost}", flush=True)


@contextmanager
def one_progress_bar(title: str) -> Iterator[None]:
    """
    While training: allennlp's own bars (reading, every epoch's batches, validation) stay silent and its log goes to
    the run's ``out.log`` only, and one bar counts the training batches of all epochs.
    """
    import logging

    from allennlp.common import logging as common_logging
    from allennlp.common.tqdm import Tqdm
    from allennlp.training.callbacks.callback import TrainerCallback
    from allennlp.training.gradient_descent_trainer import GradientDescentTrainer
    from tqdm import tqdm

    original_tqdm, original_logging, original_init = Tqdm.tqdm, common_logging.prepare_global_logging, None
    bar: List[tqdm] = []

    class OneBar(TrainerCallback):
        def on_start(self, trainer, is_primary: bool = True, **_) -> None:
            try:
                total = trainer._num_epochs * len(trainer.data_loader)
            except TypeError:
                total = None
            bar.append(tqdm(total=total, desc=title, unit="batch", dynamic_ncols=True))

        def on_batch(self, trainer, batch_inputs, batch_outputs, batch_metrics, epoch, batch_number, is_training,
                     is_primary: bool = True, **_) -> None:  # fmt: skip
            if is_training and bar:
                bar[0].update(1)

        def on_epoch(self, trainer, metrics, epoch, is_primary: bool = True, **_) -> None:
            if bar:
                shown = {k[len("validation_") :]: v for k, v in metrics.items() if k.startswith("validation_")}
                key = next((k for k in ("conll_f1", "f1") if k in shown), None)
                if key is not None:
                    bar[0].set_postfix({f"dev {key}": f"{shown[key]:.3f}", "epoch": epoch + 1})

        def on_end(self, trainer, metrics=None, epoch=None, is_primary: bool = True, **_) -> None:
            if bar:
                bar[0].close()

    def quiet_logging(*args, **kwargs):
        original_logging(*args, **kwargs)
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
                handler.setLevel(logging.ERROR if handler.stream is sys.stdout else handler.level)

    def with_one_bar(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self._callbacks.append(OneBar(self._serialization_dir))

    original_init = GradientDescentTrainer.__init__
    Tqdm.tqdm = staticmethod(lambda *args, **kwargs: tqdm(*args, **{**kwargs, "disable": True}))
    common_logging.prepare_global_logging = quiet_logging
    GradientDescentTrainer.__init__ = with_one_bar
    try:
        yield
    finally:
        Tqdm.tqdm = original_tqdm
        common_logging.prepare_global_logging = original_logging
        GradientDescentTrainer.__init__ = original_init
        for opened in bar:
            opened.close()


def train(model: LitBankModel, force: bool) -> Optional[dict]:
    """Trains ``model`` (unless its archive exists and not ``force``); returns its record, or None when skipped."""
    import torch
    from allennlp.commands.train import train_model_from_file

    import spanbert_lib.plugin  # noqa: F401  (the components the configs name)

    archive = model.directory / "model.tar.gz"
    if archive.exists() and not force:
        print(f"  {shown(archive)} exists; --force trains it again")
        return None
    overrides = config_data_overrides(REPO_ROOT / model.config)
    if torch.cuda.is_available():
        overrides["trainer.cuda_device"] = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    with one_progress_bar(model.title):
        train_model_from_file(
            str(REPO_ROOT / model.config), str(model.directory), overrides=json.dumps(overrides), force=True
        )
    metrics = _read_json(model.directory / "metrics.json") or {}
    record = {
        "seconds": round(time.perf_counter() - start, 1),
        "process_cpu_seconds": round(time.process_time() - cpu_start, 1),
        "machine": machine(),
        "date": date.today().isoformat(),
        "config": model.config,
        "dev": {name: metrics.get(f"best_validation_{metric}") for metric, name in model.scores.items()},
        "best_epoch": metrics.get("best_epoch"),
    }
    (model.directory / "training.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def report(model: LitBankModel, record: dict) -> None:
    scores = ", ".join(f"{name} {value * 100:.1f}" for name, value in record["dev"].items() if value is not None)
    print(f"  dev (LitBank documents 70-79): {scores}")
    print(f"  took {record['seconds'] / 60:.1f} minutes; the model: {shown(model.directory / 'model.tar.gz')}")


def record_results(records: Dict[str, dict]) -> None:
    """Adds the runs to ``results/litbank_models.json`` (what the docs and the next estimate read)."""
    results = _read_json(RESULTS_FILE) or {"title": "The LitBank models of bash scripts/models.sh", "runs": {}}
    results["command"] = "bash scripts/models.sh all (python -m evidence.litbank_models all --record-results)"
    results["runs"].update(records)
    results["tables"] = {
        "models": {
            "columns": ["model", "config", "dev", "minutes", "machine"],
            "rows": [
                [
                    MODELS[task].title,
                    run["config"],
                    ", ".join(f"{k} {v * 100:.1f}" for k, v in run["dev"].items() if v is not None),
                    round(run["seconds"] / 60, 1),
                    run["machine"],
                ]
                for task, run in sorted(results["runs"].items())
            ],
        }
    }
    RESULTS_FILE.parent.mkdir(exist_ok=True)
    RESULTS_FILE.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", choices=["coref", "ner", "all"], help="which model to train")
    parser.add_argument("--force", action="store_true", help="train again when the model exists")
    parser.add_argument("--record-results", action="store_true", help=f"add the runs to {RESULTS_FILE.name}")
    args = parser.parse_args(argv)
    chosen = [MODELS[task] for task in (["coref", "ner"] if args.tasks == "all" else [args.tasks])]
    for model in chosen:
        data = external_path(model.data)
        if not data.is_dir():
            print(f"error: {missing_data_message(data, 'LitBank')}; get it from {LITBANK_SOURCE}", file=sys.stderr)
            return 1
    records = {}
    for model in chosen:
        announce(model)
        record = train(model, args.force)
        if record is not None:
            report(model, record)
            records[model.task] = record
    if args.record_results and records:
        record_results(records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
