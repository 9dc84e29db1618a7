"""
The sweep's session fixtures: the tiny archives (trained once per test run), the workspace of this session's cases,
and ``allennlp serve``'s application on a free loopback port for the HTTP cases.
"""

import argparse

import pytest

from tests import TINY_BERT_DIR
from tests.failure_sweep.archives import Archives, shared_archives
from tests.failure_sweep.running import serving
from tests.failure_sweep.workspace import Workspace


@pytest.fixture(scope="session")
def sweep_archives(tmp_path_factory) -> Archives:
    return shared_archives(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def sweep_workspace(tmp_path_factory, sweep_archives) -> Workspace:
    from allennlp.common.plugins import import_plugins

    import_plugins()  # as the allennlp command does, before the first case forks
    return Workspace(tmp_path_factory.mktemp("failure_sweep"), sweep_archives)


def served_app(archives: Archives):
    """``allennlp serve``'s application for the QA and coreference archives (as the command builds it)."""
    from allennlp.commands.subcommand import Subcommand

    from spanbert_lib.commands.serve import build_app

    subparser = Subcommand.by_name("serve")().add_subparser(argparse.ArgumentParser().add_subparsers())
    arguments = ["--model", f"qa={archives.qa}", "--model", f"coref={archives.coref}"]
    return build_app(subparser.parse_args([*arguments, "--masking-tokenizer", str(TINY_BERT_DIR)]))


@pytest.fixture(scope="session")
def sweep_server(sweep_archives) -> int:
    """The port of the served application."""
    with serving(served_app(sweep_archives)) as port:
        yield port
