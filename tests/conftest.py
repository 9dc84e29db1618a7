"""
Shared test set-up. Everything runs offline on the CPU: no hub downloads, tiny local models.
"""

import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

if os.environ.get("PYTEST_XDIST_WORKER"):
    # One torch thread per pytest-xdist worker (and per CLI subprocess it starts): with a worker
    # per core, more threads only oversubscribe the CPU.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch  # noqa: E402

    torch.set_num_threads(1)

import spanbert_lib.plugin  # noqa: E402,F401  (registers every component, as the CLI plugin does)

REPO_ROOT = Path(__file__).resolve().parents[1]
TINY_BERT_DIR = REPO_ROOT / "fixtures" / "tiny_bert"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def tiny_bert_dir() -> Path:
    """The committed tiny BERT (config, safetensors weights, WordPiece tokenizer files)."""
    return TINY_BERT_DIR


def run_allennlp(args: List[str], cwd: Optional[Path] = None, timeout: int = 300) -> subprocess.CompletedProcess:
    """Runs ``allennlp ARGS`` of this environment as a subprocess; fails the test with its output on error."""
    executable = Path(sys.executable).with_name("allennlp")
    completed = subprocess.run(
        [str(executable), *args],
        cwd=str(cwd or REPO_ROOT),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )
    if completed.returncode != 0:
        pytest.fail(
            f"allennlp {' '.join(args)} exited {completed.returncode}\n"
            f"--- stdout ---\n{completed.stdout[-4000:]}\n--- stderr ---\n{completed.stderr[-8000:]}"
        )
    return completed


def pytest_collection_modifyitems(config, items):
    import torch

    if not torch.cuda.is_available():
        skip_gpu = pytest.mark.skip(reason="needs a CUDA device")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip_gpu)
