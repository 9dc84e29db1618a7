"""
How a case runs and what is kept of it. A command runs as ``allennlp ARGS`` (``allennlp.commands.main``) in a forked
copy of this process, whose imports are done, so a case costs its command and not Python's start-up; a case marked
``executable`` runs the installed ``allennlp`` as a real subprocess. Every watched file is hashed before and after.
HTTP cases go to ``allennlp serve``'s application on a free loopback port (uvicorn in a thread), over real sockets.
"""

import contextlib
import hashlib
import http.client
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence

from tests import REPO_ROOT
from tests.failure_sweep.grading import Case, HttpCase, Outcome, first_output_line, grade, grade_http

PARTIAL = ".partial-"
# allennlp writes this set of namespaces in hash order (it differs between processes): compared as a set
UNORDERED_FILES = ("non_padded_namespaces.txt",)
ALLENNLP_LOG_FORMAT = "%(asctime)s - %(levelname)s - %(name)s - %(message)s"
SHOWN_CHARACTERS = 200  # of a result's detail and first line


@dataclass
class CaseResult:
    """A case's grade and what the tables show of it."""

    name: str
    command: str
    kind: str
    """``command``, ``executable`` or ``http``."""
    expect: str
    grade: str
    detail: str
    """Why it got its grade: the error line, or what went wrong."""
    exit: Optional[int]
    """The exit status (an HTTP case: the status code)."""
    seconds: float
    first_line: str
    output_tail: str

    def failure_report(self) -> str:
        """What a failed test shows: the grade, its reason and the command's last output."""
        return f"graded {self.grade}: {self.detail}\n{self.output_tail}"


# ---- files ---------------------------------------------------------------------------------------


def _fingerprint(path: Path) -> str:
    """A file's sha256; a symbolic link's target (links are never followed)."""
    if path.is_symlink():
        return "link to " + os.readlink(path)
    data = path.read_bytes()
    if path.name in UNORDERED_FILES:
        data = b"\n".join(sorted(data.splitlines()))
    return hashlib.sha256(data).hexdigest()


def snapshot(paths: Sequence[Path]) -> Dict[str, str]:
    """``{path: fingerprint}`` of every file and link in ``paths`` (directories walked, hidden files included)."""
    found = {}
    for path in paths:
        path = Path(path)
        files = [path]
        if path.is_dir() and not path.is_symlink():
            files = []
            for folder, directories, names in os.walk(path):
                files += [Path(folder) / name for name in names]
                files += [Path(folder) / name for name in directories if (Path(folder) / name).is_symlink()]
        for file in sorted(files):
            with contextlib.suppress(OSError):
                found[str(file)] = _fingerprint(file)
    return found


def partial_files(paths: Sequence[Path]) -> List[str]:
    """Partial files (``.NAME.partial-...``) in the watched directories (a watched file's own directory)."""
    directories = {Path(p) if Path(p).is_dir() else Path(p).parent for p in paths}
    return sorted(str(p) for d in directories if d.is_dir() for p in d.iterdir() if PARTIAL in p.name)


def _under(path: str, roots: Sequence[Path]) -> bool:
    return any(Path(path) == Path(root) or Path(root) in Path(path).parents for root in roots)


# ---- commands ------------------------------------------------------------------------------------


