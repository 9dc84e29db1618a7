"""Running ``allennlp ARGS`` in the test process (what the console script calls), and file snapshots."""

import hashlib
import logging
import sys
from pathlib import Path
from typing import Dict, Tuple

from allennlp.commands import main as allennlp_main


def run_command(monkeypatch, capsys, *argv: str) -> Tuple[int, str, str]:
    """``allennlp ARGV`` in-process: (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["allennlp", *map(str, argv)])
    root_logger = logging.getLogger()
    handlers, level = list(root_logger.handlers), root_logger.level
    code = 0
    try:
        allennlp_main(prog="allennlp")
    except SystemExit as exit_info:
        code = exit_info.code if isinstance(exit_info.code, int) else 1
    finally:
        # `allennlp train` points the root logger at this test's captured streams: undo it
        for handler in set(root_logger.handlers) - set(handlers):
            handler.close()
        root_logger.handlers[:] = handlers
        root_logger.setLevel(level)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def snapshot(directory: Path) -> Dict[str, Tuple[str, float]]:
    """``{relative path: (sha256, mtime)}`` of every file below ``directory`` (hidden files included)."""
    return {
        str(path.relative_to(directory)): (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime)
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def user_error_line(err: str) -> str:
    """The ``error: ...`` line of a command's stderr (it must be the only one)."""
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    return lines[0]
