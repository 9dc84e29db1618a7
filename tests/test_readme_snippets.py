"""
Every ```python block of README.md and of the documentation pages (docs/**/*.md) runs as written, from the
repository root (the path of the main job's archive swapped for a test-sized one), and computes what it says
it computes. A block that needs data absent from the repository may opt out with the line
``<!-- snippet: skip REASON -->`` right above it.
"""

import contextlib
import io
import os
import re
from pathlib import Path
from typing import List, NamedTuple, Optional

import pytest
from allennlp.commands.train import train_model_from_file

from tests import REPO_ROOT

DOCUMENTS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]
PRETRAINING_CONFIG = REPO_ROOT / "fixtures" / "configs" / "pretraining" / "spanbert_tiny.jsonnet"
MAIN_JOB_ARCHIVE = "outputs/main_job/model/model.tar.gz"
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", flags=re.M | re.S)
SKIP_MARKER = re.compile(r"<!-- snippet: skip (?P<reason>\S.*?) -->\s*\Z")


class Block(NamedTuple):
    where: str
    """``PATH:LINE`` of the block's first source line, PATH relative to the repository root."""
    source: str
    skip_reason: Optional[str]


def python_blocks() -> List[Block]:
    """The ```python blocks of every document, with their opt-out reason (None: the block runs)."""
    blocks = []
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(REPO_ROOT).as_posix()
        for match in PYTHON_BLOCK.finditer(text):
            line_above = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            skip = SKIP_MARKER.match(line_above)
            where = f"{name}:{text.count(chr(10), 0, match.start()) + 2}"
            blocks.append(Block(where, match.group(1), skip.group("reason") if skip else None))
    return blocks


BLOCKS = python_blocks()


def test_the_documentation_has_python_blocks():
    pages_with_blocks = {block.where.split(":")[0] for block in BLOCKS}
    for page in ("pretraining", "coref", "qa", "relation", "entities", "span_heads"):
        assert f"docs/{page}.md" in pages_with_blocks, f"docs/{page}.md lost its Python example"


@pytest.mark.parametrize("path", DOCUMENTS, ids=[p.relative_to(REPO_ROOT).as_posix() for p in DOCUMENTS])
def test_no_python_block_escapes_the_test(path):
    """An indented or tilde-fenced python block would not be found by PYTHON_BLOCK, so it would never run."""
    text = path.read_text(encoding="utf-8")
    assert not re.findall(r"^[ \t]+(?:```|~~~)\s*python", text, flags=re.M)
    assert not re.findall(r"^~~~\s*python", text, flags=re.M)


@pytest.fixture(scope="module")
def pretraining_archive(tmp_path_factory) -> Path:
    """A test-sized stand-in for the main job's archive."""
    serialization_dir = tmp_path_factory.mktemp("readme_pretraining")
    train_model_from_file(str(PRETRAINING_CONFIG), str(serialization_dir))
    return serialization_dir / "model.tar.gz"


@pytest.mark.parametrize("block", BLOCKS, ids=[block.where for block in BLOCKS])
def test_python_block_runs(block, request):
    if block.skip_reason is not None:
        pytest.skip(f"{block.where}: {block.skip_reason}")
    source = block.source
    if MAIN_JOB_ARCHIVE in source:
        archive = request.getfixturevalue("pretraining_archive")
        source = source.replace(MAIN_JOB_ARCHIVE, str(archive))
    namespace = {"__name__": "snippet_" + re.sub(r"\W", "_", block.where)}
    printed = io.StringIO()
    cwd = os.getcwd()
    os.chdir(REPO_ROOT)  # the snippets use paths relative to the repository root
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(source, block.where, "exec"), namespace)
    finally:
        os.chdir(cwd)
    check_results(namespace, printed.getvalue().splitlines())


