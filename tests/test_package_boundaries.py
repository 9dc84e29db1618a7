"""
The layout rules of the README's "Conventions", checked on the source with ``ast`` (nothing is
imported): no task package imports another task's package, ``common`` imports no task, no module imports itself
back through others (no import cycles, function-level imports included), and the library stands alone: it imports
nothing of the repository's harness (``evidence``, ``benchmarks``, ``scripts``, ``tests``), and its wheel ships
``spanbert_lib`` only.
"""

import ast
from pathlib import Path
from typing import Dict, List, Set

import pytest

from tests import REPO_ROOT

PACKAGE_ROOT = REPO_ROOT / "spanbert_lib"
# the repository's own top-level folders of Python code: never imported by the library, never in its wheel
HARNESS = ("evidence", "benchmarks", "scripts", "tests")
TASK_PACKAGES = {"coref", "qa", "relation", "ner", "entity_typing", "pretraining"}
# applications over the tasks (CLI commands, the demo server, spaCy components, ONNX export, the raw-text pipelines,
# model packages) may import any task
APPLICATION_PACKAGES = {"commands", "serving", "spacy_components", "onnx_export", "pipelines", "packaging"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path, modules: Set[str]) -> Set[str]:
    """The spanbert_lib modules ``path`` imports anywhere in its body (``from P import name`` of a
    submodule ``P.name`` counts as importing ``P.name``)."""
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        imported.update(name for name in names if name in modules)
    return imported


def _import_graph() -> Dict[str, Set[str]]:
    paths = {_module_name(path): path for path in PACKAGE_ROOT.rglob("*.py")}
    return {name: _imported_modules(path, set(paths)) for name, path in paths.items()}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


GRAPH = _import_graph()


def test_the_graph_sees_the_imports():
    assert "spanbert_lib.common.errors" in GRAPH["spanbert_lib.common.text_files"]
    assert len(GRAPH) > 100


@pytest.mark.parametrize("package", sorted(TASK_PACKAGES | {"common"}))
def test_no_package_imports_another_task(package):
    crossings = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if _package(module) == package
        for target in targets
        if _package(target) != package and _package(target) in TASK_PACKAGES | APPLICATION_PACKAGES
    )
    assert crossings == []


