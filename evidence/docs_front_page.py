"""
The docs site's front page (``docs/index.md``) shows the README's results table, so the two never disagree: the
README is the one place the figures are edited; this copies its table into the page, its ``docs/`` links made
relative to the site.

    python -m evidence.docs_front_page            # rewrite the table in docs/index.md
    python -m evidence.docs_front_page --check    # exit 1 when the page's table differs from the README's

``tests/test_docs_site.py`` runs the check.
"""

import argparse
import sys
from typing import List, Tuple

from evidence.repository import REPO_ROOT

README = REPO_ROOT / "README.md"
FRONT_PAGE = REPO_ROOT / "docs" / "index.md"
TABLE_HEADER = "| task | set-up | result | evidence |"


def table_bounds(lines: List[str], where: str) -> Tuple[int, int]:
    """``(first, end)`` line indices of the results table (its header line through its last row)."""
    starts = [number for number, line in enumerate(lines) if line.strip() == TABLE_HEADER]
    if len(starts) != 1:
        raise ValueError(f"{where}: expected one results table starting {TABLE_HEADER!r}, found {len(starts)}")
    end = starts[0]
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return starts[0], end


def site_table(readme: str) -> List[str]:
    """The README's results table with its ``docs/`` links made relative to the docs site."""
    lines = readme.splitlines()
    first, end = table_bounds(lines, str(README))
    return [line.replace("](docs/", "](") for line in lines[first:end]]


def with_table(page: str, table: List[str]) -> str:
    """``page`` with its results table replaced by ``table``."""
    lines = page.splitlines()
    first, end = table_bounds(lines, str(FRONT_PAGE))
    return "\n".join(lines[:first] + table + lines[end:]) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 when the tables differ")
    args = parser.parse_args(argv)
    page = FRONT_PAGE.read_text(encoding="utf-8")
    updated = with_table(page, site_table(README.read_text(encoding="utf-8")))
    name = FRONT_PAGE.relative_to(REPO_ROOT)
    if updated == page:
        print(f"{name}: results table as in the README")
        return 0
    if args.check:
        print(f"{name}: results table differs from the README's; run python -m evidence.docs_front_page")
        return 1
    FRONT_PAGE.write_text(updated, encoding="utf-8")
    print(f"{name}: results table copied from the README")
    return 0


if __name__ == "__main__":
    sys.exit(main())
