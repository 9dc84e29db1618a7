"""
Many ``allennlp`` command lines for the tests at the cost of one start-up (which takes seconds: torch,
transformers, every plugin): this process imports allennlp's entry point and its plugins once, then runs
each command line in a forked copy of itself, with its own working directory, environment, standard
output and standard error, through ``allennlp.__main__.run`` (what the ``allennlp`` executable calls).
The only difference from the executable is that the plugins were imported before the fork, so their
``Plugin ... available`` log lines are missing.

    python -m tests.commands.allennlp_forks CASES_JSON RESULTS_JSON

``CASES_JSON``: a list of ``{"argv": [...], "cwd": DIR, "env": {NAME: VALUE or null}}``;
``RESULTS_JSON``: a list of ``{"returncode": int, "stdout": str, "stderr": str}`` in the same order.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List

from tests import REPO_ROOT


def run_forked(cases: List[Dict[str, Any]], timeout: int = 600) -> List[subprocess.CompletedProcess]:
    """
    Runs each ``allennlp`` command line of ``cases`` (see the module docstring) in one subprocess.

    # Parameters

    cases : `List[Dict[str, Any]]`
        ``{"argv": [...], "cwd": DIR, "env": {...}}`` each (``cwd`` and ``env`` optional).
    timeout : `int`, optional (default = `600`)
        Seconds for all of them.

    # Returns

    `List[subprocess.CompletedProcess]`
        One per case, with text ``stdout`` / ``stderr``.
    """
    with tempfile.TemporaryDirectory() as scratch:
        cases_file, results_file = Path(scratch) / "cases.json", Path(scratch) / "results.json"
        cases_file.write_text(json.dumps(cases), encoding="utf-8")
        env = {key: value for key, value in os.environ.items() if key != "SPANBERT_LIB_DEBUG"}
        driver = subprocess.run(
            [sys.executable, "-m", "tests.commands.allennlp_forks", str(cases_file), str(results_file)],
            cwd=str(REPO_ROOT),
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if driver.returncode != 0:
            raise RuntimeError(f"allennlp_forks exited {driver.returncode}:\n{driver.stderr[-4000:]}")
        results = json.loads(results_file.read_text(encoding="utf-8"))
    return [
        subprocess.CompletedProcess(
            ["allennlp", *case["argv"]], result["returncode"], result["stdout"], result["stderr"]
        )
        for case, result in zip(cases, results)
    ]


def _run_in_child(case: Dict[str, Any], stdout_path: str, stderr_path: str) -> int:
    import allennlp.__main__ as entry

    for name, value in case.get("env", {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    os.chdir(case.get("cwd") or REPO_ROOT)
    for descriptor, path in ((1, stdout_path), (2, stderr_path)):
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(handle, descriptor)
        os.close(handle)
    sys.argv = ["allennlp", *case["argv"]]
    try:
        entry.run()
        code = 0
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            code = exit_.code or 0
        else:
            print(exit_.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: B036 - reported as the interpreter would
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def main(cases_file: str, results_file: str) -> None:
    import allennlp.__main__  # noqa: F401  (logging as the executable sets it up)
    from allennlp.commands import main as _  # noqa: F401
    from allennlp.common.plugins import import_plugins

    import_plugins()
    cases = json.loads(Path(cases_file).read_text(encoding="utf-8"))
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for index, case in enumerate(cases):
            stdout_path, stderr_path = os.path.join(scratch, f"{index}.out"), os.path.join(scratch, f"{index}.err")
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                os._exit(_run_in_child(case, stdout_path, stderr_path))
            _, status = os.waitpid(pid, 0)
            results.append(
                {
                    "returncode": os.waitstatus_to_exitcode(status),
                    "stdout": Path(stdout_path).read_text(encoding="utf-8", errors="replace"),
                    "stderr": Path(stderr_path).read_text(encoding="utf-8", errors="replace"),
                }
            )
    Path(results_file).write_text(json.dumps(results), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:])
