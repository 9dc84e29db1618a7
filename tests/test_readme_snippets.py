"""Every ```python block of README.md runs as written (paths to run outputs swapped for test-sized ones)."""

import contextlib
import io
import os
import re
from pathlib import Path

import pytest
from allennlp.commands.train import train_model_from_file

from tests.conftest import REPO_ROOT

README = REPO_ROOT / "README.md"
PRETRAINING_CONFIG = REPO_ROOT / "fixtures" / "configs" / "pretraining" / "spanbert_tiny.jsonnet"
MAIN_JOB_ARCHIVE = "outputs/main_job/model/model.tar.gz"


def python_blocks():
    """``(first line number, source)`` of each ```python block of the README."""
    text = README.read_text(encoding="utf-8")
    blocks = []
    for match in re.finditer(r"^```python\n(.*?)^```$", text, flags=re.M | re.S):
        blocks.append((text.count("\n", 0, match.start()) + 2, match.group(1)))
    return blocks


BLOCKS = python_blocks()


def test_the_readme_has_python_blocks():
    assert len(BLOCKS) >= 3


@pytest.fixture(scope="module")
def pretraining_archive(tmp_path_factory) -> Path:
    """A test-sized stand-in for the main job's archive."""
    serialization_dir = tmp_path_factory.mktemp("readme_pretraining")
    train_model_from_file(str(PRETRAINING_CONFIG), str(serialization_dir))
    return serialization_dir / "model.tar.gz"


@pytest.mark.parametrize("line, source", BLOCKS, ids=[f"README.md:{line}" for line, _ in BLOCKS])
def test_readme_python_block_runs(line, source, request):
    if MAIN_JOB_ARCHIVE in source:
        archive = request.getfixturevalue("pretraining_archive")
        source = source.replace(MAIN_JOB_ARCHIVE, str(archive))
    namespace = {"__name__": f"readme_block_{line}"}
    printed = io.StringIO()
    cwd = os.getcwd()
    os.chdir(REPO_ROOT)  # the snippets use paths relative to the repository root
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(source, f"README.md:{line}", "exec"), namespace)
    finally:
        os.chdir(cwd)
    check_results(namespace, printed.getvalue())


def check_results(namespace, printed: str) -> None:
    """What each kind of block computes, checked against what it says it computes."""
    if "span_vectors" in namespace:  # span-boundary extractor and head
        assert tuple(namespace["span_vectors"].shape) == (2, 2, 768)
    if "evaluation" in namespace:  # held-out evaluation of a pre-training archive
        numbers = [float(x) for x in printed.split()]
        assert len(numbers) == 4 and all(0.0 <= x <= 1.0 for x in numbers)
        assert numbers[0] == namespace["evaluation"].accuracy("mlm")
    if "MySpanModel" in namespace:  # a new span model on the library's pieces
        hidden = namespace["model"].encoder.get_output_dim()
        assert printed.strip() == f"torch.Size([1, 2, {2 * hidden}])"
