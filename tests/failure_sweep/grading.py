"""
What a case is and how what it did is graded: :class:`Case` (a command line) and :class:`HttpCase` (a request to
the server), :class:`Outcome` (what the command did) and the grades ``good`` / ``ok`` / ``bad``
(:func:`grade`, :func:`grade_http`; the package docstring says what each means).
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

GRADES = ("good", "ok", "bad")
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Outcome:
    """What a command did: exit status, output, time, and whether it had to be stopped."""

    code: Optional[int]
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    killed: bool = False
    """Stopped on purpose (:attr:`Case.kill_after`), not stuck."""

    def tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of standard output and standard error, for a failure's report."""
        parts = []
        for name, text in (("stdout", self.stdout), ("stderr", self.stderr)):
            shown = text.strip().splitlines()[-lines:]
            if shown:
                parts.append(f"--- {name} (last {len(shown)} lines) ---\n" + "\n".join(shown))
        return "\n".join(parts) or "(no output)"


@dataclass
class Case:
    """
    One command line and what it must do.

    # Parameters

    argv : `List[str]`
        ``allennlp`` arguments (the command first).
    expect : `str`, optional (default = `"refuse"`)
        ``"refuse"``: a non-zero exit with one ``error:`` line naming one of ``names``; ``"succeed"``: exit 0;
        ``"killed"``: the command is stopped with SIGKILL (:attr:`kill_after`; it may finish before), and
        ``check`` says whether what it left is whole.
    names : `Sequence[str]`, optional
        What the error line must name (any one of them).
    watch : `Sequence[Path]`, optional
        Files and directories that must be byte for byte the same afterwards, and hold no partial file (the
        case's own directory always is).
    writes : `Sequence[Path]`, optional
        Paths under the watched ones the command may create, replace or remove (its outputs, a stale file it
        cleans up); ``check`` looks at them.
    appends_to : `Sequence[str]`, optional
        Names of existing files the command may append to (a resumed run's ``out.log``).
    check : `Optional[Callable[[Outcome], Optional[str]]]`, optional
        Further requirements, run once the command ended (before the files are compared): a problem or None.
    timeout : `float`, optional (default = `180.0`)
        Seconds before the command counts as stuck.
    executable : `bool`, optional (default = `False`)
        Run the installed ``allennlp`` as a real subprocess instead of a fork of this process.
    cwd : `Optional[Path]`, optional
        The command's working directory (default: the repository).
    stdout_file : `Optional[Path]`, optional
        A file the command's standard output is appended to (a shell's ``>> FILE``), instead of being captured.
    kill_after : `Optional[float]`, optional
        Seconds after which the command gets SIGKILL (``expect="killed"``), counted from the moment ``kill_when``
        first holds (from the start without it).
    kill_when : `Optional[Callable[[], bool]]`, optional
        Polled while the command runs: when it starts counting ``kill_after`` (e.g. once a partial file exists).
    child_setup : `Optional[Callable[[], None]]`, optional
        Run in the forked child before the command (e.g. to keep ``serve`` from binding a port).
    """

    argv: List[str]
    expect: str = "refuse"
    names: Sequence[str] = ()
    watch: Sequence[Path] = ()
    writes: Sequence[Path] = ()
    appends_to: Sequence[str] = ()
    check: Optional[Callable[[Outcome], Optional[str]]] = None
    timeout: float = 180.0
    executable: bool = False
    cwd: Optional[Path] = None
    stdout_file: Optional[Path] = None
    kill_after: Optional[float] = None
    kill_when: Optional[Callable[[], bool]] = None
    child_setup: Optional[Callable[[], None]] = None

    def __post_init__(self) -> None:
        self.argv = [str(argument) for argument in self.argv]
        if self.expect not in ("refuse", "succeed", "killed"):
            raise ValueError(f"expect must be 'refuse', 'succeed' or 'killed', got {self.expect!r}")

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
    raw: Optional[bytes] = None
    """Sent as is on the socket instead (e.g. HTTP/1.0 without a Host header)."""
    check: Optional[Callable[[int, Dict[str, str], bytes], Optional[str]]] = None

    command = "serve (HTTP)"

    @property
    def expect(self) -> str:
        return "succeed" if min(self.statuses) < 400 else "refuse"


