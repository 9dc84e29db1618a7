"""
The failure paths a user hits, swept (issue #24): every command of ``allennlp`` this library touches and
the server, given bad paths, its own input as output (also through links), empty / truncated / corrupt
files, invalid UTF-8 and JSON, the wrong kind of archive, bad options, inputs over the documented limits
and hostile HTTP requests. Each case is graded

* **good**: the command refused with one ``error:`` line naming the file (or the option), a non-zero exit
  status, and nothing changed (cases that should succeed: exit 0, nothing lost);
* **ok**: a correct refusal, but the message is vaguer (no file named, several lines);
* **bad**: data lost or changed, a partial file left behind, a traceback at the user, exit status 0 on a
  failure, or stuck (no answer within the case's time limit).

    .venv/bin/python scripts/failure_sweep.py [--only SUBSTRING] [--no-exec] [--keep]

Prints the table, writes ``outputs/failure_sweep/summary.json`` and exits 1 when any case is bad.

Tiny archives are trained first from the fixture configs (SQuAD 1.1 QA, coreference), in this process.
Each command then runs as ``allennlp ARGS`` does (``allennlp.commands.main``) in a forked copy of this
process, so that the 15 s of imports are paid once, not per case; two cases run the installed
``allennlp`` executable as a real subprocess. HTTP cases go to ``allennlp serve``'s application on a free
loopback port (uvicorn in a thread), over real sockets.
"""

import argparse
import contextlib
import hashlib
import http.client
import io
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from spanbert_lib.evidence.repository import REPO_ROOT  # noqa: E402
from spanbert_lib.evidence.summary import format_table  # noqa: E402

OUTPUT_DIR = REPO_ROOT / "outputs" / "failure_sweep"
CONFIGS = REPO_ROOT / "fixtures" / "configs"
TRACEBACK = "Traceback (most recent call last)"
PARTIAL = ".partial-"
QUESTION = {"question": "When did the bridge open?", "passage": "The bridge opened in March 1932 after years."}
GRADES = ("good", "ok", "bad")
# allennlp writes this set of namespaces in hash order (it differs between processes): compared as a set
UNORDERED_FILES = ("non_padded_namespaces.txt",)


@dataclass
class Outcome:
    """What a command did: exit status, output, time, and whether it had to be killed."""

    code: Optional[int]
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False


@dataclass
class Case:
    """
    One command line and what it must do.

    ``expect``: ``"refuse"`` (a non-zero exit with one ``error:`` line naming one of ``names``) or
    ``"succeed"`` (exit 0). ``watch``: files and directories that must be byte for byte the same afterwards
    (and hold no partial file). ``check``: further requirements, returning a problem or None.
    """

    name: str
    argv: List[str]
    expect: str = "refuse"
    names: Sequence[str] = ()
    watch: Sequence[Path] = ()
    check: Optional[Callable[[Outcome], Optional[str]]] = None
    timeout: float = 180.0
    executable: bool = False  # run the installed `allennlp` as a subprocess instead of a fork
    appends_to: Sequence[str] = ()  # file names the command may append to (a resumed run's out.log)

    @property
    def command(self) -> str:
        return self.argv[0]


@dataclass
class HttpCase:
    """One request to the server and the statuses that answer it well (the first is the expected one)."""

    name: str
    method: str
    path: str
    body: Optional[bytes] = None
    headers: Dict[str, str] = field(default_factory=dict)
    statuses: Tuple[int, ...] = (400,)
    raw: Optional[bytes] = None  # sent as is on the socket instead (e.g. HTTP/1.0 without Host)
    check: Optional[Callable[[int, Dict[str, str], bytes], Optional[str]]] = None

    command = "serve (HTTP)"


# ---- files ---------------------------------------------------------------------------------------


def snapshot(paths: Sequence[Path]) -> Dict[str, str]:
    """``{path: sha256}`` of every file in ``paths`` (directories walked, hidden files included)."""
    found = {}
    for path in paths:
        files = sorted(p for p in Path(path).rglob("*") if p.is_file()) if Path(path).is_dir() else [Path(path)]
        for file in files:
            with contextlib.suppress(OSError):
                data = file.read_bytes()
                if file.name in UNORDERED_FILES:
                    data = b"\n".join(sorted(data.splitlines()))
                found[str(file)] = hashlib.sha256(data).hexdigest()
    return found


def partial_files(paths: Sequence[Path]) -> List[str]:
    directories = {Path(p) if Path(p).is_dir() else Path(p).parent for p in paths}
    return sorted(str(p) for d in directories if d.is_dir() for p in d.iterdir() if PARTIAL in p.name)


