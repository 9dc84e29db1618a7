"""Every command case of the sweep (:data:`~tests.failure_sweep.cases.COMMAND_CASES`) must be graded good."""

import dataclasses

import pytest

from tests import REPO_ROOT
from tests.failure_sweep.cases import COMMAND_CASES
from tests.failure_sweep.running import run_case

PARAMETERS = [
    pytest.param(name, id=name, marks=[pytest.mark.slow] if name in COMMAND_CASES.slow else [])
    for name, _ in COMMAND_CASES
]


@pytest.mark.parametrize("name", PARAMETERS)
def test_command_case(name, sweep_workspace, record_property):
    directory = sweep_workspace.case_dir(name)
    case = COMMAND_CASES.builders[name](directory)
    case.watch = [*case.watch, sweep_workspace.archives.root]  # no case may touch the shared archives
    shown_from = (sweep_workspace.root, sweep_workspace.archives.root.parent, REPO_ROOT)
    result = run_case(name, case, directory.path, sweep_workspace.logs / name, shown_from)
    record_property("failure_sweep", dataclasses.asdict(result))
    assert result.grade == "good", result.failure_report()
