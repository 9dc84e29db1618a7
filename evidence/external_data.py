"""
THE location of the real data (LitBank, OntoNotes sample, SQuAD, TACRED, SemEval-2010, Gutenberg):
``$SPANBERT_LIB_EXTERNAL_DATA`` when set, else ``<repo>/../shared/data``. It is never copied into the
repository; scripts, benchmarks and tests read it in place (tests skip through
``tests.require_external_data``, scripts exit through :func:`require`).
"""

import json
import os
import sys
from pathlib import Path
from typing import Dict, Optional, Union

from evidence.repository import REPO_ROOT

EXTERNAL_DATA_ENV = "SPANBERT_LIB_EXTERNAL_DATA"
DEFAULT_EXTERNAL_DATA = REPO_ROOT.parent / "shared" / "data"
CONFIG_PREFIX = "../shared/data/"  # how training configs name the data (relative to the repository)
DATA_PATH_KEYS = ("train_data_path", "validation_data_path", "test_data_path")


def external_data_root() -> Path:
    """``$SPANBERT_LIB_EXTERNAL_DATA`` if set, else ``<repo>/../shared/data``, whether or not it exists."""
    configured = os.environ.get(EXTERNAL_DATA_ENV)
    return Path(configured) if configured else DEFAULT_EXTERNAL_DATA


def external_data_dir() -> Optional[Path]:
    """:func:`external_data_root` when it is a folder, else None."""
    root = external_data_root()
    return root if root.is_dir() else None


def external_path(relative_path: Union[str, Path]) -> Path:
    """``<external data>/relative_path`` (``"coref/litbank"``), whether or not it exists."""
    return external_data_root() / relative_path


def missing_data_message(path: Path, what: str) -> str:
    return f"{what} not found at {path} (set {EXTERNAL_DATA_ENV}, default {DEFAULT_EXTERNAL_DATA})"


def require(relative_path: Union[str, Path], what: str) -> Path:
    """
    ``<external data>/relative_path``; when it does not exist, exits the script with one line on
    stderr naming ``what``, the path and how to point elsewhere (exit status 1).
    """
    path = external_path(relative_path)
    if not path.exists():
        sys.exit(f"error: {missing_data_message(path, what)}")
    return path


def config_data_overrides(config_file: Union[str, Path]) -> Dict[str, str]:
    """
    allennlp overrides pointing the config's ``*_data_path`` entries written ``../shared/data/X#...``
    at ``<external data>/X#...``, so a training reads the data this module resolves.
    """
    import _jsonnet  # allennlp's jsonnet binding; only the scripts that train need it

    config = json.loads(_jsonnet.evaluate_file(str(config_file), ext_vars=dict(os.environ)))
    return {
        key: str(external_path(config[key][len(CONFIG_PREFIX) :]))
        for key in DATA_PATH_KEYS
        if isinstance(config.get(key), str) and config[key].startswith(CONFIG_PREFIX)
    }