def _child(
    argv: List[str],
    out_path: Path,
    err_path: Path,
    cwd: Optional[Path],
    stdout_file: Optional[Path],
    setup: Optional[Callable[[], None]],
) -> int:
    """The forked child: standard streams and logging as the ``allennlp`` executable has them, then the command."""
    if stdout_file is not None:
        out = os.open(stdout_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    else:
        out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.close(out)
    os.close(err)
    # pytest replaced sys.stdout / sys.stderr and the root logger's handlers with its capture
    sys.stdout = open(1, "w", encoding="utf-8", buffering=1, closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", buffering=1, closefd=False)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(ALLENNLP_LOG_FORMAT))
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    os.chdir(cwd or REPO_ROOT)
    if setup is not None:
        setup()
    sys.argv = ["allennlp", *argv]
    from allennlp.commands import main

    main(prog="allennlp")
    return 0


def run_forked(
    argv: List[str],
    timeout: float,
    log_dir: Path,
    cwd: Optional[Path] = None,
    stdout_file: Optional[Path] = None,
    kill_after: Optional[float] = None,
    child_setup: Optional[Callable[[], None]] = None,
    kill_when: Optional[Callable[[], bool]] = None,
) -> Outcome:
    """
    ``allennlp ARGV`` in a forked copy of this process (imports already done).

    # Parameters

    argv : `List[str]`
    timeout : `float`
        Seconds before it is killed as stuck.
    log_dir : `Path`
        Where its standard output and error are kept (``stdout.txt``, ``stderr.txt``).
    cwd : `Optional[Path]`, optional (default = the repository)
    stdout_file : `Optional[Path]`, optional
        Append its standard output to this file instead (opened as a shell's ``>>`` opens it).
    kill_after : `Optional[float]`, optional
        SIGKILL it this many seconds after ``kill_when`` first held (after the start without it), on purpose:
        :attr:`Outcome.killed`.
    child_setup : `Optional[Callable[[], None]]`, optional
        Run in the child before the command.
    kill_when : `Optional[Callable[[], bool]]`, optional
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    out_path, err_path = log_dir / "stdout.txt", log_dir / "stderr.txt"
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            code = _child(argv, out_path, err_path, cwd, stdout_file, child_setup)
        except SystemExit as exit_info:
            code = exit_info.code if isinstance(exit_info.code, int) else (0 if exit_info.code is None else 1)
            if isinstance(exit_info.code, str):
                print(exit_info.code, file=sys.stderr)
        except BaseException:  # noqa: B036 - shown as the user would see it
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    timed_out = killed = False
    triggered = None if kill_when is not None else started
    while True:
        finished, status = os.waitpid(pid, os.WNOHANG)
        if finished:
            break
        now = time.monotonic()
        elapsed = now - started
        if triggered is None and kill_when():
            triggered = now
        if kill_after is not None and triggered is not None and now - triggered >= kill_after:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            killed = True
            break
        if elapsed > timeout:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            timed_out, status = True, None
            break
        time.sleep(0.01)
    code = os.waitstatus_to_exitcode(status) if status is not None else None
    read = lambda path: path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""  # noqa: E731
    stdout = "" if stdout_file is not None else read(out_path)
    return Outcome(code, stdout, read(err_path), time.monotonic() - started, timed_out, killed)


def run_executable(argv: List[str], timeout: float, cwd: Optional[Path] = None) -> Outcome:
    """The installed ``allennlp`` console script as a subprocess."""
    started = time.monotonic()
    executable = Path(sys.executable).with_name("allennlp")
    try:
        completed = subprocess.run(
            [str(executable), *argv], cwd=cwd or REPO_ROOT, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as expired:
        return Outcome(None, str(expired.stdout or ""), str(expired.stderr or ""), timeout, timed_out=True)
    return Outcome(completed.returncode, completed.stdout, completed.stderr, time.monotonic() - started)


def run_case(name: str, case: Case, case_dir: Path, log_dir: Path, shown_from: Sequence[Path] = ()) -> CaseResult:
    """
    Runs ``case`` and grades it.

    # Parameters

    name : `str`
    case : `Case`
    case_dir : `Path`
        The case's own directory (always watched).
    log_dir : `Path`
        Where a forked command's output is kept.
    shown_from : `Sequence[Path]`, optional
        Folders whose prefix is left out of the paths in the result's detail and first line (the workspace).
    """
    watched = [*case.watch, case_dir]
    before = snapshot(watched)
    if case.executable:
        outcome = run_executable(case.argv, case.timeout, case.cwd)
    else:
        outcome = run_forked(
            case.argv,
            case.timeout,
            log_dir,
            case.cwd,
            case.stdout_file,
            case.kill_after,
            case.child_setup,
            case.kill_when,
        )
    problem = case.check(outcome) if case.check is not None and not outcome.timed_out else None
    after = snapshot(watched)
    changed = sorted(
        path
        for path in before.keys() | after.keys()
        if before.get(path) != after.get(path)
        and not _under(path, case.writes)
        and not (path in before and path in after and Path(path).name in case.appends_to)
    )
    leftovers = [path for path in partial_files(watched) if not _under(path, case.writes)]
    grade_, detail = grade(case, outcome, changed, leftovers, problem)
    first_line = first_output_line(outcome)
    for folder in sorted(map(str, shown_from), key=len, reverse=True):
        detail, first_line = detail.replace(folder + os.sep, ""), first_line.replace(folder + os.sep, "")
    detail, first_line = detail[:SHOWN_CHARACTERS], first_line[:SHOWN_CHARACTERS]
    return CaseResult(
        name=name,
        command=case.command,
        kind="executable" if case.executable else "command",
        expect=case.expect,
        grade=grade_,
        detail=detail,
        exit=outcome.code,
        seconds=round(outcome.seconds, 2),
        first_line=first_line,
        output_tail=outcome.tail(),
    )


# ---- HTTP ----------------------------------------------------------------------------------------


def free_port() -> int:
    with contextlib.closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def serving(app) -> Iterator[int]:
    """``app`` served by uvicorn on a free loopback port, in a thread, for the block; yields the port."""
    import uvicorn

    port = free_port()
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


def _send(case: HttpCase, port: int):
    """``(status, headers, body)`` of the server's answer to ``case``."""
    if case.raw is not None:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
            connection.sendall(case.raw)
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
        return int(lines[0].split(" ")[1]), headers, body
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.putrequest(case.method, case.path, skip_host="Host" in case.headers, skip_accept_encoding=True)
        request_headers = dict(case.headers)
        if case.body is not None and "Content-Length" not in request_headers:
            request_headers["Content-Length"] = str(len(case.body))
        for header, value in request_headers.items():
            connection.putheader(header, value)
        connection.endheaders(case.body)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def run_http_case(case: HttpCase, port: int) -> CaseResult:
    """Sends ``case`` to the server on ``port`` and grades the answer."""
    started = time.monotonic()
    status, headers, body, problem = None, {}, b"", None
    try:
        status, headers, body = _send(case, port)
    except (OSError, http.client.HTTPException) as error:
        problem = f"no answer: {type(error).__name__}: {error}"
    grade_, detail = grade_http(case, status, headers, body, problem)
    detail = detail[:SHOWN_CHARACTERS]
    shown = body.decode("utf-8", errors="replace")[-2000:]
    return CaseResult(
        name=case.name,
        command=case.command,
        kind="http",
        expect=case.expect,
        grade=grade_,
        detail=detail,
        exit=status,
        seconds=round(time.monotonic() - started, 2),
        first_line=detail,
        output_tail=f"--- response body ---\n{shown}" if shown else "(empty response body)",
    )
