"""
The documentation site (``mkdocs.yml``, ``docs/``) builds with ``mkdocs build --strict`` (every internal link
and anchor resolved, the API reference generated from the docstrings), every page of its nav is built, and
every name the library registers is documented, in the README and on a page that shows it in use.
"""

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest
import yaml

from tests import REPO_ROOT

README = REPO_ROOT / "README.md"
DOCS = REPO_ROOT / "docs"
REGISTRATION = re.compile(r"""\.register\(\s*["']([^"']+)["']""")
NAME_LINK = re.compile(r"\[`([^`]+)`\]\(([^)#]+)(?:#[^)]*)?\)")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site_dir = tmp_path_factory.mktemp("docs_site") / "site"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            "mkdocs.yml",
            "--site-dir",
            str(site_dir),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
    )
    assert build.returncode == 0, f"mkdocs build --strict failed:\n{build.stdout}\n{build.stderr}"
    return site_dir


def nav_pages(nav) -> Iterator[str]:
    """The Markdown files of an mkdocs nav (nested lists of ``title: page`` and bare pages)."""
    for entry in nav:
        values = entry.values() if isinstance(entry, dict) else [entry]
        for value in values:
            if isinstance(value, list):
                yield from nav_pages(value)
            else:
                yield value


def built_page(site: Path, page: str) -> Path:
    """Where mkdocs writes a page with directory URLs: ``a/b.md`` -> ``a/b/index.html``."""
    stem = page[: -len(".md")]
    if stem == "index" or stem.endswith("/index"):
        return site / stem[: -len("index")] / "index.html"
    return site / stem / "index.html"


def registered_names() -> Dict[str, List[str]]:
    """Every name registered in the library's source, with the files registering it."""
    names: Dict[str, List[str]] = {}
    for path in sorted((REPO_ROOT / "spanbert_lib").rglob("*.py")):
        for name in REGISTRATION.findall(path.read_text(encoding="utf-8")):
            names.setdefault(name, []).append(path.relative_to(REPO_ROOT).as_posix())
    return names


def name_links(path: Path) -> List[Tuple[str, str]]:
    """``(registered name, linked page)`` of the table of registered names of ``path``: its first table."""
    text = path.read_text(encoding="utf-8")
    heading = text.find("\n## Registered names\n")
    section = text[heading:] if heading >= 0 else text
    table = re.search(r"^\|.*?(?=^[^|]|\Z)", section, flags=re.M | re.S)
    assert table, f"{path.name} has no table of registered names"
    return NAME_LINK.findall(table.group(0))


def test_every_page_of_the_nav_is_built(site):
    config = yaml.safe_load((REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = list(nav_pages(config["nav"]))
    assert len(pages) >= 20
    on_disk = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    assert on_disk == set(pages), "every page is in the nav, and every nav entry is a page"
    for page in pages:
        html = built_page(site, page)
        assert html.is_file(), f"{page} was not built"
        assert "<article" in html.read_text(encoding="utf-8"), f"{page} has no content"


def test_the_api_reference_is_generated_from_the_docstrings(site):
    html = built_page(site, "api/coref.md").read_text(encoding="utf-8")
    assert 'id="spanbert_lib.coref.models.spanbert_coref.SpanBertCoreference"' in html
    assert 'id="spanbert_lib.coref.dataset_readers.spanbert_coref.SpanBertCorefReader"' in html
    # allennlp's "# Parameters" sections become lists with the names in bold (docs/tooling/allennlp_docstrings.py)
    assert "<strong>Parameters:</strong>" in html
    assert "<li><strong>max_span_width</strong> : <code>int</code>, optional" in html
    assert "# Parameters" not in html and ":class:`" not in html


def test_every_registered_name_is_documented_with_an_example():
    names = registered_names()
    assert "spanbert_coref" in names and "geometric_span" in names and "coref-score" in names
    assert "](docs/registered_names.md)" in README.read_text(encoding="utf-8")  # the front page links the list
    for table in (DOCS / "registered_names.md",):
        links = name_links(table)
        assert {name for name, _ in links} >= set(names), f"{table.name} misses {set(names) - {n for n, _ in links}}"
        for name, page in links:
            target = (table.parent / page).resolve()
            assert target.is_file(), f"{table.name}: {name} links to {page}, which does not exist"
            assert name in target.read_text(encoding="utf-8"), f"{target.name} does not show {name}"
    documented = {name for name, _ in name_links(DOCS / "registered_names.md")}
    assert documented <= set(names), f"documented but not registered: {documented - set(names)}"


def test_the_readme_links_resolve(site):
    """The README is not part of the site, so its links to the docs are checked here."""
    text = README.read_text(encoding="utf-8")
    targets = [target for target in MARKDOWN_LINK.findall(text) if not re.match(r"[a-z]+://", target)]
    assert any(target.startswith("docs/") for target in targets)
    for target in targets:
        path, _, anchor = target.partition("#")
        assert (REPO_ROOT / path).exists(), f"README links to {path}, which does not exist"
        if anchor:
            html = built_page(site, path[len("docs/") :]).read_text(encoding="utf-8")
            assert f'id="{anchor}"' in html, f"README links to {target}: no such anchor"


def test_the_readme_keeps_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert "bash scripts/main.sh" in text and "bash scripts/test.sh" in text
    assert len(text.splitlines()) <= 200, "the README is a front page; the details live in docs/"


def test_the_front_page_shows_the_readmes_results_table():
    """README.md and docs/index.md show the same table, generated from one results file."""
    for page in (README, DOCS / "index.md"):
        assert "<!-- results: headline comparisons -->" in page.read_text(encoding="utf-8"), page.name
