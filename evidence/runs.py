"""
The one way the evidence scripts run their trainings: each :class:`Run` is a subprocess with one torch
thread and no network, its output appended to its log; :func:`run_all` runs N of them at a time and
measures each (wall seconds, CPU seconds of the process and its children, peak resident memory).

A run whose result file exists is not run again, so an interrupted script resumes where it stopped.
What was measured is kept beside the result (the run's record, JSON) with the command that produced
it: a finished run is read back with its figures, and a result left by a DIFFERENT command is an error
rather than a silent mix of two settings.
"""

import json
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from evidence.external_data import config_data_overrides
from evidence.repository import REPO_ROOT, tool
from evidence.summary import seed_overrides

LOG_LINES_SHOWN = 15


def offline_env(threads: int = 1) -> Dict[str, str]:
    """This process's environment for a process using ``threads`` torch threads that never reaches the hub."""
    return dict(
        os.environ,
        OMP_NUM_THREADS=str(threads),
        MKL_NUM_THREADS=str(threads),
        TOKENIZERS_PARALLELISM="false",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )


@dataclass
class Run:
    """
    One training (or any long command) of one system with one seed.

    # Parameters

    name : `str`
        Unique among the runs given to :func:`run_all`; shown in progress lines and errors.
    system : `str`
        Which system it trains (the scripts group results by ``(system, seed)``).
    seed : `Optional[int]`
    command : `List[str]`
        The measured command.
    log_file : `Path`
        stdout and stderr of every command, appended (each after a ``$ command`` line).
    result_file : `Path`
        What the run leaves when it succeeded; when it exists the run is skipped.
    env : `Dict[str, str]`, optional
        Variables set on top of :func:`offline_env` (one torch thread).
    then : `List[List[str]]`, optional
        Commands run after ``command`` succeeded, not measured (scoring the trained model).
    record_file : `Optional[Path]`, optional
        Where the command and its figures are kept; default ``<result stem>.run.json`` beside the result.
    cwd : `Path`, optional (default = the repository)
    """

    name: str
    system: str
    seed: Optional[int]
    command: List[str]
    log_file: Path
    result_file: Path
    env: Dict[str, str] = field(default_factory=dict)
    then: List[List[str]] = field(default_factory=list)
    record_file: Optional[Path] = None
    cwd: Path = REPO_ROOT

    @property
    def record_path(self) -> Path:
        if self.record_file is not None:
            return self.record_file
        return self.result_file.with_name(f"{self.result_file.stem}.run.json")


@dataclass
class RunResult:
    """What :func:`run_all` measured (or read back from a finished run's record; ``None`` when unknown)."""

    run: Run
    skipped: bool
    wall_seconds: Optional[float]
    cpu_seconds: Optional[float]
    max_rss_mb: Optional[float]

    def figures(self) -> Dict[str, Optional[float]]:
        return {"wall_seconds": self.wall_seconds, "cpu_seconds": self.cpu_seconds, "max_rss_mb": self.max_rss_mb}


class RunFailed(RuntimeError):
    """A run exited non-zero or left no result; the message names its log and quotes its last lines."""


def allennlp_train_run(
    system: str, seed: int, config: str, run_dir: Path, overrides: Optional[Dict[str, Any]] = None
) -> Run:
    """
    ``allennlp train CONFIG -s RUN_DIR -f`` as a :class:`Run` named after ``run_dir``: the config's data paths
    resolved against the external data folder, allennlp's three seeds set to ``seed``, then ``overrides``; its
    ``metrics.json`` is the result, its log ``RUN_DIR.log``.
    """
    all_overrides = {**config_data_overrides(REPO_ROOT / config), **seed_overrides(seed), **(overrides or {})}
    return Run(
        name=run_dir.name,
        system=system,
        seed=seed,
        command=[tool("allennlp"), "train", config, "-s", str(run_dir), "-f", "-o", json.dumps(all_overrides)],
        log_file=run_dir.with_suffix(".log"),
        result_file=run_dir / "metrics.json",
    )


def best_validation_percent(metrics: Dict[str, Any], names: Sequence[str]) -> Dict[str, float]:
    """``{name: 100 * best_validation_<name>}`` from allennlp's ``metrics.json`` of a training."""
    return {name: 100 * metrics[f"best_validation_{name}"] for name in names}


