"""
The how-to code of README.md, docs/spacy.md and docs/onnx.md runs as written, with the archive paths the pages
show (``models/litbank_coref/model.tar.gz``, ...) swapped for tiny trained archives and every ``runs/``
path moved under a temporary directory, and computes what the page says it computes. (The pages mark
their blocks with a skip line for tests/test_readme_snippets.py, which has no such archives.)
"""

import contextlib
import io
import os
import re
import shlex

import numpy as np
import pytest
import torch

from tests import REPO_ROOT, run_allennlp

PAGES = ("README.md", "docs/spacy.md", "docs/onnx.md")
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", flags=re.M | re.S)
SKIP_LINE = "<!-- snippet: skip run by tests/spacy_components/test_docs_examples.py with tiny trained archives -->"
ARCHIVES = {
    "models/litbank_coref/model.tar.gz": "coref",  # what `bash scripts/models.sh` trains
    "models/litbank_ner/model.tar.gz": "ner",
    "runs/my_qa/model.tar.gz": "qa",
}


def blocks():
    found = []
    for page in PAGES:
        text = (REPO_ROOT / page).read_text(encoding="utf-8")
        for number, match in enumerate(PYTHON_BLOCK.finditer(text)):
            line_above = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            found.append(pytest.param(page, match.group(1), line_above, id=f"{page}#{number}"))
    return found


def with_test_paths(source: str, archives, tmp_path) -> str:
    for shown, name in ARCHIVES.items():
        source = source.replace(shown, str(archives[name]))
    return source.replace("runs/", f"{tmp_path}/runs/")


def test_the_pages_have_their_examples():
    assert [param.id for param in blocks()] == [f"README.md#{i}" for i in range(2)] + [
        f"docs/spacy.md#{i}" for i in range(3)
    ] + [f"docs/onnx.md#{i}" for i in range(3)]


@pytest.mark.parametrize("page, source, line_above", blocks())
def test_python_block_runs(page, source, line_above, archives, tmp_path):
    assert line_above == SKIP_LINE  # test_readme_snippets.py skips it: this test runs it
    (tmp_path / "runs").mkdir()  # as in a checkout, where runs/ holds the trainings
    namespace = {"__name__": "docs_example"}
    printed = io.StringIO()
    cwd = os.getcwd()
    os.chdir(REPO_ROOT)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(with_test_paths(source, archives, tmp_path), page, "exec"), namespace)
    finally:
        os.chdir(cwd)
    lines = printed.getvalue().splitlines()
    if "span_probs" in namespace:  # onnx.md: span NER scores = the PyTorch model's
        model, tensors = namespace["model"], namespace["tensors"]
        with torch.no_grad():
            expected = model(**tensors)
        mask = expected["span_mask"].numpy()
        assert np.abs(namespace["span_probs"] - expected["probs"].numpy())[mask].max() <= 1e-4
        assert lines == [str(namespace["span_probs"].shape)]
    elif "mention_scores" in namespace:  # onnx.md: coreference mention scores = the PyTorch model's
        model, arrays = namespace["model"], namespace["inputs"]
        with torch.no_grad():
            states = model.encoder(namespace["tensors"]["text"])[0, : len(arrays["piece_positions"])]
            expected = model._mention_scorer.score_candidates(
                model._span_embedder,
                states,
                *(torch.from_numpy(arrays[name]) for name in ("span_starts", "span_ends", "widths")),
            ).numpy()
        assert np.abs(namespace["mention_scores"] - expected).max() <= 1e-4
        assert len(namespace["spans"]) == len(expected) and lines[0] == str(namespace["states"].shape)
        assert len(lines) == 5 and namespace["states"].shape[0] == len(arrays["input_ids"])
    elif "start_logits" in namespace:  # onnx.md: QA without PyTorch
        length = namespace["encoded"]["input_ids"].shape[1]
        assert lines == [f"(1, {length}) (1, {length})"]
    elif "coref" in namespace and "ner" in namespace:  # README.md: Coreference and SpanNer on raw text
        doc = namespace["doc"]
        assert lines[:2] == [str(doc.clusters), str(doc.cluster_strings)]
        assert doc.cluster_strings == [[doc.text[start:end] for start, end in cluster] for cluster in doc.clusters]
        ner_doc = namespace["ner"].predict("Anna met Tom in Paris.")
        assert lines[2] == str(ner_doc.entity_strings) and ner_doc.entities
    elif page == "README.md":  # README.md: the spaCy component's span groups
        doc = namespace["doc"]
        assert lines == [str(doc._.spanbert_coref_clusters), str(doc.spans["spanbert_coref_clusters_1"])]
        assert list(doc.spans["spanbert_coref_clusters_1"]) == doc._.spanbert_coref_clusters[0]
    elif "reloaded" in namespace:  # spacy.md: nlp.pipe and to_disk / spacy.load
        assert lines == ["['spanbert_coref']"]
        assert (tmp_path / "runs" / "my_pipeline" / "spanbert_coref" / "model.tar.gz").is_file()
    elif "entities" in namespace:  # spacy.md: span NER
        assert {"his PER", "his family PER"} <= {line.rsplit(" ", 1)[0] for line in lines[:-1]}
        assert lines[-1] == str([(ent.text, ent.label_) for ent in namespace["doc"].ents])
        assert namespace["doc"].ents
    else:  # spacy.md: coreference
        doc = namespace["doc"]
        clusters = doc._.spanbert_coref_clusters
        assert any(len(cluster) >= 2 for cluster in clusters)
        assert lines == [str([(s.text, s.start, s.end) for s in cluster]) for cluster in clusters] + [
            doc._.spanbert_resolved_text
        ]


def test_the_export_command_of_the_page_runs(archives, tmp_path):
    text = (REPO_ROOT / "docs" / "onnx.md").read_text(encoding="utf-8")
    (command,) = [line.split("#")[0] for line in text.splitlines() if line.startswith("allennlp export-onnx ")]
    arguments = shlex.split(with_test_paths(command, archives, tmp_path))[1:]
    completed = run_allennlp(arguments)
    assert "qa_span_logits.onnx" in completed.stdout and "stays in PyTorch:" in completed.stdout
    assert {path.name for path in (tmp_path / "runs" / "my_qa" / "onnx").iterdir()} == {
        "encoder.onnx",
        "qa_span_logits.onnx",
        "export.json",
        "README.txt",
        "tokenizer",
    }
