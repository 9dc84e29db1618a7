"""
The library type-checks with mypy as pyproject.toml configures it (``[tool.mypy]``), and every ``# type: ignore`` in it
names its error code and says why: ``# type: ignore[code]  # why: <reason>``.
"""

import importlib.util
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Iterator, Tuple

import pytest

from tests import REPO_ROOT

LIBRARY = REPO_ROOT / "spanbert_lib"
_IGNORE = re.compile(r"#\s*type:\s*ignore")
_IGNORE_WITH_CODE_AND_REASON = re.compile(r"#\s*type:\s*ignore\[[\w-]+(\s*,\s*[\w-]+)*\]\s*#\s*why:\s*\S")


@pytest.mark.slow  # one full mypy run: ~25-40 s without its cache
def test_the_library_type_checks():
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed: it is pinned in requirements.lock (bash scripts/bootstrap.sh)")
    completed = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, f"mypy found problems:\n{completed.stdout}{completed.stderr}"


def _comments(path: Path) -> Iterator[Tuple[int, str]]:
    """``(line, text)`` of every comment of a Python file (not text that only looks like one inside a string)."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def test_every_type_ignore_names_its_code_and_reason():
    offenders = [
        f"{path.relative_to(REPO_ROOT)}:{line}: {comment}"
        for path in sorted(LIBRARY.rglob("*.py"))
        for line, comment in _comments(path)
        if _IGNORE.search(comment) and not _IGNORE_WITH_CODE_AND_REASON.search(comment)
    ]
    assert not offenders, (
        "write each ignore as '# type: ignore[code]  # why: <short reason>' on one line:\n" + "\n".join(offenders)
    )
