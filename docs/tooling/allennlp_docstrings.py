"""
A griffe extension for the API reference (``mkdocs.yml``): renders the library's allennlp-style docstring
sections as Markdown lists. Loaded by mkdocstrings from this path; it reads the source text only (nothing is
imported from ``spanbert_lib``, torch or allennlp).

allennlp writes a section as a ``# Parameters`` heading followed by one entry per line at the left margin
(``name : `type`, optional (default = ...)``, or just a type under ``# Returns``) with the description indented
below it. Left as they are, the entries run together into one paragraph; here each becomes a list item with its
name in bold, and Sphinx roles (``:class:`~a.B```) become code spans.
"""

import re
from typing import Any, List

import griffe

SECTION = re.compile(r"^# (Parameters|Returns|Raises|Yields|Attributes)\s*$")
NAMED_SECTIONS = ("Parameters", "Attributes")
NAMED_ENTRY = re.compile(r"^(\*{0,2}[\w.]+(?:, \*{0,2}[\w.]+)*) : (.*)$")
SPHINX_ROLE = re.compile(r":(?:class|mod|func|meth|data|attr|obj|exc):`(~?)([^`]+)`")


def _role_to_code(match: "re.Match[str]") -> str:
    target = match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"


def allennlp_sections_to_markdown(text: str) -> str:
    """
    ``text`` (a cleaned docstring) with its allennlp sections as Markdown lists.

    # Parameters

    text : `str`
        The docstring as griffe holds it (common indentation removed).

    # Returns

    `str`
        The same docstring for Markdown rendering.
    """
    lines: List[str] = []
    section = None
    for line in SPHINX_ROLE.sub(_role_to_code, text).split("\n"):
        heading = SECTION.match(line)
        if heading:
            section = heading.group(1)
            lines.append(f"**{section}:**")
            continue
        if line.startswith("#"):
            section = None
        if section is not None and line.strip() and not line[0].isspace():
            entry = NAMED_ENTRY.match(line) if section in NAMED_SECTIONS else None
            line = f"- **{entry.group(1)}** : {entry.group(2)}" if entry else f"- {line}"
        lines.append(line)
    return "\n".join(lines)


class AllennlpDocstrings(griffe.Extension):
    """Rewrites every docstring griffe loads (modules, classes, functions, attributes)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = allennlp_sections_to_markdown(obj.docstring.value)
