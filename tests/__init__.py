"""
What the tests share, in one place: where the checkout is (:data:`REPO_ROOT`), the committed tiny BERT
(:data:`TINY_BERT_DIR`), the real data beside the checkout (:func:`require_external_data`) and the ``allennlp``
command of this environment (:func:`run_allennlp`). Fixtures and hooks live in ``conftest.py``.

Everything runs offline on the CPU: no hub downloads, tiny local models.
"""

import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

from evidence.external_data import external_data_dir, external_data_root, missing_data_message

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = Path(__file__).resolve().parents[1]
TINY_BERT_DIR = REPO_ROOT / "fixtures" / "tiny_bert"
"""The committed tiny BERT (config, safetensors weights, WordPiece tokenizer files)."""


REQUIRE_EXTERNAL_DATA = "SPANBERT_LIB_REQUIRE_EXTERNAL_DATA"
"""Set to 1 (CI does), a test that needs the data folder fails when it is missing instead of being skipped."""


def require_external_data(*relative_parts: str) -> Path:
    """
    The path ``<external data>/<relative_parts...>`` (the harness's one resolver, :mod:`evidence.external_data`);
    skips the calling test (``pytest.skip``) with the reason when the data folder or that path is missing, or fails
    it when ``$SPANBERT_LIB_REQUIRE_EXTERNAL_DATA`` is 1.
    """
    import pytest

    missing = pytest.fail if os.environ.get(REQUIRE_EXTERNAL_DATA, "").strip() == "1" else pytest.skip
    root = external_data_dir()
    if root is None:
        missing(missing_data_message(external_data_root(), "external data"))
    path = root.joinpath(*relative_parts)
    if not path.exists():
        missing(f"external data file missing: {path}")
    return path


def run_allennlp(args: List[str], cwd: Optional[Path] = None, timeout: int = 300) -> subprocess.CompletedProcess:
    """Runs ``allennlp ARGS`` of this environment as a subprocess; fails the test with its output on error."""
    import pytest

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
