"""
One source of truth for every figure the documentation shows. Each evidence script and benchmark writes its figures
to a results file, ``results/NAME.json``: one JSON object with what was measured, by which command, on which machine
and when, its tables (numbers as numbers) and notes::

    {"title", "command", "machine", "date", "tables": {NAME: {"columns": [...], "rows": [[...], ...]}}, "notes"}

The tables of ``README.md`` and ``docs/**/*.md`` are generated from those files between markers::

    <!-- results: NAME TABLE -->
    (generated: the table, then a line naming its file and command)
    <!-- /results -->

    python -m evidence.results            # rewrite every marked table from its file
    python -m evidence.results --check    # exit 1 naming each page whose table differs from its file

``tests/test_docs_figures.py`` runs the check, so a table never disagrees with its file.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from evidence.repository import REPO_ROOT

RESULTS_DIR = REPO_ROOT / "results"
BLOCK = re.compile(
    r"(?P<open><!-- results: (?P<name>[\w.-]+) (?P<table>[\w.-]+) -->\n)(?P<body>.*?)(?P<close><!-- /results -->)",
    re.DOTALL,
)


def machine() -> str:
    """``"Linux x86_64, 2 CPUs, 24 GiB memory, Python 3.11.7, torch 2.13.0+cpu"`` (torch when it is installed)."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    description = (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, {memory:.0f} GiB memory, "
        f"Python {platform.python_version()}"
    )
    try:
        import torch
    except ImportError:
        return description
    return f"{description}, torch {torch.__version__}"


def command_line(module: str) -> str:
    """How this run was started, as ``python -m MODULE ARGS`` (the interpreter relative to the repository)."""
    executable = Path(sys.executable)
    if executable.is_relative_to(REPO_ROOT):
        executable = executable.relative_to(REPO_ROOT)
    return shlex.join([str(executable), "-m", module, *sys.argv[1:]])


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Dict[str, List]:
    """One entry of ``"tables"``."""
    return {"columns": list(columns), "rows": [list(row) for row in rows]}


def write_results(
    path: Path,
    title: str,
    module: str,
    tables: Dict[str, Dict[str, List]],
    notes: Sequence[str],
    command: Optional[str] = None,
    **extra: Any,
) -> Dict[str, Any]:
    """
    Writes the results file ``path`` (its folder made when missing) and returns what it holds.

    # Parameters

    path : `Path`
    title : `str`
        What was measured, in a line.
    module : `str`
        The module the run was started as (``benchmarks.ner_memory``), for the ``command`` entry.
    tables : `Dict[str, Dict[str, List]]`
        ``{name: table(columns, rows)}``.
    notes : `Sequence[str]`
        How to read the tables.
    command : `str`, optional (default = `None`)
        The command to record instead of this process's own (a summary of runs that several commands made).
    **extra : `Any`
        Further entries (per-seed figures, curves), kept in the file for scripts that read it.
    """
    results = {
        "title": title,
        "command": command or command_line(module),
        "machine": machine(),
        "date": datetime.date.today().isoformat(),
        "tables": tables,
        "notes": list(notes),
        **extra,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return results


def read_results(name: str, directory: Path = RESULTS_DIR) -> Dict[str, Any]:
    """The results file ``directory/NAME.json``; exits naming it when it is missing."""
    path = directory / f"{name}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SystemExit(f"error: {path}: no such results file (run the command that writes it)") from None


def format_cell(value: Any) -> str:
    """A number with thousands separators as stored (``1,234.5``), ``-`` for None, text as it is."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return format(value, ",")
    # a "|" would end the cell; outside `code`, "[a] [b]" would read as a reference link (a usage line has them)
    parts = str(value).replace("\n", " ").split("`")
    for index in range(0, len(parts), 2):  # the text between code spans
        parts[index] = parts[index].replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return "`".join(parts).replace("|", "\\|")


def render_table(results: Mapping[str, Any], name: str, table_name: str) -> str:
    """The markdown of one table of a results file, and the line saying where it comes from."""
    try:
        found = results["tables"][table_name]
    except KeyError:
        raise SystemExit(f"error: results/{name}.json has no table {table_name!r}") from None
    lines = ["| " + " | ".join(found["columns"]) + " |", "|" + "---|" * len(found["columns"])]
    lines += ["| " + " | ".join(format_cell(cell) for cell in row) + " |" for row in found["rows"]]
    when = ", ".join(part for part in (results.get("machine"), results.get("date")) if part)
    source = f"From `results/{name}.json`, written by `{results['command']}`{f' ({when})' if when else ''}."
    return "\n".join(lines + ["", f"<sub>{source}</sub>"]) + "\n"


def rendered(text: str, directory: Path = RESULTS_DIR) -> str:
    """``text`` with every marked block regenerated from its results file."""
    cache: Dict[str, Dict[str, Any]] = {}

    def replace(match: "re.Match[str]") -> str:
        name = match["name"]
        if name not in cache:
            cache[name] = read_results(name, directory)
        return match["open"] + render_table(cache[name], name, match["table"]) + match["close"]

    return BLOCK.sub(replace, text)


def documentation_pages(root: Path = REPO_ROOT) -> List[Path]:
    """README.md and every page under docs/."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def blocks(text: str) -> Iterator[Tuple[str, str]]:
    """``(name, table)`` of each marked block of ``text``."""
    for match in BLOCK.finditer(text):
        yield match["name"], match["table"]


def stale_pages(root: Path = REPO_ROOT, directory: Optional[Path] = None) -> List[str]:
    """The pages whose marked tables differ from their results files."""
    directory = directory or root / "results"
    stale = []
    for page in documentation_pages(root):
        text = page.read_text(encoding="utf-8")
        if rendered(text, directory) != text:
            stale.append(str(page.relative_to(root)))
    return stale


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the documentation's tables from results/*.json.")
    parser.add_argument("--check", action="store_true", help="only check; exit 1 when a table differs from its file")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_pages()
        for page in stale:
            print(f"{page}: a table differs from its results file; run python -m evidence.results")
        return 1 if stale else 0
    for page in documentation_pages():
        text = page.read_text(encoding="utf-8")
        updated = rendered(text)
        if updated != text:
            page.write_text(updated, encoding="utf-8")
            print(f"rewrote the tables of {page.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
