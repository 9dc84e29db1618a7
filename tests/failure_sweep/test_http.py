"""Every HTTP case of the sweep (:func:`~tests.failure_sweep.cases.http_cases`) must be graded good."""

import dataclasses

import pytest

from tests.failure_sweep.cases import http_cases
from tests.failure_sweep.running import run_http_case

CASES = {case.name: case for case in http_cases()}


@pytest.mark.parametrize("name", list(CASES))
def test_http_case(name, sweep_server, record_property):
    result = run_http_case(CASES[name], sweep_server)
    record_property("failure_sweep", dataclasses.asdict(result))
    assert result.grade == "good", result.failure_report()
