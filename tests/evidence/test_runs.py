"""evidence.runs: real subprocesses, measured, run N at a time, finished runs never run again."""

import json
import sys
from pathlib import Path
from typing import List, Optional

import pytest

from evidence.runs import Run, RunFailed, allennlp_train_run, best_validation_percent, run_all

# Burns about `seconds` of CPU, then writes the one-thread settings it saw to the result file.
BUSY = """
import json, os, sys, time
seconds, result = float(sys.argv[1]), sys.argv[2]
start = time.process_time()
while time.process_time() - start < seconds:
    sum(i * i for i in range(10000))
print("busy done")
json.dump({k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "HF_HUB_OFFLINE", "EXTRA")}, open(result, "w"))
"""


def busy_run(tmp_path: Path, name: str, seconds: float = 0.3, then: Optional[List[List[str]]] = None) -> Run:
    result = tmp_path / name / "result.json"
    result.parent.mkdir(exist_ok=True)
    return Run(
        name=name,
        system="busy",
        seed=1,
        command=[sys.executable, "-c", BUSY, str(seconds), str(result)],
        log_file=tmp_path / f"{name}.log",
        result_file=result,
        env={"EXTRA": "yes"},
        then=then or [],
    )


def test_a_run_is_measured_with_one_thread_and_recorded(tmp_path):
    run = busy_run(tmp_path, "a", seconds=0.5)
    [result] = run_all([run])
    assert not result.skipped
    assert 0.45 <= result.cpu_seconds <= result.wall_seconds + 0.1  # the child's CPU time, not this process's
    assert 5 < result.max_rss_mb < 150  # its own peak, not this (torch-importing) pytest process's
    assert json.loads(run.result_file.read_text()) == {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "EXTRA": "yes"}
    log = run.log_file.read_text()
    assert log.startswith("$ ") and "busy done" in log
    record = json.loads(run.record_path.read_text())
    assert record["command"] == run.command and record["cpu_seconds"] == result.cpu_seconds


def test_peak_memory_is_the_commands_own(tmp_path):
    allocate = "import sys; block = bytearray(300 * 2**20); open(sys.argv[1], 'w').write('x')"
    out = tmp_path / "out"
    run = Run("big", "x", None, [sys.executable, "-c", allocate, str(out)], tmp_path / "big.log", out)
    [result] = run_all([run])
    assert 300 <= result.max_rss_mb < 450


def test_a_finished_run_is_read_back_not_run_again(tmp_path, capsys):
    run = busy_run(tmp_path, "a")
    [first] = run_all([run])
    log = run.log_file.read_text()
    [again] = run_all([run])
    assert again.skipped and run.log_file.read_text() == log
    assert (again.wall_seconds, again.cpu_seconds, again.max_rss_mb) == (
        first.wall_seconds,
        first.cpu_seconds,
        first.max_rss_mb,
    )
    assert "a: already done" in capsys.readouterr().out


def test_a_result_without_a_record_counts_as_done(tmp_path):
    """Outputs of the scripts from before the harness: kept, their cost unknown."""
    run = busy_run(tmp_path, "old")
    run.result_file.write_text("{}")
    [result] = run_all([run])
    assert result.skipped and result.cpu_seconds is None and not run.log_file.exists()


def test_a_result_from_another_command_is_an_error(tmp_path):
    run = busy_run(tmp_path, "a", seconds=0.05)
    run_all([run])
    changed = busy_run(tmp_path, "a", seconds=0.1)
    with pytest.raises(RunFailed, match="made by another command"):
        run_all([changed])


def test_runs_go_in_parallel_and_come_back_in_order(tmp_path):
    # each run writes when it started and ended; with parallel=3 the three intervals overlap
    sleeper = (
        "import json, sys, time; start = time.time(); time.sleep(1.5); "
        "open(sys.argv[1], 'w').write(json.dumps([start, time.time()]))"
    )
    runs = [
        Run(
            f"s{i}",
            "sleep",
            i,
            [sys.executable, "-c", sleeper, str(tmp_path / f"s{i}")],
            tmp_path / f"s{i}.log",
            tmp_path / f"s{i}",
        )
        for i in range(3)
    ]
    results = run_all(runs, parallel=3)
    intervals = [json.loads((tmp_path / f"s{i}").read_text()) for i in range(3)]
    assert max(start for start, _ in intervals) < min(end for _, end in intervals)  # all three ran at once
    assert [r.run.name for r in results] == ["s0", "s1", "s2"]
    assert all(r.wall_seconds >= 1.5 and r.cpu_seconds < 1.0 for r in results)  # sleeping costs no CPU


def test_then_commands_run_after_and_are_not_measured(tmp_path):
    marker = tmp_path / "scored"
    run = busy_run(
        tmp_path,
        "a",
        seconds=0.05,
        then=[
            [
                sys.executable,
                "-c",
                "import time\nend = time.process_time() + 3\nwhile time.process_time() < end: pass\n"
                f"open({str(marker)!r}, 'w').write('x')",
            ]
        ],
    )
    [result] = run_all([run])
    # CPU seconds, not wall seconds: the 3 CPU seconds of the `then` command are not counted, however
    # loaded the machine is (the run itself is a Python start-up and 0.05 s of work)
    assert marker.exists() and result.cpu_seconds < 1.5


def test_a_failing_run_names_its_log_and_stops_new_runs(tmp_path):
    failing = Run(
        "broken",
        "x",
        1,
        [sys.executable, "-c", "import sys; print('something went wrong'); sys.exit(3)"],
        tmp_path / "broken.log",
        tmp_path / "broken.json",
    )
    never = busy_run(tmp_path, "never", seconds=0.05)
    with pytest.raises(RunFailed) as error:
        run_all([failing, never], parallel=1)
    message = str(error.value)
    assert "broken" in message and "exited 3" in message and str(tmp_path / "broken.log") in message
    assert "something went wrong" in message  # the log's last lines
    assert not never.result_file.exists()


def test_a_run_that_writes_no_result_fails(tmp_path):
    run = Run("silent", "x", None, [sys.executable, "-c", "pass"], tmp_path / "silent.log", tmp_path / "out.json")
    with pytest.raises(RunFailed, match="without writing"):
        run_all([run])


def test_an_allennlp_training_run_sets_data_seeds_and_overrides_in_that_order(tmp_path):
    config = "training_configs/ner/litbank_minilm.jsonnet"
    run = allennlp_train_run("ours", 2, config, tmp_path / "ours_seed2", {"model.encoder.model_name": "enc"})
    assert (run.name, run.system, run.seed) == ("ours_seed2", "ours", 2)
    assert run.command[1:6] == ["train", config, "-s", str(tmp_path / "ours_seed2"), "-f"]
    overrides = json.loads(run.command[-1])
    assert list(overrides)[-4:] == ["random_seed", "numpy_seed", "pytorch_seed", "model.encoder.model_name"]
    assert {"train_data_path", "validation_data_path"} <= set(overrides)
    assert (run.result_file, run.log_file) == (tmp_path / "ours_seed2" / "metrics.json", tmp_path / "ours_seed2.log")


def test_best_validation_scores_in_percent():
    metrics = {"best_validation_f1": 0.5, "best_validation_precision": 0.25, "validation_f1": 0.1}
    assert best_validation_percent(metrics, ["precision", "f1"]) == {"precision": 25.0, "f1": 50.0}
