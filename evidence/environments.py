"""
A baseline's own virtual environment, made from its lock file: a baseline whose pins clash with
allennlp's (fastcoref, maverick-coref, span-marker) is installed beside ``.venv``, never into it.

torch is installed first at the version pinned in the repository's ``requirements.lock``: the local
CPU wheel satisfies it, where a bare ``torch`` in a baseline's lock would pull a multi-GB CUDA build.
The rest of the lock goes in with ``--no-deps`` (a lock is closed under its dependencies). A stamp of
what was installed is kept in the environment, so an unchanged lock costs nothing the next time.
"""

import fcntl
import hashlib
import os
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, List, Optional, Union

from evidence.repository import REPO_ROOT

TORCH_LOCK = REPO_ROOT / "requirements.lock"
STAMP_NAME = ".spanbert_lib_lock_stamp"
PIP_LINES_SHOWN = 20


class EnvironmentSetupError(RuntimeError):
    """A baseline's environment could not be made; the message names the lock and quotes pip's last lines."""


def locked_torch_requirement(lock_file: Union[str, Path] = TORCH_LOCK) -> str:
    """The ``torch==X`` line of ``lock_file`` (the repository's ``requirements.lock`` by default)."""
    lock_file = Path(lock_file)
    match = re.search(r"^torch==[^\s#;]+", lock_file.read_text(), flags=re.MULTILINE)
    if match is None:
        raise EnvironmentSetupError(f"{lock_file} pins no torch version (a line `torch==X`)")
    return match.group(0)


def ensure_environment(
    venv_dir: Union[str, Path],
    lock_file: Union[str, Path],
    install_torch: bool = True,
    torch_lock: Union[str, Path] = TORCH_LOCK,
) -> Path:
    """
    The python of the virtual environment ``venv_dir`` with ``lock_file`` installed; creates it (with
    this interpreter's Python) and installs what is needed unless its stamp says the lock is already in.

    # Parameters

    venv_dir : `Union[str, Path]`
        The environment, e.g. ``.venv-baselines/fastcoref``; a relative path is taken from the repository.
    lock_file : `Union[str, Path]`
        Exact pins (``name==version`` lines), e.g. ``evidence/baselines/fastcoref.lock``; relative: from the repository.
    install_torch : `bool`, optional (default = `True`)
        Install ``torch`` at the version of ``torch_lock`` before the lock.
    torch_lock : `Union[str, Path]`, optional (default = the repository's ``requirements.lock``)
    """
    venv_dir, lock_file = _from_repo(venv_dir), _from_repo(lock_file)
    if not lock_file.is_file():
        raise EnvironmentSetupError(f"lock file {lock_file} not found")
    torch_requirement = locked_torch_requirement(_from_repo(torch_lock)) if install_torch else None
    python = venv_dir / "bin" / "python"
    stamp = _stamp(lock_file, torch_requirement)
    stamp_file = venv_dir / STAMP_NAME
    venv_dir.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(venv_dir.with_name(venv_dir.name + ".lock")):
        if python.exists() and stamp_file.exists() and stamp_file.read_text().strip() == stamp:
            return python
        if not python.exists():
            print(f"[environments] creating {venv_dir}", file=sys.stderr, flush=True)
            _checked([sys.executable, "-m", "venv", str(venv_dir)], lock_file, f"creating {venv_dir}")
        stamp_file.unlink(missing_ok=True)  # an install that fails half-way leaves no stamp
        print(f"[environments] installing {lock_file} into {venv_dir}", file=sys.stderr, flush=True)
        if torch_requirement is not None:
            _pip(python, ["install", torch_requirement], lock_file)
        _pip(python, ["install", "--no-deps", "-r", str(lock_file)], lock_file)
        stamp_file.write_text(stamp + "\n")
    return python


def _from_repo(path: Union[str, Path]) -> Path:
    path = Path(path)
    return path if path.is_absolute() else REPO_ROOT / path


def _stamp(lock_file: Path, torch_requirement: Optional[str]) -> str:
    digest = hashlib.sha256(lock_file.read_bytes())
    digest.update(f"\0{torch_requirement or ''}\0{sys.version_info[:2]}".encode())
    return digest.hexdigest()


def _pip(python: Path, arguments: List[str], lock_file: Path) -> None:
    _checked([str(python), "-m", "pip", *arguments], lock_file, f"pip {' '.join(arguments)}")


def _checked(command: List[str], lock_file: Path, what: str) -> None:
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    completed = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if completed.returncode != 0:
        tail = "\n".join("    " + line for line in completed.stdout.splitlines()[-PIP_LINES_SHOWN:])
        raise EnvironmentSetupError(
            f"environment for {lock_file}: {what} failed (exit {completed.returncode}):\n{tail}"
        )


@contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """One process at a time makes a given environment (parallel runs may ask for it together)."""
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
