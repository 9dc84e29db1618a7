"""
The tiny trained archives the cases run against, trained once per test run from the fixture configs (a few seconds
each) and shared by the pytest-xdist workers (the first trains under a file lock, the others wait and reuse):
SQuAD 1.1 QA, coreference, and a QA model whose configuration names a copy of the tiny BERT beside it (cases
aimed at the Hugging Face folder a config names must never aim at the repository's fixtures).
"""

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from tests import REPO_ROOT, TINY_BERT_DIR
from tests.failure_sweep.running import run_forked

CONFIGS = REPO_ROOT / "fixtures" / "configs"
QA_CONFIG = CONFIGS / "qa" / "squad11_tiny.jsonnet"
COREF_CONFIG = CONFIGS / "coref" / "spanbert_coref_tiny.jsonnet"


@dataclass(frozen=True)
class Archives:
    """The shared serialization directories (each holds its ``model.tar.gz``)."""

    root: Path
    qa_run: Path
    coref_run: Path
    own_encoder_run: Path
    """QA trained on :attr:`own_encoder`, the folder its config names as ``model_name``."""
    own_encoder: Path

    @property
    def qa(self) -> Path:
        return self.qa_run / "model.tar.gz"

    @property
    def coref(self) -> Path:
        return self.coref_run / "model.tar.gz"

    @property
    def own_encoder_archive(self) -> Path:
        return self.own_encoder_run / "model.tar.gz"


def own_encoder_overrides(encoder: Path) -> dict:
    """Overrides pointing the QA fixture config's reader and encoder at ``encoder``."""
    return {"dataset_reader.model_name": str(encoder), "model.encoder.model_name": str(encoder)}


def _train(config: Path, directory: Path, overrides: dict) -> None:
    outcome = run_forked(
        ["train", str(config), "-s", str(directory), "-f", "-o", json.dumps(overrides)],
        timeout=600,
        log_dir=directory.parent.parent / "logs" / directory.name,
    )
    if outcome.code != 0 or not (directory / "model.tar.gz").exists():
        raise RuntimeError(f"training {directory.name} failed (exit {outcome.code}):\n{outcome.tail()}")


def shared_archives(base: Path) -> Archives:
    """
    The archives under ``base`` (pytest's base temporary directory; its parent under pytest-xdist), trained when
    missing.
    """
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "failure_sweep_archives"
    shared.mkdir(exist_ok=True)
    archives = Archives(
        root=shared / "archives",
        qa_run=shared / "archives" / "qa",
        coref_run=shared / "archives" / "coref",
        own_encoder_run=shared / "archives" / "qa_own_encoder",
        own_encoder=shared / "archives" / "tiny_bert_copy",
    )
    with FileLock(str(shared / "lock")):
        if not (archives.own_encoder / "config.json").exists():
            shutil.rmtree(archives.own_encoder, ignore_errors=True)
            shutil.copytree(TINY_BERT_DIR, archives.own_encoder)
        runs = {
            archives.qa_run: (QA_CONFIG, {"trainer.num_epochs": 1}),
            archives.coref_run: (COREF_CONFIG, {"trainer.num_epochs": 1}),
            archives.own_encoder_run: (
                QA_CONFIG,
                {"trainer.num_epochs": 1, **own_encoder_overrides(archives.own_encoder)},
            ),
        }
        for directory, (config, overrides) in runs.items():
            if not (directory / "model.tar.gz").exists():
                _train(config, directory, overrides)
    return archives
