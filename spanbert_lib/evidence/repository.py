"""Where this checkout is, and the tools of the environment running the scripts."""

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def tool(name: str) -> str:
    """The console script ``name`` (``allennlp``, ``python``) of the environment running this interpreter."""
    return str(Path(sys.executable).with_name(name))