def test_no_import_cycles():
    """A package's ``__init__`` importing its own submodules is not a cycle; anything else that
    leads back to where it started is."""

    def edges(module: str) -> List[str]:
        return sorted(target for target in GRAPH[module] if not target.startswith(module + "."))

    cycles = []
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    path: List[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in edges(module):
            if state.get(target) == 1:
                cycles.append(path[path.index(target) :] + [target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module)
    assert cycles == []


def _top_level_imports(path: Path) -> Set[str]:
    """The first name of every absolute module ``path`` imports anywhere in its body."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_the_library_imports_nothing_of_the_harness():
    found = sorted(
        f"{path.relative_to(REPO_ROOT)} imports {name}"
        for path in PACKAGE_ROOT.rglob("*.py")
        for name in _top_level_imports(path) & set(HARNESS)
    )
    assert found == []


def _setup_find_packages_call() -> ast.Call:
    """The ``find_packages(...)`` call that gives ``setup(packages=...)`` in ``setup.py``."""
    tree = ast.parse((REPO_ROOT / "setup.py").read_text(encoding="utf-8"))
    setup_calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setup"
    ]
    assert len(setup_calls) == 1, "setup.py calls setup() once"
    packages = {keyword.arg: keyword.value for keyword in setup_calls[0].keywords}.get("packages")
    assert isinstance(packages, ast.Call) and getattr(packages.func, "id", None) == "find_packages", (
        "setup(packages=find_packages(...)) is the one list of what the wheel ships"
    )
    return packages


def test_the_wheel_ships_the_library_only():
    """The packages ``setup.py`` gives setuptools, found as it finds them (no wheel is built)."""
    from setuptools import find_packages

    call = _setup_find_packages_call()
    assert not call.args, "find_packages is called with keywords only"
    arguments = {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}
    packages = find_packages(where=str(REPO_ROOT), **arguments)
    assert "spanbert_lib" in packages and "spanbert_lib.commands" in packages
    assert [package for package in packages if package.split(".")[0] != "spanbert_lib"] == []
    for harness in HARNESS:
        assert (REPO_ROOT / harness).is_dir()
        assert not any(package.split(".")[0] == harness for package in packages)


# ---- one room template for every task (docs/design/adding_a_task.md) ----------------------------------------

ROOMS = ("dataset_readers", "models", "predictors", "metrics")


def _registrations(path: Path, registry: str) -> List[tuple]:
    """``(registered name, class name)`` of the classes of ``path`` decorated ``@REGISTRY.register("name")``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ClassDef):
            continue
        for decorator in node.decorator_list:
            if (
                isinstance(decorator, ast.Call)
                and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr == "register"
                and getattr(decorator.func.value, "id", None) == registry
                and decorator.args
                and isinstance(decorator.args[0], ast.Constant)
            ):
                found.append((decorator.args[0].value, node.name))
    return found


@pytest.mark.parametrize("task", sorted(TASK_PACKAGES))
def test_every_task_has_the_rooms_and_its_init_imports_them(task):
    directory = PACKAGE_ROOT / task
    rooms = [room for room in ROOMS if (directory / room).is_dir()]
    assert {"dataset_readers", "models"} <= set(rooms)
    for room in rooms:
        assert (directory / room / "__init__.py").is_file(), f"{task}/{room} is not a package"
    imported = GRAPH[f"spanbert_lib.{task}"]
    missing = [room for room in rooms if f"spanbert_lib.{task}.{room}" not in imported]
    assert missing == [], f"spanbert_lib/{task}/__init__.py does not import {missing}"
    foreign = sorted(target for target in imported if not target.startswith(f"spanbert_lib.{task}."))
    assert foreign == [], f"spanbert_lib/{task}/__init__.py registers another package's pieces: {foreign}"


@pytest.mark.parametrize("task", sorted(TASK_PACKAGES))
def test_file_formats_live_with_the_readers(task):
    misplaced = sorted(
        str(path.relative_to(PACKAGE_ROOT))
        for path in (PACKAGE_ROOT / task).rglob("*.py")
        if path.stem.endswith(("_format", "_schema")) and path.parent.name != "dataset_readers"
    )
    assert misplaced == []


def test_one_name_rule_for_models():
    """A model class is ``SpanBert<Task>``, registered as ``spanbert_<task>`` in ``models/spanbert_<task>.py``."""
    models = [
        (path, name, class_name)
        for task in TASK_PACKAGES
        for path in (PACKAGE_ROOT / task / "models").glob("*.py")
        for name, class_name in _registrations(path, "Model")
    ]
    assert len(models) >= 7
    for path, name, class_name in models:
        assert name.startswith("spanbert_") and path.stem == name, f"{path.name} registers {name}"
        assert class_name.startswith("SpanBert"), f"{path.name}: model class {class_name}"


def test_one_name_per_class_across_the_library():
    names: Dict[str, List[str]] = {}
    for path in PACKAGE_ROOT.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                names.setdefault(node.name, []).append(str(path.relative_to(PACKAGE_ROOT)))
    assert {name: paths for name, paths in names.items() if len(paths) > 1} == {}


IMPORT_EACH_TASK = r"""
import json, sys
from allennlp.common.registrable import Registrable
found = {}
for task in sys.argv[1:]:
    before = {name for registry in Registrable._registry.values() for name in registry}
    __import__(f"spanbert_lib.{task}")
    found[task] = sorted({name for registry in Registrable._registry.values() for name in registry} - before)
print(json.dumps(found))
"""


def test_importing_a_task_package_registers_its_pieces():
    import json
    import subprocess
    import sys

    tasks = sorted(TASK_PACKAGES)
    completed = subprocess.run(
        [sys.executable, "-c", IMPORT_EACH_TASK, *tasks], capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    found = json.loads(completed.stdout.strip().splitlines()[-1])
    expected = {
        "coref": {"spanbert_coref", "conll2012_coref_scores"},
        "entity_typing": {"spanbert_entity_typing", "spanbert_open_entity", "loose_micro_f1"},
        "ner": {"spanbert_span_ner", "spanbert_span_ner_conll", "spanbert_span_ner_litbank", "ner_span_f1"},
        "pretraining": {"spanbert_pretraining", "spanbert_pretraining_corpus", "geometric_span"},
        "qa": {"spanbert_qa", "spanbert_squad", "spanbert_mrqa", "squad_metrics"},
        "relation": {"spanbert_relation_classifier", "spanbert_tacred", "spanbert_semeval2010_task8", "tacred_f1"},
    }
    for task in tasks:
        assert expected[task] <= set(found[task]), (
            f"import spanbert_lib.{task} misses {expected[task] - set(found[task])}"
        )