class Workspace:
    """A directory per case, with helpers to make the files a case needs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.archives = root / "archives"
        self.cases = root / "cases"
        self.cases.mkdir(parents=True, exist_ok=True)

    def case_dir(self, name: str) -> Path:
        directory = self.cases / name
        directory.mkdir(parents=True, exist_ok=True)
        return directory

    def write(self, case: str, name: str, content) -> Path:
        path = self.case_dir(case) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    def copy(self, case: str, source: Path, name: Optional[str] = None) -> Path:
        target = self.case_dir(case) / (name or source.name)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copyfile(source, target)
        return target

    def link(self, case: str, source: Path, name: str, hard: bool = False) -> Path:
        link = self.case_dir(case) / name
        if hard:
            os.link(source, link)
        else:
            link.symlink_to(source)
        return link


# ---- archives ------------------------------------------------------------------------------------


def train_archives(workspace: Workspace) -> Dict[str, Path]:
    """Tiny runs of the fixture configs: SQuAD 1.1 QA and coreference (a few seconds each)."""
    from allennlp.commands.train import train_model_from_file

    runs = {
        "qa": (CONFIGS / "qa" / "squad11_tiny.jsonnet", {"trainer.num_epochs": 1}),
        "coref": (CONFIGS / "coref" / "spanbert_coref_tiny.jsonnet", {"trainer.num_epochs": 1}),
    }
    found = {}
    root_logger = logging.getLogger()
    handlers, level = list(root_logger.handlers), root_logger.level
    try:
        for name, (config, overrides) in runs.items():
            directory = workspace.archives / name
            if not (directory / "model.tar.gz").exists():
                shutil.rmtree(directory, ignore_errors=True)
                train_model_from_file(str(config), str(directory), overrides=json.dumps(overrides))
            found[name] = directory
    finally:
        # training points the root logger at the run's out.log: every later case would append to it
        for handler in set(root_logger.handlers) - set(handlers):
            handler.close()
        root_logger.handlers[:] = handlers
        root_logger.setLevel(level)
    return found


def tar_gz(path: Path, members: Dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def archive_members(archive: Path) -> Dict[str, bytes]:
    with tarfile.open(archive, "r:gz") as opened:
        return {m.name: opened.extractfile(m).read() for m in opened.getmembers() if m.isfile()}


# ---- grading -------------------------------------------------------------------------------------


def error_lines(outcome: Outcome) -> List[str]:
    lines = (outcome.stderr + "\n" + outcome.stdout).splitlines()
    return [line for line in lines if line.startswith("error: ") or ": error: " in line.split(" - ")[0]]


def grade(case: Case, outcome: Outcome, changed: List[str], leftovers: List[str]) -> Tuple[str, str]:
    """``(good | ok | bad, what happened)`` (module docstring)."""
    if outcome.timed_out:
        return "bad", f"stuck: no answer in {case.timeout:.0f} s"
    if changed:
        return "bad", f"changed {len(changed)} file(s): {', '.join(Path(p).name for p in changed[:3])}"
    if leftovers:
        return "bad", f"left partial file(s): {', '.join(Path(p).name for p in leftovers[:3])}"
    text = outcome.stderr + outcome.stdout
    if TRACEBACK in text:
        last = [line for line in text.splitlines() if line.strip()][-1]
        return "bad", f"traceback: {last.strip()[:150]}"
    errors = error_lines(outcome)
    extra = case.check(outcome) if case.check is not None else None
    if case.expect == "succeed":
        if outcome.code != 0:
            return "bad", f"exit {outcome.code}: {errors[0][:150] if errors else 'no message'}"
        if extra:
            return "bad", extra
        return "good", _first_output_line(outcome)
    if outcome.code == 0:
        return "bad", "exit 0 on a failure: " + (_first_output_line(outcome) or "no message")
    if extra:
        return "bad", extra
    if not errors:
        return "ok", f"exit {outcome.code}, no error line: {_first_output_line(outcome)}"
    if len(errors) > 1:
        return "ok", f"{len(errors)} error lines: {errors[0][:150]}"
    if case.names and not any(name in errors[0] for name in case.names):
        return "ok", f"does not name {case.names[0]}: {errors[0][:150]}"
    return "good", errors[0][:200]


def _first_output_line(outcome: Outcome) -> str:
    for line in (outcome.stdout + "\n" + outcome.stderr).splitlines():
        if line.strip() and " - INFO - " not in line and " - WARNING - " not in line:
            return line.strip()[:200]
    return ""


# ---- running -------------------------------------------------------------------------------------


def run_forked(argv: List[str], timeout: float, log_dir: Path) -> Outcome:
    """``allennlp ARGV`` in a forked copy of this process (imports already done), cwd the repository."""
    log_dir.mkdir(parents=True, exist_ok=True)
    out_path, err_path = log_dir / "stdout.txt", log_dir / "stderr.txt"
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.dup2(os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
            os.dup2(os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
            os.chdir(REPO_ROOT)
            sys.argv = ["allennlp", *argv]
            from allennlp.commands import main

            main(prog="allennlp")
            code = 0
        except SystemExit as exit_info:
            code = exit_info.code if isinstance(exit_info.code, int) else (0 if exit_info.code is None else 1)
        except BaseException:  # noqa: BLE001 - shown as the user would see it
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    timed_out = False
    while True:
        finished, status = os.waitpid(pid, os.WNOHANG)
        if finished:
            break
        if time.monotonic() - started > timeout:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            timed_out, status = True, None
            break
        time.sleep(0.02)
    code = os.waitstatus_to_exitcode(status) if status is not None else None
    read = lambda path: path.read_text(encoding="utf-8", errors="replace")  # noqa: E731
    return Outcome(code, read(out_path), read(err_path), time.monotonic() - started, timed_out)


def run_executable(argv: List[str], timeout: float) -> Outcome:
    """The installed ``allennlp`` console script as a subprocess."""
    started = time.monotonic()
    executable = Path(sys.executable).with_name("allennlp")
    try:
        completed = subprocess.run(
            [str(executable), *argv], cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as expired:
        return Outcome(None, str(expired.stdout or ""), str(expired.stderr or ""), timeout, True)
    return Outcome(completed.returncode, completed.stdout, completed.stderr, time.monotonic() - started)


def run_case(case: Case, workspace: Workspace) -> Dict[str, object]:
    watched = [*case.watch, workspace.case_dir(case.name)]
    before = snapshot(watched)
    if case.executable:
        outcome = run_executable(case.argv, case.timeout)
    else:
        outcome = run_forked(case.argv, case.timeout, workspace.root / "logs" / case.name)
    after = snapshot(watched)
    changed = sorted(
        path
        for path in before.keys() | after.keys()
        if before.get(path) != after.get(path) and not (path in before and Path(path).name in case.appends_to)
    )
    grade_, detail = grade(case, outcome, changed, partial_files(watched))
    detail = detail.replace(str(workspace.root) + os.sep, "").replace(str(REPO_ROOT) + os.sep, "")
    return {
        "name": case.name,
        "command": case.command,
        "kind": "executable" if case.executable else "command",
        "argv": [os.path.relpath(a, REPO_ROOT) if a.startswith(str(workspace.root)) else a for a in case.argv],
        "expect": case.expect,
        "grade": grade_,
        "detail": detail,
        "exit": outcome.code,
        "seconds": round(outcome.seconds, 2),
    }


# ---- the cases -----------------------------------------------------------------------------------


def _exit_zero_and(text: str) -> Callable[[Outcome], Optional[str]]:
    return lambda outcome: None if text in outcome.stdout + outcome.stderr else f"does not say {text!r}"


def _names_every(*texts: str) -> Callable[[Outcome], Optional[str]]:
    def check(outcome: Outcome) -> Optional[str]:
        errors = " ".join(error_lines(outcome))
        missing = [text for text in texts if text not in errors]
        return f"does not name {missing[0]}" if missing else None

    return check


def command_cases(ws: Workspace, archives: Dict[str, Path]) -> List[Case]:  # noqa: C901 - a list of cases
    qa_run, coref_run = archives["qa"], archives["coref"]
    qa, coref = qa_run / "model.tar.gz", coref_run / "model.tar.gz"
    squad = REPO_ROOT / "fixtures" / "qa" / "squad11.json"
    key = REPO_ROOT / "fixtures" / "coref" / "segmented_document.gold_conll"
    corpus = REPO_ROOT / "fixtures" / "corpus"
    pretraining_config = CONFIGS / "pretraining" / "spanbert_tiny.jsonnet"
    qa_config = CONFIGS / "qa" / "squad11_tiny.jsonnet"
    qa_members = archive_members(qa)
    cases: List[Case] = []

    def add(name: str, argv: List, **kwargs) -> None:
        cases.append(Case(name, [str(a) for a in argv], **kwargs))

    def questions(case: str, *lines: str, name: str = "in.jsonl") -> Path:
        return ws.write(case, name, "".join(line + "\n" for line in lines))

    good_line = json.dumps(QUESTION)

    # shared damaged archives
    bad = ws.case_dir("_archives")
    truncated = bad / "truncated.tar.gz"
    truncated.write_bytes(qa.read_bytes()[: qa.stat().st_size // 2])
    garbage = bad / "garbage.tar.gz"
    garbage.write_bytes(os.urandom(4096))
    zipped = bad / "model.zip.tar.gz"
    with zipfile.ZipFile(zipped, "w") as archive:
        for member, data in qa_members.items():
            archive.writestr(member, data)
    no_weights = tar_gz(bad / "no_weights.tar.gz", {k: v for k, v in qa_members.items() if k != "weights.th"})
    no_config = tar_gz(bad / "no_config.tar.gz", {k: v for k, v in qa_members.items() if k != "config.json"})
    json_archive = bad / "config_only.json"
    json_archive.write_bytes(qa_members["config.json"])
    empty_dir = bad / "empty_run"
    empty_dir.mkdir(exist_ok=True)
    escaping = bad / "escaping.tar.gz"
    with tarfile.open(escaping, "w:gz") as archive:
        info = tarfile.TarInfo("../escaped.txt")
        info.size = 2
        archive.addfile(info, io.BytesIO(b"hi"))
    for damaged, label in (
        (truncated, "truncated"),
        (garbage, "garbage"),
        (zipped, "zip"),
        (no_weights, "no_weights"),
        (no_config, "no_config"),
        (json_archive, "json_not_archive"),
        (empty_dir, "empty_directory"),
        (escaping, "member_escapes"),
    ):
        source = questions(f"predict_archive_{label}", good_line)
        add(
            f"predict_archive_{label}",
            ["predict", damaged, source, "--silent", "--output-file", source.with_name("out.jsonl")],
            names=(str(damaged),),
            watch=(bad,),
        )

    # ---- allennlp predict ----
    case = "predict_input_missing"
    add(case, ["predict", qa, ws.case_dir(case) / "missing.jsonl"], names=("missing.jsonl",))
    case = "predict_input_directory"
    add(case, ["predict", qa, ws.case_dir(case)], names=(str(ws.case_dir(case)),))
    case = "predict_input_empty"
    add(case, ["predict", qa, questions(case)], names=("in.jsonl",))
    case = "predict_input_blank_lines"
    add(case, ["predict", qa, questions(case, "", "  ")], names=("in.jsonl",))
    case = "predict_input_bad_utf8"
    add(
        case, ["predict", qa, ws.write(case, "in.jsonl", good_line.encode() + b'\n{"q\xff": 1}\n')], names=("in.jsonl",)
    )
    case = "predict_input_bad_json"
    add(case, ["predict", qa, questions(case, good_line, "{not json")], names=("in.jsonl:2",))
    case = "predict_input_null_line_keeps_output"
    source, output = questions(case, good_line, "null"), ws.write(case, "out.jsonl", "yesterday's predictions\n")
    add(case, ["predict", qa, source, "--output-file", output, "--silent"], names=("in.jsonl:2",))
    case = "predict_input_array_line"
    add(case, ["predict", qa, questions(case, "[1, 2]")], names=("in.jsonl:1",))
    case = "predict_input_missing_key"
    add(
        case,
        ["predict", qa, questions(case, json.dumps({"question": "Who?"}))],
        names=("in.jsonl:1",),
        check=_names_every("passage"),
    )
    case = "predict_input_wrong_type"
    add(
        case,
        ["predict", qa, questions(case, json.dumps({"question": "Who?", "passage": 5}))],
        names=("in.jsonl:1",),
        check=_names_every("passage"),
    )
    case = "predict_input_passage_over_limit"
    huge = json.dumps({"question": "Who?", "passage": "word " * 110_000})
    add(
        case,
        ["predict", qa, questions(case, huge), "--silent", "--output-file", ws.case_dir(case) / "o.jsonl"],
        names=("in.jsonl:1",),
        check=_names_every("max_passage_wordpieces"),
    )
    case = "predict_input_passage_characters_over_limit"
    add(
        case,
        ["predict", qa, questions(case, json.dumps({"question": "Who?", "passage": "x" * 10_000_001}))],
        names=("in.jsonl:1",),
        check=_names_every("max_passage_wordpieces"),
    )
    for how in ("same", "symlink", "hardlink"):
        case = f"predict_output_is_input_{how}"
        source = questions(case, good_line)
        output = source if how == "same" else ws.link(case, source, "out.jsonl", hard=how == "hardlink")
        add(case, ["predict", qa, source, "--output-file", output, "--silent"], names=(str(output),))
    case = "predict_output_is_archive"
    run_copy = ws.copy(case, qa_run, "run")
    add(
        case,
        [
            "predict",
            run_copy / "model.tar.gz",
            questions(case, good_line),
            "--output-file",
            run_copy / "model.tar.gz",
            "--silent",
        ],
        names=("model.tar.gz",),
    )
    case = "predict_output_directory_missing"
    add(
        case,
        ["predict", qa, questions(case, good_line), "--output-file", ws.case_dir(case) / "no" / "o.jsonl", "--silent"],
        names=("o.jsonl",),
    )
    case = "predict_output_is_a_directory"
    add(
        case,
        ["predict", qa, questions(case, good_line), "--output-file", ws.case_dir(case), "--silent"],
        names=(str(ws.case_dir(case)),),
    )
    case = "predict_archive_missing"
    add(case, ["predict", ws.case_dir(case) / "model.tar.gz", questions(case, good_line)], names=("model.tar.gz",))
    for value in ("0", "-1", "abc"):
        case = f"predict_batch_size_{value}"
        add(case, ["predict", qa, questions(case, good_line), "--batch-size", value], names=("--batch-size",))
    case = "predict_cuda_device_-2"
    add(case, ["predict", qa, questions(case, good_line), "--cuda-device", "-2"], names=("--cuda-device",))
    case = "predict_predictor_args_file_is_input"
    dataset = ws.copy(case, squad, "dev.json")
    add(
        case,
        [
            "predict",
            qa,
            dataset,
            "--use-dataset-reader",
            "--silent",
            "--output-file",
            ws.case_dir(case) / "full_output.jsonl",
            "--predictor-args",
            json.dumps({"predictions_file": str(dataset)}),
        ],
        names=("predictions_file",),
    )
    case = "predict_predictor_args_bad_json"
    add(case, ["predict", qa, questions(case, good_line), "--predictor-args", "{bad"], names=("--predictor-args",))
    case = "predict_unknown_predictor"
    add(
        case,
        ["predict", qa, questions(case, good_line), "--predictor", "no_such_predictor"],
        names=("no_such_predictor",),
    )
    case = "predict_overrides_bad_json"
    add(case, ["predict", qa, questions(case, good_line), "-o", "{bad"], names=("--overrides",))
    case = "predict_overrides_setting_the_model_does_not_take"
    typo = json.dumps({"model.max_answer_lenght": 10})
    add(case, ["predict", qa, questions(case, good_line), "-o", typo], names=("model.max_answer_lenght",))
    case = "predict_overrides_key_leads_nowhere"
    nowhere = json.dumps({"model.answer_head.size": 10})
    add(case, ["predict", qa, questions(case, good_line), "-o", nowhere], names=("model.answer_head.size",))
    case = "predict_dataset_reader_truncated_json"
    add(
        case,
        ["predict", qa, ws.write(case, "dev.json", squad.read_text()[:300]), "--use-dataset-reader"],
        names=("dev.json",),
    )
    case = "predict_include_unknown_package"
    add(
        case,
        ["predict", qa, questions(case, good_line), "--include-package", "no_such_package_xyz"],
        names=("no_such_package_xyz",),
    )
    case = "predict_silent_without_output"
    add(case, ["predict", qa, questions(case, good_line), "--silent"], names=("--silent",))

    # ---- allennlp evaluate ----
    case = "evaluate_input_missing"
    add(case, ["evaluate", qa, ws.case_dir(case) / "dev.json"], names=("dev.json",))
    case = "evaluate_input_directory"
    add(case, ["evaluate", qa, ws.case_dir(case)], names=(str(ws.case_dir(case)),))
    case = "evaluate_input_empty"
    add(case, ["evaluate", qa, ws.write(case, "dev.json", "")], names=("dev.json",))
    case = "evaluate_input_truncated_json"
    add(case, ["evaluate", qa, ws.write(case, "dev.json", squad.read_text()[:500])], names=("dev.json",))
    case = "evaluate_input_bad_utf8"
    add(case, ["evaluate", qa, ws.write(case, "dev.json", b'{"data": [{"title": "\xff"}]}')], names=("dev.json",))
    case = "evaluate_input_not_squad"
    add(case, ["evaluate", qa, questions(case, good_line, name="dev.json")], names=("dev.json",))
    case = "evaluate_input_no_questions"
    add(case, ["evaluate", qa, ws.write(case, "dev.json", '{"data": []}')], names=("dev.json",))
    case = "evaluate_output_is_input"
    dataset = ws.copy(case, squad, "dev.json")
    add(case, ["evaluate", qa, dataset, "--output-file", dataset], names=("dev.json",))
    case = "evaluate_predictions_output_is_input_symlink"
    dataset = ws.copy(case, squad, "dev.json")
    link = ws.link(case, dataset, "predictions.jsonl")
    add(case, ["evaluate", qa, dataset, "--predictions-output-file", link], names=("predictions.jsonl",))
    case = "evaluate_output_is_archive"
    run_copy = ws.copy(case, qa_run, "run")
    add(
        case,
        ["evaluate", run_copy / "model.tar.gz", squad, "--output-file", run_copy / "model.tar.gz"],
        names=("model.tar.gz",),
    )
    case = "evaluate_two_outputs_one_file"
    same = ws.case_dir(case) / "out.json"
    add(case, ["evaluate", qa, squad, "--output-file", same, "--predictions-output-file", same], names=("out.json",))
    case = "evaluate_failure_keeps_old_metrics"
    metrics = ws.write(case, "metrics.json", '{"f1": 91.0}')
    empty_context = '{"data": [{"title": "t", "paragraphs": [{"context": "", "qas": []}]}]}'
    add(
        case, ["evaluate", qa, ws.write(case, "dev.json", empty_context), "--output-file", metrics], names=("dev.json",)
    )
    case = "evaluate_batch_size_0"
    add(case, ["evaluate", qa, squad, "--batch-size", "0"], names=("--batch-size",))
    case = "evaluate_archive_truncated"
    add(case, ["evaluate", truncated, squad], names=(str(truncated),), watch=(bad,))

    # ---- allennlp train ----
    case = "train_config_missing"
    add(
        case,
        ["train", ws.case_dir(case) / "config.jsonnet", "-s", ws.case_dir(case) / "run"],
        names=("config.jsonnet",),
    )
    case = "train_config_directory"
    add(case, ["train", ws.case_dir(case), "-s", ws.case_dir(case) / "run"], names=(str(ws.case_dir(case)),))
    case = "train_config_syntax_error"
    add(
        case,
        ["train", ws.write(case, "config.jsonnet", '{"model": {'), "-s", ws.case_dir(case) / "run"],
        names=("config.jsonnet",),
    )
    case = "train_config_empty"
    add(
        case,
        ["train", ws.write(case, "config.jsonnet", ""), "-s", ws.case_dir(case) / "run"],
        names=("config.jsonnet",),
    )
    case = "train_overrides_bad_json"
    add(case, ["train", qa_config, "-s", ws.case_dir(case) / "run", "-o", "{bad"], names=("--overrides",))
    case = "train_config_value_of_the_wrong_type"
    wrong_type = json.dumps({"dataset_reader.max_seq_length": "long"})
    add(case, ["train", qa_config, "-s", ws.case_dir(case) / "run", "-o", wrong_type], names=("max_seq_length",))
    case = "train_serialization_dir_is_a_file"
    target = ws.copy(case, squad, "data.json")
    add(case, ["train", qa_config, "-s", target], names=("data.json",))
    case = "train_force_deletes_config"
    run = ws.case_dir(case) / "run"
    config = ws.write(case, "run/config.jsonnet", qa_config.read_text().replace("../../../", f"{REPO_ROOT}/"))
    add(case, ["train", config, "-s", run, "-f"], names=(str(run),))
    case = "train_force_deletes_data"
    data = ws.copy(case, squad, "data.json")
    add(
        case,
        [
            "train",
            qa_config,
            "-s",
            ws.case_dir(case),
            "-f",
            "-o",
            json.dumps({"train_data_path": str(data), "validation_data_path": str(data)}),
        ],
        names=(str(ws.case_dir(case)),),
    )
    case = "train_existing_directory_without_recover"
    run_copy = ws.copy(case, qa_run, "run")
    add(case, ["train", qa_config, "-s", run_copy], names=(str(run_copy),))
    case = "train_recover_missing_directory"
    add(case, ["train", qa_config, "-s", ws.case_dir(case) / "run", "--recover"], names=("run",))
    case = "train_recover_finished_run_changes_nothing"
    run_copy = ws.copy(case, qa_run, "run")
    add(
        case,
        ["train", qa_config, "-s", run_copy, "--recover"],
        expect="succeed",
        check=_exit_zero_and("this training run is finished"),
    )
    case = "train_recover_every_checkpoint_corrupt"
    run_copy = ws.copy(case, qa_run, "run")
    (run_copy / "model.tar.gz").unlink()
    (run_copy / "metrics.json").unlink()
    for checkpoint in run_copy.glob("*_state_e*.th"):
        checkpoint.write_bytes(checkpoint.read_bytes()[:100])
    add(
        case,
        ["train", qa_config, "-s", run_copy, "--recover"],
        names=(str(run_copy),),
        check=_names_every("model_state_e1_b0.th", "training_state_e1_b0.th"),
        appends_to=("out.log",),
    )
    case = "train_data_missing"
    add(
        case,
        [
            "train",
            qa_config,
            "-s",
            ws.case_dir(case) / "run",
            "-o",
            json.dumps({"train_data_path": str(ws.case_dir(case) / "train.json")}),
        ],
        names=("train.json",),
    )
    case = "train_data_empty"
    data = ws.write(case, "train.json", "")
    add(
        case,
        ["train", qa_config, "-s", ws.case_dir(case) / "run", "-o", json.dumps({"train_data_path": str(data)})],
        names=("train.json",),
    )
    case = "train_data_bad_utf8"
    data = ws.write(case, "train.json", b'{"data": [{"title": "\xff\xfe"}]}')
    add(
        case,
        ["train", qa_config, "-s", ws.case_dir(case) / "run", "-o", json.dumps({"train_data_path": str(data)})],
        names=("train.json",),
    )
    case = "train_model_path_missing"
    missing_model = ws.case_dir(case) / "models" / "my-bert"
    add(
        case,
        [
            "train",
            qa_config,
            "-s",
            ws.case_dir(case) / "run",
            "-o",
            json.dumps({"dataset_reader.model_name": str(missing_model)}),
        ],
        names=(str(missing_model),),
    )
    case = "train_model_path_not_a_model"
    add(
        case,
        [
            "train",
            qa_config,
            "-s",
            ws.case_dir(case) / "run",
            "-o",
            json.dumps({"dataset_reader.model_name": str(corpus)}),
        ],
        names=(str(corpus),),
    )
    case = "train_hub_name_offline"
    add(
        case,
        [
            "train",
            qa_config,
            "-s",
            ws.case_dir(case) / "run",
            "-o",
            json.dumps({"dataset_reader.model_name": "someone/unknown-bert"}),
        ],
        names=("someone/unknown-bert",),
    )
    case = "train_text_classification_json_empty"
    data = ws.write(case, "train.jsonl", "")
    classification_config = ws.write(
        case,
        "config.json",
        json.dumps(
            {
                "dataset_reader": {"type": "text_classification_json", "tokenizer": {"type": "whitespace"}},
                "train_data_path": str(data),
                "model": {
                    "type": "basic_classifier",
                    "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 4}}},
                    "seq2vec_encoder": {"type": "boe", "embedding_dim": 4},
                },
                "data_loader": {"batch_size": 2},
                "trainer": {"num_epochs": 1, "optimizer": "adam"},
            }
        ),
    )
    add(case, ["train", classification_config, "-s", ws.case_dir(case) / "run"], names=("train.jsonl",))

    # ---- coref-predict-conll ----
    for how in ("same", "symlink", "hardlink"):
        case = f"coref_predict_conll_key_as_output_{how}"
        gold = ws.copy(case, key, "key.conll")
        output = gold if how == "same" else ws.link(case, gold, "out.conll", hard=how == "hardlink")
        add(case, ["coref-predict-conll", coref, gold, output], names=(str(output),))
    case = "coref_predict_conll_output_is_archive"
    run_copy = ws.copy(case, coref_run, "run")
    add(
        case,
        ["coref-predict-conll", run_copy / "model.tar.gz", key, run_copy / "model.tar.gz"],
        names=("model.tar.gz",),
    )
    case = "coref_predict_conll_input_missing"
    add(
        case,
        ["coref-predict-conll", coref, ws.case_dir(case) / "in.conll", ws.case_dir(case) / "out.conll"],
        names=("in.conll",),
    )
    case = "coref_predict_conll_input_empty"
    add(
        case,
        ["coref-predict-conll", coref, ws.write(case, "in.conll", ""), ws.case_dir(case) / "out.conll"],
        names=("in.conll",),
    )
    case = "coref_predict_conll_input_bad_utf8"
    data = ws.write(case, "in.conll", key.read_bytes().replace(b" ", b" \xff", 1))
    add(case, ["coref-predict-conll", coref, data, ws.case_dir(case) / "out.conll"], names=("in.conll",))
    case = "coref_predict_conll_directory_without_conll"
    add(
        case,
        ["coref-predict-conll", coref, ws.case_dir(case), ws.case_dir(case) / "out.conll"],
        names=(str(ws.case_dir(case)),),
    )
    case = "coref_predict_conll_qa_archive"
    add(case, ["coref-predict-conll", qa, key, ws.case_dir(case) / "out.conll"], names=(str(qa),))
    case = "coref_predict_conll_truncated_archive"
    add(
        case,
        ["coref-predict-conll", truncated, key, ws.case_dir(case) / "out.conll"],
        names=(str(truncated),),
        watch=(bad,),
    )
    case = "coref_predict_conll_batch_size_0"
    add(
        case,
        ["coref-predict-conll", coref, key, ws.case_dir(case) / "out.conll", "--batch-size", "0"],
        names=("--batch-size",),
    )
    case = "coref_predict_conll_output_directory_missing"
    add(case, ["coref-predict-conll", coref, key, ws.case_dir(case) / "no" / "out.conll"], names=("out.conll",))
    case = "coref_predict_conll_failure_keeps_old_output"
    old = ws.write(case, "out.conll", "#begin document (old); part 000\nold 0 0 x - - - - - - - - (0)\n#end document\n")
    damaged = ws.write(case, "in.conll", key.read_text() + "#begin document (broken); part 000\nbroken 0\n")
    add(case, ["coref-predict-conll", coref, damaged, old], names=("in.conll",))

    # ---- coref-score ----
    response = REPO_ROOT / "fixtures" / "coref" / "multi_part.response_conll"
    multi_key = REPO_ROOT / "fixtures" / "coref" / "multi_part.gold_conll"
    case = "coref_score_key_missing"
    add(case, ["coref-score", ws.case_dir(case) / "key.conll", response], names=("key.conll",))
    case = "coref_score_response_missing"
    add(case, ["coref-score", multi_key, ws.case_dir(case) / "response.conll"], names=("response.conll",))
    case = "coref_score_key_empty"
    add(case, ["coref-score", ws.write(case, "key.conll", ""), response], names=("key.conll",))
    case = "coref_score_key_bad_utf8"
    add(
        case,
        ["coref-score", ws.write(case, "key.conll", multi_key.read_bytes().replace(b" ", b"\xff ", 1)), response],
        names=("key.conll",),
    )
    case = "coref_score_no_shared_document"
    other = ws.write(case, "response.conll", key.read_text())
    add(case, ["coref-score", multi_key, other], names=("response.conll",))
    case = "coref_score_key_directory"
    add(case, ["coref-score", ws.case_dir(case), response], names=(str(ws.case_dir(case)),))
    case = "coref_score_min_columns_0"
    add(case, ["coref-score", multi_key, response, "--min-columns", "0"], names=("--min-columns",))
    case = "coref_score_response_truncated"
    text = response.read_text()
    add(
        case,
        ["coref-score", multi_key, ws.write(case, "response.conll", text[: len(text) // 2])],
        names=("response.conll",),
    )

    # ---- squad-eval ----
    predictions = {"q1": "March 1932"}
    case = "squad_eval_dataset_missing"
    add(
        case,
        ["squad-eval", ws.case_dir(case) / "dev.json", ws.write(case, "p.json", json.dumps(predictions))],
        names=("dev.json",),
    )
    case = "squad_eval_predictions_missing"
    add(case, ["squad-eval", squad, ws.case_dir(case) / "p.json"], names=("p.json",))
    case = "squad_eval_no_shared_question_id"
    add(case, ["squad-eval", squad, ws.write(case, "p.json", json.dumps({"elsewhere-1": "x"}))], names=("p.json",))
    case = "squad_eval_predictions_not_json"
    add(case, ["squad-eval", squad, ws.write(case, "p.json", "{not json")], names=("p.json",))
    case = "squad_eval_predictions_bad_utf8"
    add(case, ["squad-eval", squad, ws.write(case, "p.json", b'{"a": "\xff"}')], names=("p.json",))
    case = "squad_eval_output_is_dataset"
    dataset = ws.copy(case, squad, "dev.json")
    add(
        case,
        ["squad-eval", dataset, ws.write(case, "p.json", json.dumps(predictions)), "--output-file", dataset],
        names=("dev.json",),
    )
    case = "squad_eval_output_is_predictions_symlink"
    prediction_file = ws.write(case, "p.json", json.dumps(predictions))
    add(
        case,
        ["squad-eval", squad, prediction_file, "--output-file", ws.link(case, prediction_file, "scores.json")],
        names=("scores.json",),
    )
    case = "squad_eval_dataset_directory"
    add(case, ["squad-eval", ws.case_dir(case), ws.write(case, "p.json", "{}")], names=(str(ws.case_dir(case)),))
    case = "squad_eval_threshold_nan"
    add(
        case,
        ["squad-eval", squad, ws.write(case, "p.json", "{}"), "--na-prob-thresh", "nan"],
        names=("--na-prob-thresh",),
    )
    case = "squad_eval_na_prob_with_v1"
    add(
        case,
        [
            "squad-eval",
            squad,
            ws.write(case, "p.json", json.dumps(predictions)),
            "--na-prob-file",
            ws.write(case, "na.json", "{}"),
            "--version",
            "1.1",
        ],
        names=("--na-prob-file",),
    )
    case = "squad_eval_dataset_truncated"
    add(
        case,
        [
            "squad-eval",
            ws.write(case, "dev.json", squad.read_text()[:400]),
            ws.write(case, "p.json", json.dumps(predictions)),
        ],
        names=("dev.json",),
    )

    # ---- export-encoder ----
    case = "export_encoder_archive_missing"
    add(
        case, ["export-encoder", ws.case_dir(case) / "model.tar.gz", ws.case_dir(case) / "out"], names=("model.tar.gz",)
    )
    case = "export_encoder_into_run_directory"
    run_copy = ws.copy(case, qa_run, "run")
    add(case, ["export-encoder", run_copy, run_copy], names=(str(run_copy),))
    case = "export_encoder_into_archive_directory"
    run_copy = ws.copy(case, qa_run, "run")
    add(case, ["export-encoder", run_copy / "model.tar.gz", run_copy], names=(str(run_copy),))
    case = "export_encoder_output_is_a_file"
    target = ws.write(case, "encoder", "a file")
    add(case, ["export-encoder", qa, target], names=(str(target),))
    case = "export_encoder_truncated_archive"
    add(case, ["export-encoder", truncated, ws.case_dir(case) / "out"], names=(str(truncated),), watch=(bad,))
    case = "export_encoder_archive_without_weights"
    add(case, ["export-encoder", no_weights, ws.case_dir(case) / "out"], names=(str(no_weights),), watch=(bad,))
    case = "export_encoder_weights_file_missing"
    add(
        case,
        ["export-encoder", qa, ws.case_dir(case) / "out", "--weights-file", ws.case_dir(case) / "best.th"],
        names=("best.th",),
    )
    case = "export_encoder_weights_file_with_code"
    pickled = ws.case_dir(case) / "best.th"
    _write_pickle_with_code(pickled)
    add(case, ["export-encoder", qa, ws.case_dir(case) / "out", "--weights-file", pickled], names=("best.th",))
    case = "export_encoder_weights_file_is_a_directory"
    add(
        case,
        ["export-encoder", qa, ws.case_dir(case) / "out", "--weights-file", ws.case_dir(case)],
        names=(str(ws.case_dir(case)),),
    )

    # ---- build-wordpiece-vocab ----
    case = "build_vocab_text_missing"
    add(case, ["build-wordpiece-vocab", ws.case_dir(case) / "text.txt", ws.case_dir(case) / "out"], names=("text.txt",))
    case = "build_vocab_text_empty"
    add(case, ["build-wordpiece-vocab", ws.write(case, "text.txt", ""), ws.case_dir(case) / "out"], names=("text.txt",))
    case = "build_vocab_text_only_nul"
    add(
        case,
        ["build-wordpiece-vocab", ws.write(case, "text.txt", b"\x00" * 64), ws.case_dir(case) / "out"],
        names=("text.txt",),
    )
    case = "build_vocab_text_bad_utf8"
    add(
        case,
        [
            "build-wordpiece-vocab",
            ws.write(case, "text.txt", b"good words\nbad \xff word\n"),
            ws.case_dir(case) / "out",
        ],
        names=("text.txt",),
    )
    case = "build_vocab_output_is_corpus_directory"
    corpus_copy = ws.copy(case, corpus, "corpus")
    add(case, ["build-wordpiece-vocab", corpus_copy, corpus_copy], names=(str(corpus_copy),))
    case = "build_vocab_output_holds_input"
    corpus_copy = ws.copy(case, corpus, "corpus")
    add(case, ["build-wordpiece-vocab", corpus_copy / "miscellany.txt", corpus_copy], names=(str(corpus_copy),))
    case = "build_vocab_output_is_a_file"
    target = ws.write(case, "vocab", "a file")
    add(case, ["build-wordpiece-vocab", corpus, target], names=(str(target),))
    for option, value in (("--vocab-size", "0"), ("--vocab-size", "abc"), ("--min-frequency", "-1")):
        case = f"build_vocab{option.replace('-', '_')}_{value}"
        add(case, ["build-wordpiece-vocab", corpus, ws.case_dir(case) / "out", option, value], names=(option,))

    # ---- masking-stats ----
    text = corpus / "miscellany.txt"
    case = "masking_stats_not_a_pretraining_config"
    add(case, ["masking-stats", qa_config, text], names=(str(qa_config),))
    case = "masking_stats_config_missing"
    add(case, ["masking-stats", ws.case_dir(case) / "config.jsonnet", text], names=("config.jsonnet",))
    case = "masking_stats_text_missing"
    add(case, ["masking-stats", pretraining_config, ws.case_dir(case) / "text.txt"], names=("text.txt",))
    case = "masking_stats_text_empty"
    add(case, ["masking-stats", pretraining_config, ws.write(case, "text.txt", "")], names=("text.txt",))
    case = "masking_stats_plot_is_text"
    text_copy = ws.copy(case, text, "text.txt")
    add(case, ["masking-stats", pretraining_config, text_copy, "--plot", text_copy], names=("text.txt",))
    case = "masking_stats_plot_is_config_symlink"
    config_copy = ws.copy(case, pretraining_config, "config.jsonnet")
    add(
        case,
        ["masking-stats", config_copy, text, "--plot", ws.link(case, config_copy, "plot.png")],
        names=("plot.png",),
    )
    case = "masking_stats_plot_directory_missing"
    add(
        case,
        ["masking-stats", pretraining_config, text, "--plot", ws.case_dir(case) / "no" / "plot.png"],
        names=("plot.png",),
    )
    for option, value in (("--batch-size", "0"), ("--max-blocks", "-1"), ("--seed", "x")):
        case = f"masking_stats{option.replace('-', '_')}_{value}"
        add(case, ["masking-stats", pretraining_config, text, option, value], names=(option,))
    case = "masking_stats_model_path_missing"
    missing_model = ws.case_dir(case) / "tokenizer"
    add(
        case,
        [
            "masking-stats",
            pretraining_config,
            text,
            "-o",
            json.dumps({"dataset_reader.model_name": str(missing_model)}),
        ],
        names=(str(missing_model),),
    )

    # ---- serve (start-up) ----
    case = "serve_model_path_missing"
    add(case, ["serve", "--model", f"qa={ws.case_dir(case) / 'typo_run'}"], names=("typo_run",))
    case = "serve_model_truncated_archive"
    add(case, ["serve", "--model", f"qa={truncated}"], names=(str(truncated),), watch=(bad,))
    case = "serve_model_spec_malformed"
    add(case, ["serve", "--model", "a b=model.tar.gz"], names=("--model",))
    case = "serve_masker_bad_json"
    add(case, ["serve", "--masker", "{bad"], names=("--masker",))
    case = "serve_overrides_setting_the_model_does_not_take"
    typo = json.dumps({"model.pair_product_dtpye": "bfloat16"})
    add(case, ["serve", "--model", f"coref={coref}", "-o", f"coref={typo}"], names=("--overrides coref",))
    case = "serve_overrides_not_json"
    add(case, ["serve", "--model", f"coref={coref}", "-o", "coref={bad"], names=("--overrides coref",))
    for option, value in (("--port", "70000"), ("--max-request-chars", "0"), ("--max-concurrent-predictions", "x")):
        case = f"serve{option.replace('-', '_')}_{value}"
        add(case, ["serve", option, value], names=(option,))

    # ---- the installed executable, as a real process ----
    case = "executable_predict_output_is_input"
    source = questions(case, good_line)
    add(case, ["predict", qa, source, "--output-file", source, "--silent"], names=(str(source),), executable=True)
    case = "executable_coref_predict_conll_key_as_output"
    gold = ws.copy(case, key, "key.conll")
    add(case, ["coref-predict-conll", coref, gold, gold], names=(str(gold),), executable=True)
    return cases


def _write_pickle_with_code(path: Path) -> None:
    """A ``.th`` file whose unpickling would call ``os.getcwd`` (any callable would do)."""
    import pickle

    class CallsCode:
        def __reduce__(self):
            return (os.getcwd, ())

    import torch

    torch.save({"weights": CallsCode()}, path, pickle_module=pickle)


# ---- HTTP ----------------------------------------------------------------------------------------


def http_cases() -> List[HttpCase]:
    json_headers = {"Content-Type": "application/json"}
    question = json.dumps(QUESTION).encode()
    no_cors = lambda status, headers, body: (  # noqa: E731
        "answers with CORS headers" if any(k.lower().startswith("access-control") for k in headers) else None
    )
    return [
        HttpCase("http_predict_ok", "POST", "/predict/qa", question, json_headers, (200,)),
        HttpCase("http_host_evil", "GET", "/health", headers={"Host": "evil.example"}, statuses=(421,)),
        HttpCase(
            "http_host_rebinding_predict",
            "POST",
            "/predict/qa",
            question,
            {**json_headers, "Host": "attacker.example:8000"},
            (421,),
        ),
        HttpCase(
            "http_host_suffix_trick", "GET", "/models", headers={"Host": "127.0.0.1.evil.example"}, statuses=(421,)
        ),
        HttpCase(
            "http_host_userinfo_trick",
            "GET",
            "/models",
            headers={"Host": "localhost@evil.example"},
            statuses=(400, 421),
        ),
        HttpCase("http_host_bad_port", "GET", "/health", headers={"Host": "127.0.0.1:x"}, statuses=(400,)),
        HttpCase("http_host_missing", "GET", "/health", raw=b"GET /health HTTP/1.0\r\n\r\n", statuses=(400,)),
        HttpCase(
            "http_form_post",
            "POST",
            "/predict/qa",
            b"question=Who&passage=Ann",
            {"Content-Type": "application/x-www-form-urlencoded"},
            (415,),
        ),
        HttpCase(
            "http_multipart_post",
            "POST",
            "/mask",
            b"--x\r\n\r\n--x--",
            {"Content-Type": "multipart/form-data; boundary=x"},
            (415,),
        ),
        HttpCase("http_text_plain_post", "POST", "/predict/qa", question, {"Content-Type": "text/plain"}, (415,)),
        HttpCase("http_no_content_type", "POST", "/predict/qa", question, {}, (415,)),
        HttpCase("http_nested_too_deep", "POST", "/predict/qa", b"[" * 50_000 + b"]" * 50_000, json_headers, (400,)),
        HttpCase("http_nested_object_deep", "POST", "/mask", b'{"a":' * 40 + b"1" + b"}" * 40, json_headers, (400,)),
        HttpCase(
            "http_body_over_limit",
            "POST",
            "/predict/qa",
            json.dumps({"question": "Who?", "passage": "word " * 30_000}).encode(),
            json_headers,
            (413,),
        ),
        HttpCase(
            "http_declared_length_over_limit",
            "POST",
            "/mask",
            b"{}",
            {**json_headers, "Content-Length": "999999999"},
            (413, 400),
        ),
        HttpCase("http_not_json", "POST", "/predict/qa", b"{not json", json_headers, (400,)),
        HttpCase("http_bad_utf8", "POST", "/predict/qa", b'{"question": "\xff"}', json_headers, (400,)),
        HttpCase("http_empty_body", "POST", "/predict/qa", b"", json_headers, (400,)),
        HttpCase("http_array_body", "POST", "/predict/qa", b"[1, 2]", json_headers, (400,)),
        HttpCase("http_missing_keys", "POST", "/predict/qa", b'{"passage": "x"}', json_headers, (400,)),
        HttpCase(
            "http_passage_wrong_type", "POST", "/predict/qa", b'{"question": "a", "passage": 5}', json_headers, (400,)
        ),
        HttpCase(
            "http_empty_passage", "POST", "/predict/qa", b'{"question": "a", "passage": "  "}', json_headers, (400,)
        ),
        HttpCase("http_coref_empty_document", "POST", "/predict/coref", b'{"document": ""}', json_headers, (200, 400)),
        HttpCase("http_unknown_model", "POST", "/predict/nobody", b"{}", json_headers, (404,)),
        HttpCase("http_get_on_predict", "GET", "/predict/qa", statuses=(405,)),
        HttpCase("http_static_traversal", "GET", "/static/../../../../etc/passwd", statuses=(404,)),
        HttpCase("http_static_encoded_traversal", "GET", "/static/%2e%2e/app.py", statuses=(404,)),
        HttpCase("http_mask_bad_seed", "POST", "/mask", b'{"text": "a b", "seed": -1}', json_headers, (400,)),
        HttpCase(
            "http_cors_preflight",
            "OPTIONS",
            "/predict/qa",
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
            statuses=(405,),
            check=no_cors,
        ),
    ]


def _served_app(archives: Dict[str, Path]):
    from allennlp.commands.subcommand import Subcommand

    from spanbert_lib.commands.serve import build_app

    subparser = Subcommand.by_name("serve")().add_subparser(argparse.ArgumentParser().add_subparsers())
    return build_app(
        subparser.parse_args(
            [
                "--model",
                f"qa={archives['qa']}",
                "--model",
                f"coref={archives['coref']}",
                "--masking-tokenizer",
                "fixtures/tiny_bert",
            ]
        )
    )


@contextlib.contextmanager
def serving(app):
    import uvicorn

    with contextlib.closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def run_http_case(case: HttpCase, port: int) -> Dict[str, object]:
    started = time.monotonic()
    status, headers, body, problem = None, {}, b"", None
    try:
        if case.raw is not None:
            with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
                connection.sendall(case.raw)
                answer = b""
                while chunk := connection.recv(65536):
                    answer += chunk
            head, _, body = answer.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            status = int(lines[0].split(" ")[1])
            headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
        else:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            connection.putrequest(case.method, case.path, skip_host="Host" in case.headers, skip_accept_encoding=True)
            request_headers = dict(case.headers)
            if case.body is not None and "Content-Length" not in request_headers:
                request_headers["Content-Length"] = str(len(case.body))
            for name, value in request_headers.items():
                connection.putheader(name, value)
            connection.endheaders(case.body)
            response = connection.getresponse()
            status, headers, body = response.status, dict(response.getheaders()), response.read()
            connection.close()
    except (OSError, http.client.HTTPException) as error:
        problem = f"no answer: {type(error).__name__}: {error}"
    seconds = time.monotonic() - started
    grade_, detail = _grade_http(case, status, headers, body, problem)
    return {
        "name": case.name,
        "command": case.command,
        "kind": "http",
        "argv": [case.method, case.path, *[f"{k}: {v}" for k, v in case.headers.items()]],
        "expect": "succeed" if min(case.statuses) < 400 else "refuse",
        "grade": grade_,
        "detail": detail,
        "exit": status,
        "seconds": round(seconds, 2),
    }


def _grade_http(case: HttpCase, status, headers, body: bytes, problem: Optional[str]) -> Tuple[str, str]:
    if problem is not None:
        return "bad", problem
    try:
        payload = json.loads(body) if body else None
    except ValueError:
        payload = None
    text = body.decode("utf-8", errors="replace")
    if "Traceback" in text:
        return "bad", f"HTTP {status} with a traceback"
    extra = case.check(status, headers, body) if case.check is not None else None
    if extra:
        return "bad", extra
    message = payload.get("error") if isinstance(payload, dict) else None
    summary = f"HTTP {status}" + (f": {message[:150]}" if message else "")
    if status >= 500 or (min(case.statuses) >= 400 and status < 400):
        return "bad", summary
    if status not in case.statuses:
        return "ok", f"{summary} (expected {case.statuses[0]})"
    if status >= 400 and not message:
        return "ok", f"{summary} (not a JSON error)"
    return "good", summary


# ---- main ----------------------------------------------------------------------------------------


def markdown_tables(results: List[Dict[str, object]]) -> str:
    """Grades per command, then every case, as markdown (what ``docs/failure_sweep.md`` shows)."""
    commands = list(dict.fromkeys(str(r["command"]) for r in results))
    per_command = []
    for command in commands:
        of_command = [r for r in results if r["command"] == command]
        grades = [str(sum(r["grade"] == g for r in of_command)) for g in GRADES]
        per_command.append([f"`{command}`", str(len(of_command)), *grades])
    totals = ["**all**", str(len(results))] + [str(sum(r["grade"] == g for r in results)) for g in GRADES]
    summary = format_table(["command", "cases", "good", "ok", "bad"], per_command + [totals], markdown=True)
    detail = format_table(
        ["grade", "case", "exit / HTTP", "what happened"],
        [
            [str(r["grade"]), f"`{r['name']}`", str(r["exit"]), str(r["detail"]).replace("|", "\\|")[:160]]
            for r in results
        ],
        markdown=True,
    )
    return summary + "\n\n" + detail + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=None, help="run the cases whose name contains this")
    parser.add_argument("--no-exec", action="store_true", help="skip the cases that start the real executable")
    parser.add_argument("--keep", action="store_true", help="keep the workspace (outputs/failure_sweep/work)")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)
    from allennlp.common.plugins import import_plugins

    import spanbert_lib.plugin  # noqa: F401

    import_plugins()

    workspace_root = OUTPUT_DIR / "work"
    archives_dir = workspace_root / "archives"
    if workspace_root.exists():  # reuse the trained archives, nothing else
        for child in workspace_root.iterdir():
            if child != archives_dir:
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    ws = Workspace(workspace_root)
    started = time.monotonic()
    archives = train_archives(ws)
    print(f"tiny archives ready in {time.monotonic() - started:.0f} s: {', '.join(archives)}", flush=True)

    cases = command_cases(ws, archives)
    if args.no_exec:
        cases = [case for case in cases if not case.executable]
    if args.only:
        cases = [case for case in cases if args.only in case.name]
    shared_before = snapshot([archives_dir])
    results = []
    for index, case in enumerate(cases, 1):
        result = run_case(case, ws)
        results.append(result)
        print(f"[{index}/{len(cases)}] {result['grade']:<4} {case.name} ({result['seconds']} s)", flush=True)
    changed = [p for p, h in snapshot([archives_dir]).items() if shared_before.get(p) != h]
    if changed:
        results.append(
            {
                "name": "shared_archives_unchanged",
                "command": "all",
                "kind": "check",
                "argv": [],
                "expect": "succeed",
                "grade": "bad",
                "detail": f"changed: {changed[:3]}",
                "exit": None,
                "seconds": 0.0,
            }
        )

    http = [case for case in http_cases() if not args.only or args.only in case.name]
    if http:
        with serving(_served_app(archives)) as port:
            for case in http:
                result = run_http_case(case, port)
                results.append(result)
                print(f"[http] {result['grade']:<4} {case.name}", flush=True)

    counts = {grade_: sum(r["grade"] == grade_ for r in results) for grade_ in GRADES}
    rows = [[r["grade"], r["command"], r["name"], str(r["exit"]), r["detail"][:110]] for r in results]
    print()
    print(format_table(["grade", "command", "case", "exit", "what happened"], rows))
    print()
    print(
        f"{len(results)} cases: {counts['good']} good, {counts['ok']} ok, {counts['bad']} bad "
        f"({time.monotonic() - started:.0f} s)"
    )
    OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
    summary = {
        "cases": len(results),
        "counts": counts,
        "seconds": round(time.monotonic() - started, 1),
        "results": results,
    }
    (OUTPUT_DIR / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (OUTPUT_DIR / "table.md").write_text(markdown_tables(results), encoding="utf-8")
    print(f"written {OUTPUT_DIR / 'summary.json'} and table.md")
    if not args.keep:
        for child in workspace_root.iterdir():
            if child != archives_dir:
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    return 1 if counts["bad"] else 0


if __name__ == "__main__":
    sys.exit(main())
