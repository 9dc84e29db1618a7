"""
How every benchmark measures: wall and CPU seconds of a callable (one call, or the best of several), the peak
resident memory of this process or of a child process, and ratios, formatted one way.

Standard library only, and nothing imported at module level but the standard library: the measuring side of
some benchmarks runs in another environment (the anchors' interpreter) or in a bare ``python -c`` child.
"""

import math
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence, Union

# ru_maxrss is in bytes on macOS, in KiB on Linux
_MAXRSS_PER_MB = 1024 * 1024 if sys.platform == "darwin" else 1024


@dataclass
class Timing:
    """
    Seconds of a timed call (or the best of several calls: each figure is its own minimum).

    # Parameters

    wall_seconds : `float`
    cpu_seconds : `float`
        CPU time of this whole process (every thread) during the call.
    result : `Any`
        What the (last) call returned.
    """

    wall_seconds: float
    cpu_seconds: float
    result: Any = None


def time_call(function: Callable[[], Any], synchronize: Optional[Callable[[], None]] = None) -> Timing:
    """
    One call of ``function()``, timed.

    # Parameters

    function : `Callable[[], Any]`
    synchronize : `Optional[Callable[[], None]]`, optional (default = `None`)
        Called after ``function`` and inside the timing, e.g. ``torch.cuda.synchronize`` so that queued GPU
        work is counted.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    if synchronize is not None:
        synchronize()
    return Timing(time.perf_counter() - wall, time.process_time() - cpu, result)


def best_of(
    function: Callable[[], Any],
    repeats: int,
    warm_up: bool = True,
    synchronize: Optional[Callable[[], None]] = None,
) -> Timing:
    """
    The best (smallest) wall and CPU seconds of ``repeats`` timed calls of ``function()``, and the last call's
    result.

    # Parameters

    function : `Callable[[], Any]`
    repeats : `int`
        Timed calls, at least 1.
    warm_up : `bool`, optional (default = `True`)
        Call ``function`` once untimed first (lazy initialisation, kernel choice, memory pools).
    synchronize : `Optional[Callable[[], None]]`, optional (default = `None`)
        As in :func:`time_call`; also after the warm-up.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if warm_up:
        function()
        if synchronize is not None:
            synchronize()
    best = Timing(math.inf, math.inf)
    for _ in range(repeats):
        best.result = None  # one result alive at a time: a result held over would count in a later peak of memory
        timing = time_call(function, synchronize)
        best = Timing(
            min(best.wall_seconds, timing.wall_seconds), min(best.cpu_seconds, timing.cpu_seconds), timing.result
        )
        del timing
    return best


def peak_rss_mb() -> float:
    """The peak resident memory of this process so far (``ru_maxrss``), in MB (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / _MAXRSS_PER_MB


def status_mb(field: str) -> Optional[float]:
    """A memory field of ``/proc/self/status`` (``"VmRSS"``: resident now, ``"VmHWM"``: its peak) in MB; None
    where the file does not exist (not Linux)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def reset_peak_rss() -> bool:
    """
    Starts ``VmHWM`` (the peak of :func:`status_mb`) again from the memory resident now, so that a later peak
    is the peak of what ran in between; False where the kernel does not allow it (``ru_maxrss`` never resets).
    """
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


@dataclass
class ChildUsage:
    """What :func:`run_child` measured of a finished child process."""

    returncode: int
    wall_seconds: float
    cpu_seconds: float
    """User + system seconds of the child and of the processes it waited for."""
    peak_rss_mb: float
    """The child's own peak resident memory (a process started from a large parent is not charged the parent's)."""
    stdout: bytes


def run_child(
    argv: Sequence[str],
    cwd: Optional[Union[str, Path]] = None,
    env: Optional[Dict[str, str]] = None,
    stderr: Optional[int] = subprocess.DEVNULL,
) -> ChildUsage:
    """
    Runs ``argv`` to its end, its standard output captured, and measures it from here (``wait4``): wall seconds,
    CPU seconds and peak RSS of that process alone.

    # Parameters

    argv : `Sequence[str]`
    cwd : `Optional[Union[str, Path]]`, optional (default = this process's)
    env : `Optional[Dict[str, str]]`, optional (default = this process's environment)
    stderr : `Optional[int]`, optional (default = `subprocess.DEVNULL`)
        Where its standard error goes (``None``: this process's).
    """
    began = time.perf_counter()
    process = subprocess.Popen(
        list(argv), cwd=None if cwd is None else str(cwd), env=env, stdout=subprocess.PIPE, stderr=stderr
    )
    stdout = process.stdout.read()
    process.stdout.close()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - began
    process.returncode = os.waitstatus_to_exitcode(status)
    return ChildUsage(
        returncode=process.returncode,
        wall_seconds=wall,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        peak_rss_mb=usage.ru_maxrss / _MAXRSS_PER_MB,
        stdout=stdout,
    )


def ratio(numerator: Optional[float], denominator: Optional[float], digits: Optional[int] = None) -> Optional[float]:
    """``numerator / denominator`` (rounded to ``digits`` when given); None when either is missing or the
    denominator is 0."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    value = numerator / denominator
    return value if digits is None else round(value, digits)


def format_ratio(value: Optional[float], digits: int = 2, missing: str = "-") -> str:
    """``"1.23x"``; ``missing`` for None."""
    return missing if value is None else f"{value:.{digits}f}x"


def ratio_text(numerator: Optional[float], denominator: Optional[float], digits: int = 2) -> str:
    """:func:`format_ratio` of :func:`ratio`: ``"1.23x"``, ``"-"`` when it has no value."""
    return format_ratio(ratio(numerator, denominator), digits)
