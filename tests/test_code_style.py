"""The code is formatted and linted by ruff as pyproject.toml configures it (as .pre-commit-config.yaml does)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import REPO_ROOT

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff(command):
    assert RUFF is not None, "ruff is not installed: it is pinned in requirements.lock (bash scripts/bootstrap.sh)"
    completed = subprocess.run([RUFF, *command, "."], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, f"ruff {' '.join(command)} found problems:\n{completed.stdout}{completed.stderr}"
