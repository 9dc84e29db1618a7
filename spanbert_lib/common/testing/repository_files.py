"""Loading the repository's scripts and benchmarks (plain files, not a package) as modules in tests."""

import importlib.util
from pathlib import Path
from types import ModuleType


def load_file_module(path: Path) -> ModuleType:
    """The Python file ``path`` executed as a module named after its stem (its ``__main__`` block does not run)."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
