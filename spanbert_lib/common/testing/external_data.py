"""
The real data of ``../shared/data`` for tests: found by the one resolver of the evidence harness
(:mod:`spanbert_lib.evidence.external_data`), the calling test skipped with the reason when absent.
"""

from pathlib import Path

from spanbert_lib.evidence.external_data import (  # noqa: F401  (re-exported for the tests)
    EXTERNAL_DATA_ENV,
    external_data_dir,
    external_data_root,
    missing_data_message,
)


def require_external_data(*relative_parts: str) -> Path:
    """
    The path ``<external data>/<relative_parts...>``; skips the calling test (pytest.skip)
    with the reason when the data folder or that path is missing.
    """
    import pytest

    root = external_data_dir()
    if root is None:
        pytest.skip(missing_data_message(external_data_root(), "external data"))
    path = root.joinpath(*relative_parts)
    if not path.exists():
        pytest.skip(f"external data file missing: {path}")
    return path
