"""
The failure sweep: what every command of ``allennlp`` this library touches and the server do with bad input,
misuse and hostile requests. The cases are pytest cases (``tests/failure_sweep``; the grades are explained there);
this runs them, records each case's grade, prints the table per command and the table of cases, and writes
``results/failure_sweep.json``.

    .venv/bin/python -m evidence.failure_sweep                      # every case
    .venv/bin/python -m evidence.failure_sweep --only predict_output  # the cases whose name holds this

Exits 1 when a case is bad (a case graded ok fails its test, but is no damage).
"""

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import evidence  # noqa: F401  (offline, before torch and transformers load)
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, table, write_results
from evidence.summary import format_table

SWEEP_TESTS = REPO_ROOT / "tests" / "failure_sweep"
RESULTS = RESULTS_DIR / "failure_sweep.json"
GRADES = ("good", "ok", "bad")
BY_COMMAND = ["command", "cases", "good", "ok", "bad"]
CASES = ["grade", "command", "case", "exit / HTTP", "seconds", "what happened", "first output line"]


class SweepRecorder:
    """A pytest plugin: keeps the graded result each sweep test records, and selects the cases ``--only`` names."""

    def __init__(self, only: Optional[str] = None) -> None:
        self.only = only
        self.results: List[Dict[str, Any]] = []

    def pytest_collection_modifyitems(self, config, items) -> None:
        if not self.only:
            return
        selected = [item for item in items if self.only in _case_name(item.nodeid)]
        config.hook.pytest_deselected(items=[item for item in items if item not in selected])
        items[:] = selected

    def pytest_runtest_logreport(self, report) -> None:
        recorded = dict(report.user_properties).get("failure_sweep")
        if report.when == "call" and recorded is not None:
            self.results.append(recorded)
        elif report.failed and recorded is None:  # the case could not be built or run at all
            last = (report.longreprtext or "").strip().splitlines()
            self.results.append(
                {
                    "name": _case_name(report.nodeid),
                    "command": "(not run)",
                    "grade": "bad",
                    "detail": f"{report.when} failed: {last[-1] if last else 'no message'}"[:200],
                    "exit": None,
                    "seconds": round(report.duration, 2),
                    "first_line": "",
                }
            )


def _case_name(nodeid: str) -> str:
    return nodeid.rsplit("[", 1)[-1].rstrip("]") if nodeid.endswith("]") else nodeid


def by_command(results: List[Dict[str, Any]]) -> List[List[Any]]:
    """``[command, cases, good, ok, bad]`` per command in the order first met, then ``all``."""
    rows = []
    for command in dict.fromkeys(str(result["command"]) for result in results):
        of_command = [result for result in results if result["command"] == command]
        rows.append([command, len(of_command), *(sum(r["grade"] == g for r in of_command) for g in GRADES)])
    rows.append(["all", len(results), *(sum(r["grade"] == g for r in results) for g in GRADES)])
    return rows


def case_rows(results: List[Dict[str, Any]]) -> List[List[Any]]:
    return [
        [r["grade"], r["command"], r["name"], r["exit"], r["seconds"], r["detail"], r["first_line"]] for r in results
    ]


def run_sweep(only: Optional[str], workers: int) -> List[Dict[str, Any]]:
    """The sweep's pytest cases, run by ``pytest.main``; their graded results in the order they ran."""
    import pytest

    recorder = SweepRecorder(only)
    tests = [str(SWEEP_TESTS / "test_commands.py"), str(SWEEP_TESTS / "test_http.py")]
    arguments = [*tests, "-q", "-p", "no:cacheprovider", "--no-header", "-rN", "-n", str(workers)]
    pytest.main(arguments, plugins=[recorder])
    return recorder.results


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=None, help="run the cases whose name contains this")
    parser.add_argument("--workers", type=int, default=0, help="pytest-xdist workers (default 0: this process)")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    args = parser.parse_args(argv)
    started = time.monotonic()
    results = run_sweep(args.only, args.workers)
    seconds = time.monotonic() - started
    if not results:
        print("no case ran", file=sys.stderr)
        return 1
    summary, cases = by_command(results), case_rows(results)
    print()
    print(format_table(BY_COMMAND, [[str(cell) for cell in row] for row in summary]))
    print()
    print(format_table(CASES[:4] + CASES[5:6], [[str(row[i])[:110] for i in (0, 1, 2, 3, 5)] for row in cases]))
    total = summary[-1]
    print(f"\n{total[1]} cases: {total[2]} good, {total[3]} ok, {total[4]} bad ({seconds:.0f} s)")
    if not args.only:
        write_results(
            args.out,
            "Failure paths: every command and the server given bad input, misuse and hostile requests, graded",
            "evidence.failure_sweep",
            {"by_command": table(BY_COMMAND, summary), "cases": table(CASES, cases)},
            [
                "good: refused with one error line naming the file or option, non-zero exit, nothing changed "
                "(a case that should succeed: exit 0, nothing lost); HTTP: the expected status with a JSON error",
                "ok: a correct refusal with a vaguer message (no file named, several error lines, another 4xx)",
                "bad: a file changed or a partial file left, a traceback, exit 0 on a failure, stuck past the "
                "case's time limit; HTTP: a 5xx, a refusal answered 200, a traceback in the body",
                "paths in 'what happened' are relative to the session's workspace (cases/NAME/...), to the "
                "folder of the shared tiny archives (archives/...) or to the repository",
                f"the whole sweep took {seconds:.0f} s of wall time (pytest, one process, tiny archives trained first)",
            ],
        )
        print(f"wrote {args.out}")
    return 1 if total[4] else 0


if __name__ == "__main__":
    sys.exit(main())