def check_results(namespace, printed: List[str]) -> None:
    """What each kind of block computes, checked against what it says it computes."""
    if "span_vectors" in namespace:  # span-boundary extractor and head
        assert tuple(namespace["span_vectors"].shape) == (2, 2, 768)
    if "evaluation" in namespace:  # held-out evaluation of a pre-training archive
        numbers = [float(x) for line in printed for x in line.split()]
        *accuracies, perplexity = numbers  # three accuracies, the accuracy at [MASK], then the perplexity there
        assert len(accuracies) == 4 and all(0.0 <= x <= 1.0 for x in accuracies)
        assert numbers[0] == namespace["evaluation"].accuracy("mlm")
        assert perplexity == namespace["evaluation"].perplexity("mlm", replaced_by_mask=True) and perplexity > 1.0
    if "MySpanModel" in namespace:  # a new span model on the library's pieces
        hidden = namespace["model"].encoder.get_output_dim()
        assert printed == [f"torch.Size([1, 2, {2 * hidden}])", "BertModel"]
    if "masker" in namespace:  # the pre-training reader and a masker
        _check_masking(namespace)
    if "documents" in namespace:  # the coreference reader and model
        _check_coreference(namespace, printed)
    if "questions" in namespace:  # the QA reader and model
        _check_question_answering(namespace)
    if "semeval" in namespace:  # the relation readers
        assert printed[0].startswith("per:city_of_birth [CLS] [SUBJ-PERSON] agnes thorn ##bury [/SUBJ-PERSON] was born")
        assert "[OBJ-CITY] tar ##row ##by [/OBJ-CITY]" in printed[0]
        assert printed[1] == "Cause-Effect(e2,e1) [CLS] the [SUBJ-MISC] burst [/SUBJ-MISC] was caused by rising " + (
            "[OBJ-MISC] pressure [/OBJ-MISC] . [SEP]"
        )
    if "entity_states" in namespace:  # the span NER reader and the entity-aware encoder
        assert namespace["sentence"]["metadata"]["gold_entities"] == [(0, 0, "PER"), (2, 2, "LOC")]
        words = len(namespace["sentence"]["metadata"]["words"])
        assert len(namespace["sentence"]["spans"]) == sum(min(4, words - start) for start in range(words))
        hidden = namespace["encoder"].get_output_dim()
        assert tuple(namespace["word_states"].shape) == (1, 5, hidden)
        assert tuple(namespace["entity_states"].shape) == (1, 1, hidden)


def _check_masking(namespace) -> None:
    masked, block = namespace["masked"], namespace["blocks"][1]
    word_ids = block["word_ids"].tensor
    assert masked.input_ids.shape == (1, len(word_ids))
    fraction = float(masked.masked_positions.float().mean())
    assert 0.0 < fraction < 0.3  # a 15 % budget of whole words in expectation
    for _, first, last in masked.spans.tolist():  # spans of whole words
        assert word_ids[first] >= 0 and word_ids[first] != word_ids[first - 1]
        assert last + 1 == len(word_ids) or word_ids[last + 1] != word_ids[last]


def _check_coreference(namespace, printed: List[str]) -> None:
    metadata = namespace["document"]["metadata"]
    assert printed[0] == f"{metadata['doc_key']} {len(metadata['words'])} words"
    assert metadata["clusters"] and all(len(cluster) >= 1 for cluster in metadata["clusters"])
    clusters = namespace["output"]["clusters"]
    assert isinstance(clusters, list)
    for cluster in clusters:
        assert len(cluster) >= 2
        assert all(0 <= start <= end < len(metadata["words"]) for start, end in cluster)


def _check_question_answering(namespace) -> None:
    output, metadata = namespace["output"], namespace["question"]["metadata"]
    start, end = [int(x) for x in output["best_span"]]
    assert 0 <= start < end <= len(metadata["context"])
    assert output["best_span_str"] == metadata["context"][start:end]
    assert metadata["answers"] == ["March 1932", "in March 1932"]