def run_all(runs: Sequence[Run], parallel: int = 1) -> List[RunResult]:
    """
    Runs every unfinished run, ``parallel`` at a time in the given order, and returns one
    :class:`RunResult` per run in that order. After a failure no new run starts; those already running
    finish (their results stay for the next attempt), then :class:`RunFailed` names every failed run's log.
    """
    names = [run.name for run in runs]
    if len(set(names)) != len(names):
        raise ValueError(f"run names must be unique: {names}")
    results: Dict[str, RunResult] = {}
    pending = []
    for run in runs:
        if finished(run):
            results[run.name] = _read_back(run)
            print(f"[runs] {run.name}: already done ({run.result_file})", flush=True)
        else:
            pending.append(run)
    failures: List[str] = []
    running: Dict[Future, Run] = {}
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        while pending or running:
            while pending and not failures and len(running) < max(1, parallel):
                run = pending.pop(0)
                print(f"[runs] {run.name}: started, log {run.log_file}", flush=True)
                running[pool.submit(_execute, run)] = run
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                run = running.pop(future)
                try:
                    results[run.name] = future.result()
                except RunFailed as error:
                    failures.append(str(error))
                    print(f"[runs] FAILED {error}", file=sys.stderr, flush=True)
                else:
                    print(f"[runs] {run.name}: done, {describe(results[run.name])}", flush=True)
    if failures:
        raise RunFailed("\n".join(failures))
    return [results[run.name] for run in runs]


def finished(run: Run) -> bool:
    """Whether the run left its result; raises when the result came from a different command."""
    if not run.result_file.exists():
        return False
    record = _load_record(run)
    if record is not None and "command" in record and record["command"] != run.command:
        raise RunFailed(
            f"{run.name}: {run.result_file} was made by another command ({shlex.join(record['command'])}); "
            f"delete it or write elsewhere to run `{shlex.join(run.command)}`"
        )
    return True


def describe(result: RunResult) -> str:
    """``"42.0 min wall, 41.5 min CPU, peak RSS 2210 MB"``."""
    parts = []
    if result.wall_seconds is not None:
        parts.append(f"{result.wall_seconds / 60:.1f} min wall")
    if result.cpu_seconds is not None:
        parts.append(f"{result.cpu_seconds / 60:.1f} min CPU")
    if result.max_rss_mb is not None:
        parts.append(f"peak RSS {result.max_rss_mb:.0f} MB")
    return ", ".join(parts) or "no figures recorded"


def _execute(run: Run) -> RunResult:
    run.log_file.parent.mkdir(parents=True, exist_ok=True)
    env = dict(offline_env(), **run.env)
    started = time.monotonic()
    usage = _measured(run, run.command, env)
    wall_seconds = time.monotonic() - started
    for command in run.then:
        _measured(run, command, env)
    if not run.result_file.exists():
        raise RunFailed(f"{run.name}: finished without writing {run.result_file}; see {run.log_file}")
    result = RunResult(
        run,
        skipped=False,
        wall_seconds=round(wall_seconds, 1),
        cpu_seconds=round(usage.cpu_seconds, 1),
        max_rss_mb=round(usage.max_rss_mb, 1),
    )
    run.record_path.parent.mkdir(parents=True, exist_ok=True)
    run.record_path.write_text(json.dumps({"command": run.command, **result.figures()}, indent=2) + "\n")
    return result


# The measured command is started by this small stdlib-only interpreter (``-S``: no site-packages),
# which reports its usage: a process started directly from a script inherits the script's peak RSS
# at exec (Linux keeps the larger of the two), which would hide the command's own.
_MEASURE = """
import json, os, signal, subprocess, sys
process = subprocess.Popen(sys.argv[2:])
signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the command; wait for it to stop
_, status, usage = os.wait4(process.pid, 0)
with open(sys.argv[1], "w") as handle:
    json.dump({"cpu_seconds": usage.ru_utime + usage.ru_stime, "max_rss_kb": usage.ru_maxrss}, handle)
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


@dataclass
class _Usage:
    cpu_seconds: float
    max_rss_mb: float


def _measured(run: Run, command: List[str], env: Dict[str, str]) -> _Usage:
    """Runs ``command`` into the run's log; CPU seconds of it and of the children it waited for, peak RSS."""
    usage_file = run.log_file.with_name(f".{run.log_file.name}.usage.json")
    with open(run.log_file, "a") as log:
        log.write(f"$ {shlex.join(command)}\n")
        log.flush()
        wrapped = [sys.executable, "-S", "-c", _MEASURE, str(usage_file), *command]
        code = subprocess.run(wrapped, cwd=run.cwd, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    if code != 0:
        usage_file.unlink(missing_ok=True)
        raise RunFailed(
            f"{run.name}: `{shlex.join(command)}` exited {code}; see {run.log_file}:\n" + _tail(run.log_file)
        )
    usage = json.loads(usage_file.read_text())
    usage_file.unlink()
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return _Usage(cpu_seconds=usage["cpu_seconds"], max_rss_mb=usage["max_rss_kb"] / scale)


def _read_back(run: Run) -> RunResult:
    record = _load_record(run) or {}
    return RunResult(
        run,
        skipped=True,
        wall_seconds=record.get("wall_seconds"),
        cpu_seconds=record.get("cpu_seconds"),
        max_rss_mb=record.get("max_rss_mb"),
    )


def _load_record(run: Run) -> Optional[Dict[str, Any]]:
    if not run.record_path.exists():
        return None
    return json.loads(run.record_path.read_text())


def _tail(path: Path) -> str:
    lines = path.read_text(errors="replace").splitlines()[-LOG_LINES_SHOWN:]
    return "\n".join("    " + line for line in lines)
