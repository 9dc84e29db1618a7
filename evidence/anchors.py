"""
What the side-by-side scripts share about today's tools (the "anchors": fastcoref, maverick-coref, span-marker): their
virtual environment, made from its own lock file, and LitBank exported as neutral files for them
(``python -m evidence.baselines.litbank_export``).
"""

import json
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

from evidence.environments import EnvironmentSetupError, ensure_environment
from evidence.repository import REPO_ROOT, module_command

BASELINES = REPO_ROOT / "evidence" / "baselines"
ANCHORS_ENVIRONMENT, ANCHORS_LOCK = ".venv-baselines/anchors", "evidence/baselines/anchors.lock"
ANCHORS_PYTHON = REPO_ROOT / ANCHORS_ENVIRONMENT / "bin" / "python"


def anchors_python() -> Optional[str]:
    """The anchors' interpreter, making the environment when missing; None (and one line said) when it cannot."""
    try:
        return str(ensure_environment(ANCHORS_ENVIRONMENT, ANCHORS_LOCK))
    except (EnvironmentSetupError, OSError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(f"anchors not run: their environment {ANCHORS_ENVIRONMENT} cannot be made ({first})", flush=True)
        return None


def last_line(completed: subprocess.CompletedProcess) -> str:
    """The last line a finished command wrote (its error, usually)."""
    lines = (completed.stderr or completed.stdout or "").strip().splitlines()
    return lines[-1] if lines else f"exit {completed.returncode}"


def ensure_litbank_export(data: Path, train_files: str, dev_files: str, needed: Sequence[str]) -> None:
    """
    ``litbank_export.py``'s files for the ``train_files`` / ``dev_files`` slices in ``data``: exported when one of
    ``needed`` is missing; a folder exported for other slices is refused (one line, exit).
    """
    manifest = data / "export.json"
    if manifest.exists():
        exported = json.loads(manifest.read_text())
        if (exported.get("train"), exported.get("dev")) != (train_files, dev_files):
            sys.exit(
                f"error: {data} holds LitBank files {exported.get('train')} / {exported.get('dev')}, not "
                f"{train_files} / {dev_files}; give another --data"
            )
        if all((data / name).exists() for name in needed):
            return
    command = [*module_command("evidence.baselines.litbank_export"), "--out", str(data)]
    command += ["--train", train_files, "--dev", dev_files]
    print(f"exporting LitBank {train_files} / {dev_files} to {data}", flush=True)
    completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True)
    if completed.returncode != 0:
        sys.exit(f"error: litbank_export.py failed: {last_line(completed)}")
