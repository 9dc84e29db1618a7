"""
Every figure a page shows comes from a results file: the tables between ``<!-- results: NAME TABLE -->`` markers
equal what ``results/NAME.json`` renders (``python -m evidence.results``), and the prose of README.md and docs/
states no measured figure of its own (a decimal with a unit or an ``x`` ratio, a ``±``, a score after its metric's
name). The user's words, too: no issue numbers, no notes of how the work went.
"""

import re
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

from evidence.results import BLOCK, documentation_pages, stale_pages
from tests import REPO_ROOT

PAGES = documentation_pages(REPO_ROOT)

MEASURED = [
    re.compile(r"\b\d+(?:\.\d+)?\s?x\b(?! ?\d)"),  # 1.8x, 5x (not 2x2 or 0x10)
    re.compile(r"\d\.\d+\s?(?:%|s\b|ms\b|min\b|GB\b|MB\b|KB\b|h\b|hours?\b|seconds?\b|minutes?\b)"),
    re.compile(r"\d\s?±\s?\d"),
    re.compile(
        r"\b(?:F1|EM|CoNLL|MUC|B3|CEAFe|accuracy|perplexity|precision|recall)\b[^.|\n]{0,12}?\*{0,2}\b\d+\.\d+\b"
    ),
]
WORKSHOP_WORDS = [
    re.compile(r"\bissue #\d+|\(#\d+\)"),
    re.compile(r"\bfair chance\b", re.IGNORECASE),
    re.compile(r"\banchors?\b", re.IGNORECASE),
    re.compile(r"\bthis session\b|\bnext session\b|\bin the next session\b", re.IGNORECASE),
]


def prose_lines(text: str) -> Iterator[Tuple[int, str]]:
    """``(line number, line)`` of a page outside fenced code and generated result blocks."""
    generated = set()
    for match in BLOCK.finditer(text):
        first = text.count("\n", 0, match.start()) + 1
        generated.update(range(first, first + match.group(0).count("\n") + 1))
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced and number not in generated:
            yield number, re.sub(r"`[^`]*`", "``", line)  # inline code: names, not figures


def findings(page: Path, patterns: List[re.Pattern]) -> List[str]:
    text = page.read_text(encoding="utf-8")
    return [
        f"{page.relative_to(REPO_ROOT)}:{number}: {match.group(0)!r} in: {line.strip()[:140]}"
        for number, line in prose_lines(text)
        for pattern in patterns
        for match in pattern.finditer(line)
    ]


def test_every_results_table_equals_its_file():
    assert stale_pages(REPO_ROOT) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO_ROOT)))
def test_the_prose_states_no_measured_figure_of_its_own(page):
    assert findings(page, MEASURED) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO_ROOT)))
def test_the_docs_speak_the_users_words(page):
    assert findings(page, WORKSHOP_WORDS) == []


def test_the_detector_finds_figures_and_leaves_names_alone():
    text = "\n".join(
        [
            "ours is 1.8x faster at 0.43x the memory, 12.4 s, 2.2 GB, CoNLL F1 **51.5** ± 0.5",
            "Python 3.11, allennlp 2.10.1, `model.min_mention_score: 0.0`, 6 epochs on 70 documents",
            "```",
            "F1 51.5 inside code is the command's output",
            "```",
        ]
    )
    page = REPO_ROOT / "results" / "_detector_probe.md"
    try:
        page.write_text(text, encoding="utf-8")
        found = findings(page, MEASURED)
    finally:
        page.unlink()
    assert len(found) >= 5 and all(":1:" in item for item in found)
