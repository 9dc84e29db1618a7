"""
Fixtures and hooks of the whole suite. Shared names (``REPO_ROOT``, ``TINY_BERT_DIR``, ``require_external_data``,
``run_allennlp``) are imported from ``tests`` (``tests/__init__.py``), never from here.
"""

import logging
import os
from pathlib import Path

import pytest

from tests import TINY_BERT_DIR

if os.environ.get("PYTEST_XDIST_WORKER"):
    # One torch thread per pytest-xdist worker (and per CLI subprocess it starts): with a worker
    # per core, more threads only oversubscribe the CPU.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)

import spanbert_lib.plugin  # noqa: E402,F401  (registers every component, as the CLI plugin does)


def _detach_log_files_of_removed_runs() -> None:
    loggers = [logging.getLogger(), *(one for one in logging.Logger.manager.loggerDict.values())]
    for logger in loggers:
        for handler in list(getattr(logger, "handlers", [])):
            filename = getattr(handler, "baseFilename", None)
            if filename and not os.path.isdir(os.path.dirname(filename)):
                logger.removeHandler(handler)
                handler.close()


@pytest.fixture(autouse=True)
def _no_log_file_of_a_removed_run():
    """
    An allennlp training in this process points the root logger and tqdm's at its run's ``out.log`` and leaves them
    there; once a test removed that run, a later log line would try to reopen the file. Such handlers go before and
    after each test.
    """
    _detach_log_files_of_removed_runs()
    yield
    _detach_log_files_of_removed_runs()


@pytest.fixture(scope="session")
def tiny_bert_dir() -> Path:
    """:data:`tests.TINY_BERT_DIR`, for tests that take it as a fixture."""
    return TINY_BERT_DIR


def pytest_collection_modifyitems(config, items):
    import torch

    if not torch.cuda.is_available():
        skip_gpu = pytest.mark.skip(reason="needs a CUDA device")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip_gpu)
