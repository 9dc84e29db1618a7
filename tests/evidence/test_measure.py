"""benchmarks.measure: the one way the benchmarks time calls, read peak memory and print ratios."""

import itertools
import sys

import pytest

from benchmarks.measure import (
    best_of,
    format_ratio,
    peak_rss_mb,
    ratio,
    ratio_text,
    reset_peak_rss,
    run_child,
    status_mb,
    time_call,
)


def test_best_of_keeps_the_smallest_times_and_the_last_result():
    calls = itertools.count()
    synchronized = []
    timing = best_of(lambda: next(calls), repeats=3, synchronize=lambda: synchronized.append(1))
    assert timing.result == 3  # one warm-up call, then three timed ones
    assert len(synchronized) == 4
    assert 0 <= timing.wall_seconds < 1 and 0 <= timing.cpu_seconds < 1
    assert best_of(lambda: next(calls), repeats=1, warm_up=False).result == 4
    with pytest.raises(ValueError, match="repeats"):
        best_of(lambda: None, repeats=0)


def test_time_call_counts_cpu_time_of_busy_work():
    timing = time_call(lambda: sum(i * i for i in range(300_000)))
    assert timing.result > 0 and timing.cpu_seconds > 0 and timing.wall_seconds > 0


def test_a_child_is_measured_on_its_own():
    allocate = "data = bytearray(200 * 2**20); data[::4096] = b'x' * len(data[::4096]); print('done')"
    usage = run_child([sys.executable, "-S", "-c", allocate])
    assert usage.returncode == 0 and usage.stdout.strip() == b"done"
    assert usage.peak_rss_mb > 200 and usage.cpu_seconds > 0 and usage.wall_seconds > 0
    assert run_child([sys.executable, "-S", "-c", "raise SystemExit(3)"]).returncode == 3


def test_this_process_memory():
    assert peak_rss_mb() > 10
    if status_mb("VmRSS") is not None:  # Linux
        assert 0 < status_mb("VmRSS") <= status_mb("VmHWM") <= peak_rss_mb() + 1
        assert isinstance(reset_peak_rss(), bool)


def test_ratios():
    assert ratio(3.0, 2.0) == 1.5 and ratio(1.0, 3.0, digits=2) == 0.33
    assert ratio(None, 2.0) is None and ratio(2.0, 0) is None
    assert format_ratio(1.234) == "1.23x" and format_ratio(1.25, digits=1) == "1.2x" and format_ratio(None) == "-"
    assert ratio_text(10.0, 4.0) == "2.50x" and ratio_text(1.0, None) == "-"
