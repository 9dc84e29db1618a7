"""Where this checkout is, and the tools of the environment running the scripts."""

import sys
from pathlib import Path
from typing import List

REPO_ROOT = Path(__file__).resolve().parents[1]


def tool(name: str) -> str:
    """The console script ``name`` (``allennlp``, ``python``) of the environment running this interpreter."""
    return str(Path(sys.executable).with_name(name))


def module_command(module: str) -> List[str]:
    """
    ``python -m MODULE`` with this environment's interpreter: how one script of the harness starts another
    (``"evidence.coref_litbank_baseline"``). The command must run from :data:`REPO_ROOT`, which holds the package.
    """
    return [tool("python"), "-m", module]
