"""
Locating the real data in ``../shared/data`` (LitBank, OntoNotes sample, SQuAD, TACRED,
Gutenberg). It is never copied into the repository; tests and benchmarks read it in place
and skip with a clear reason when it is absent.
"""

import os
from pathlib import Path
from typing import Optional

EXTERNAL_DATA_ENV = "SPANBERT_LIB_EXTERNAL_DATA"
_REPO_ROOT = Path(__file__).resolve().parents[3]


def external_data_dir() -> Optional[Path]:
    """``$SPANBERT_LIB_EXTERNAL_DATA`` if set, else ``<repo>/../shared/data``; None when absent."""
    configured = os.environ.get(EXTERNAL_DATA_ENV)
    candidate = Path(configured) if configured else _REPO_ROOT.parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


def require_external_data(*relative_parts: str) -> Path:
    """
    The path ``<external data>/<relative_parts...>``; skips the calling test (pytest.skip)
    with the reason when the data folder or that path is missing.
    """
    import pytest

    root = external_data_dir()
    if root is None:
        pytest.skip(
            f"external data not found: set {EXTERNAL_DATA_ENV} or place it at {_REPO_ROOT.parent / 'shared' / 'data'}"
        )
    path = root.joinpath(*relative_parts)
    if not path.exists():
        pytest.skip(f"external data file missing: {path}")
    return path
