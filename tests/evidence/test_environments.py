"""evidence.environments: a baseline's own virtual environment, made once per lock."""

import subprocess
from pathlib import Path

import pytest

from evidence import environments
from tests import REPO_ROOT


def test_the_torch_pin_comes_from_the_repository_lock():
    pinned = environments.locked_torch_requirement()
    assert pinned.startswith("torch==") and pinned in (REPO_ROOT / "requirements.lock").read_text()


def test_torch_goes_in_first_then_the_lock_without_dependencies(tmp_path, monkeypatch):
    lock = tmp_path / "baseline.lock"
    lock.write_text("six==1.17.0\n")
    torch_lock = tmp_path / "requirements.lock"
    torch_lock.write_text("numpy==2.0.0\ntorch==2.13.0\n")
    commands = []

    def fake_checked(command, lock_file, what):
        commands.append(command)
        if command[1:3] == ["-m", "venv"]:
            (Path(command[3]) / "bin").mkdir(parents=True)
            (Path(command[3]) / "bin" / "python").touch()

    monkeypatch.setattr(environments, "_checked", fake_checked)
    python = environments.ensure_environment(tmp_path / "venv", lock, torch_lock=torch_lock)
    assert python == tmp_path / "venv" / "bin" / "python"
    assert [command[1:] for command in commands[1:]] == [
        ["-m", "pip", "install", "torch==2.13.0"],
        ["-m", "pip", "install", "--no-deps", "-r", str(lock)],
    ]


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """One real environment for the tests below (made by whichever runs first: creating one takes seconds)."""
    return tmp_path_factory.mktemp("environments") / "venv"


def test_a_real_environment_is_made_once_per_lock(tmp_path, venv, monkeypatch):
    lock = tmp_path / "baseline.lock"
    lock.write_text("six==1.17.0\n")
    python = environments.ensure_environment(venv, lock, install_torch=False)
    assert python == venv / "bin" / "python"
    version = subprocess.run([str(python), "-c", "import six; print(six.__version__)"], capture_output=True, text=True)
    assert version.stdout.strip() == "1.17.0"

    def no_pip(*args, **kwargs):
        raise AssertionError("pip ran although the lock did not change")

    monkeypatch.setattr(environments, "_checked", no_pip)
    assert environments.ensure_environment(venv, lock, install_torch=False) == python  # the stamp matches

    calls = []
    monkeypatch.setattr(environments, "_checked", lambda command, lock_file, what: calls.append(command))
    lock.write_text("six==1.17.0\n# a changed lock\n")
    environments.ensure_environment(venv, lock, install_torch=False)
    assert [command[1:4] for command in calls] == [["-m", "pip", "install"]]  # the venv is kept, the lock reinstalled


def test_a_failing_install_names_the_lock_and_quotes_pip_and_leaves_no_stamp(tmp_path, venv):
    lock = tmp_path / "broken.lock"
    lock.write_text(f"{tmp_path / 'missing-1.0-py3-none-any.whl'}\n")
    with pytest.raises(environments.EnvironmentSetupError) as error:
        environments.ensure_environment(venv, lock, install_torch=False)
    message = str(error.value)
    assert str(lock) in message and "missing-1.0-py3-none-any.whl" in message  # pip's own words
    assert not (venv / environments.STAMP_NAME).exists()


def test_a_missing_lock_is_named(tmp_path):
    with pytest.raises(environments.EnvironmentSetupError, match="nowhere.lock not found"):
        environments.ensure_environment(tmp_path / "venv", tmp_path / "nowhere.lock", install_torch=False)