def error_lines(outcome: Outcome) -> List[str]:
    """The ``error:`` lines of the output (argparse's ``prog: error:`` included)."""
    lines = (outcome.stderr + "\n" + outcome.stdout).splitlines()
    return [line for line in lines if line.startswith("error: ") or ": error: " in line.split(" - ")[0]]


def first_output_line(outcome: Outcome) -> str:
    """The first line of output that is not a log line (what the user reads first)."""
    for line in (outcome.stdout + "\n" + outcome.stderr).splitlines():
        if line.strip() and " - INFO - " not in line and " - WARNING - " not in line:
            return line.strip()
    return ""


def grade(
    case: Case, outcome: Outcome, changed: List[str], leftovers: List[str], problem: Optional[str] = None
) -> Tuple[str, str]:
    """
    ``(good | ok | bad, what happened)`` of a command case.

    # Parameters

    case : `Case`
    outcome : `Outcome`
    changed : `List[str]`
        Watched files that changed (or appeared, or went).
    leftovers : `List[str]`
        Partial files left in the watched directories.
    problem : `Optional[str]`, optional
        What the case's ``check`` found wrong.
    """
    if outcome.timed_out:
        return "bad", f"stuck: no answer in {case.timeout:.0f} s"
    if changed:
        return "bad", f"changed {len(changed)} file(s): {', '.join(Path(p).name for p in changed[:3])}"
    if leftovers:
        return "bad", f"left partial file(s): {', '.join(Path(p).name for p in leftovers[:3])}"
    text = outcome.stderr + outcome.stdout
    if TRACEBACK in text and not outcome.killed:
        last = [line for line in text.splitlines() if line.strip()][-1]
        return "bad", f"traceback: {last.strip()}"
    errors = error_lines(outcome)
    if case.expect == "killed":
        if problem:
            return "bad", problem
        how = "killed" if outcome.killed else f"finished (exit {outcome.code}) before it was killed"
        return "good", f"{how} after {outcome.seconds:.1f} s; what it left is whole"
    if case.expect == "succeed":
        if outcome.code != 0:
            return "bad", f"exit {outcome.code}: {errors[0] if errors else 'no message'}"
        if problem:
            return "bad", problem
        return "good", first_output_line(outcome) or "exit 0"
    if outcome.code == 0:
        return "bad", "exit 0 on a failure: " + (first_output_line(outcome) or "no message")
    if problem:
        return "bad", problem
    if not errors:
        return "ok", f"exit {outcome.code}, no error line: {first_output_line(outcome)}"
    if len(errors) > 1:
        return "ok", f"{len(errors)} error lines: {errors[0]}"
    if case.names and not any(name in errors[0] for name in case.names):
        return "ok", f"does not name {case.names[0]}: {errors[0]}"
    return "good", errors[0]


def grade_http(
    case: HttpCase, status: Optional[int], headers: Dict[str, str], body: bytes, problem: Optional[str]
) -> Tuple[str, str]:
    """``(good | ok | bad, what happened)`` of an HTTP case; ``problem``: the request got no answer."""
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


# what a check says about output the command must or must not have printed


def says(text: str) -> Callable[[Outcome], Optional[str]]:
    """A check: the output holds ``text``."""
    return lambda outcome: None if text in outcome.stdout + outcome.stderr else f"does not say {text!r}"


def names_every(*texts: str) -> Callable[[Outcome], Optional[str]]:
    """A check: the error lines name every one of ``texts``."""

    def check(outcome: Outcome) -> Optional[str]:
        errors = " ".join(error_lines(outcome))
        missing = [text for text in texts if text not in errors]
        return f"does not name {missing[0]}" if missing else None

    return check


def all_of(*checks: Callable[[Outcome], Optional[str]]) -> Callable[[Outcome], Optional[str]]:
    """A check: every one of ``checks`` (the first problem found)."""

    def check(outcome: Outcome) -> Optional[str]:
        for one in checks:
            problem = one(outcome)
            if problem:
                return problem
        return None

    return check
