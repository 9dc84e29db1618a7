"""
``allennlp export-onnx`` on tiny trained archives: every graph run by onnxruntime gives what the
PyTorch model computes on fixture data (max abs difference <= 1e-4) - the encoder's hidden states,
QA start/end logits, span NER label logits (the model's passes rebuilt by ``span_ner_rows``) and
coreference mention scores (the model's own candidate scoring) - at batch sizes and lengths other
than the trace's; export.json says what stays in PyTorch; without onnx/onnxruntime the command
says in one line how to get them.
"""

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime
import pytest
import torch
from allennlp.models.archival import load_archive

from spanbert_lib.common.transformers_encoder import huggingface_encoder
from spanbert_lib.onnx_export.dependencies import require_onnx
from spanbert_lib.onnx_export.exporter import export_onnx, run_session
from spanbert_lib.onnx_export.graph_inputs import (
    batch_tensors,
    coref_document_inputs,
    qa_window_inputs,
    span_ner_rows,
    span_ner_unpack,
)
from tests import REPO_ROOT, TINY_BERT_DIR
from tests.spacy_components.archives import _COREF_SENTENCES, shared_archives

TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    return shared_archives(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def exported(archives, tmp_path_factory):
    """``{task: (loaded archive, export directory, report)}``."""
    results = {}
    for task, archive_file in archives.items():
        directory = tmp_path_factory.mktemp(f"onnx_{task}")
        report = export_onnx(str(archive_file), str(directory))
        archive = load_archive(str(archive_file))
        archive.model.eval()
        results[task] = (archive, directory, report)
    return results


def session(path: Path):
    return onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("task", ["coref", "ner", "qa"])
def test_encoder_graph_gives_the_hidden_states(exported, task):
    archive, directory, report = exported[task]
    assert report.graphs["encoder"].max_abs_difference <= TOLERANCE
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(directory / "tokenizer"))
    texts = ["Anna told Ben that she would call him.", "The river is cold", "John and his family slept at home ."]
    encoded = tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        expected = huggingface_encoder(archive.model)(**encoded).last_hidden_state.numpy()
    (actual,) = run_session(session(directory / "encoder.onnx"), {k: v.numpy() for k, v in encoded.items()})
    real = encoded["attention_mask"].bool().numpy()
    assert actual.shape == expected.shape
    assert np.abs(actual - expected)[real].max() <= TOLERANCE


def test_qa_span_logits_match_the_model(exported):
    archive, directory, report = exported["qa"]
    instances = list(itertools.islice(archive.validation_dataset_reader.read("fixtures/qa/squad11.json"), 3))
    tensors = batch_tensors(archive.model, instances)
    archive.model.packed_inference = False  # the padded pass gives logits at every position (packed: decoded ones)
    try:
        with torch.no_grad():
            output = archive.model(**tensors)
    finally:
        archive.model.packed_inference = True
    arrays, windows = qa_window_inputs(tensors)
    assert len(windows) > len(instances)  # the longer passages span several windows
    start, end = run_session(session(directory / "qa_span_logits.onnx"), arrays)
    real = arrays["attention_mask"].astype(bool)
    for actual, key in ((start, "span_start_logits"), (end, "span_end_logits")):
        expected = output[key][windows[:, 0], windows[:, 1]].numpy()
        assert np.abs(actual - expected)[real].max() <= TOLERANCE


def test_span_ner_scores_match_the_model(exported):
    archive, directory, report = exported["ner"]
    model = archive.model
    path = REPO_ROOT / "fixtures" / "ner" / "litbank"
    instances = list(itertools.islice(archive.validation_dataset_reader.read(str(path)), 4))
    tensors = batch_tensors(model, instances)
    with torch.no_grad():
        output = model(**tensors)
    arrays, layout = span_ner_rows(tensors["tokens"], tensors["spans"], model.max_entities_per_pass)
    assert layout.num_rows > len(instances)  # several passes per sentence: the packing is exercised
    logits, probs = run_session(session(directory / "span_ner_scores.onnx"), arrays)
    span_mask = output["span_mask"].numpy()
    assert np.abs(span_ner_unpack(layout, logits) - output["logits"].numpy())[span_mask].max() <= TOLERANCE
    assert np.abs(span_ner_unpack(layout, probs) - output["probs"].numpy())[span_mask].max() <= TOLERANCE


def test_coref_mention_scores_match_the_model(exported):
    archive, directory, report = exported["coref"]
    model = archive.model
    sentences = [[word for word, _ in sentence] for sentence in _COREF_SENTENCES] * 3  # several segments
    instance = archive.validation_dataset_reader.text_to_instance(sentences)
    tensors = batch_tensors(model, [instance])
    arrays = coref_document_inputs(tensors["text"], tensors["spans"])
    assert arrays["input_ids"].shape[0] > 1
    with torch.no_grad():
        states = model.encoder(tensors["text"])[0, : len(arrays["piece_positions"])]
        expected = model._mention_scorer.score_candidates(
            model._span_embedder,
            states,
            torch.from_numpy(arrays["span_starts"]),
            torch.from_numpy(arrays["span_ends"]),
            torch.from_numpy(arrays["widths"]),
        ).numpy()
    (actual,) = run_session(session(directory / "coref_mention_scores.onnx"), arrays)
    assert actual.shape == expected.shape and len(expected) > 50
    assert np.abs(actual - expected).max() <= TOLERANCE


def test_export_json_lists_the_graphs_and_what_stays_in_pytorch(exported):
    expected_heads = {"coref": "coref_mention_scores", "ner": "span_ner_scores", "qa": "qa_span_logits"}
    for task, (_, directory, _) in exported.items():
        record = json.loads((directory / "export.json").read_text())
        assert set(record["graphs"]) == {"encoder", expected_heads[task]}
        assert record["stays_in_pytorch"] and "dynamo=False" in record["exporter"]
        for graph in record["graphs"].values():
            assert (directory / graph["file"]).is_file()
            assert graph["inputs"]["input_ids"]["dynamic_axes"]["0"] in {"batch", "rows", "segments"}
            assert graph["inputs"]["input_ids"]["dynamic_axes"]["1"] == "length"
        readme = (directory / "README.txt").read_text()
        assert "Stays in PyTorch" in readme and expected_heads[task] in readme


def test_without_the_optional_packages_one_line_says_how_to_get_them(monkeypatch, tmp_path, archives):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime now raises ImportError
    with pytest.raises(Exception, match=r"onnxruntime, not installed: pip install onnx onnxruntime \(or, from a"):
        require_onnx()
    # the command (allennlp's console entry point), with onnx hidden from its interpreter; allennlp puts
    # site-packages first on sys.path, so the module is hidden through sys.modules
    hide_and_run = (
        "import sys; sys.modules['onnx'] = None; sys.argv = ['allennlp'] + sys.argv[1:]; "
        "from allennlp.__main__ import run; run()"
    )
    completed = subprocess.run(
        [sys.executable, "-c", hide_and_run, "export-onnx", str(archives["qa"]), str(tmp_path / "out")],
        cwd=str(REPO_ROOT),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 1
    lines = [line for line in completed.stderr.splitlines() if line.strip()]
    assert lines[-1] == (
        "error: ONNX export needs the optional package onnx, not installed: "
        "pip install onnx onnxruntime (or, from a checkout of spanbert_lib: pip install '.[onnx]')"
    )
    assert "Traceback" not in completed.stderr
    assert not (tmp_path / "out").exists()


def _files(directory: Path) -> dict:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_a_reexport_replaces_the_folder_whole_and_a_killed_one_changes_nothing(
    archives, exported, tmp_path, monkeypatch
):
    import shutil

    import spanbert_lib.onnx_export.exporter as exporter

    out = tmp_path / "export"
    shutil.copytree(exported["qa"][1], out)  # another model's export
    before = _files(out)
    real_export_graph, calls = exporter.export_graph, []

    def killed_after_the_first_graph(graph, path):
        calls.append(graph.name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real_export_graph(graph, path)

    monkeypatch.setattr(exporter, "export_graph", killed_after_the_first_graph)
    with pytest.raises(KeyboardInterrupt):
        export_onnx(str(archives["ner"]), str(out))
    assert _files(out) == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["export"]  # no temporary folder left
    monkeypatch.setattr(exporter, "export_graph", real_export_graph)
    export_onnx(str(archives["ner"]), str(out))
    assert json.loads((out / "export.json").read_text())["model_type"] == "spanbert_span_ner"
    assert not (out / "qa_span_logits.onnx").exists() and (out / "span_ner_scores.onnx").is_file()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["export"]


@pytest.mark.parametrize("case", ["existing_file", "archive_folder", "encoder_folder", "foreign_files"])
def test_output_folders_that_would_lose_data_are_refused_before_the_model_loads(
    archives, tmp_path, monkeypatch, capsys, case
):
    import shutil

    import allennlp.models.archival as archival

    from tests.safeguards.in_process import run_command, snapshot, user_error_line

    archive = tmp_path / "run" / "model.tar.gz"
    archive.parent.mkdir()
    shutil.copyfile(archives["qa"], archive)
    out, expected = {
        "existing_file": (tmp_path / "notes.txt", "OUT_DIR is an existing file, not a directory"),
        "archive_folder": (archive.parent, "into the directory of the input"),
        "encoder_folder": (tmp_path / "fixtures" / "tiny_bert", "into the directory of the input"),
        "foreign_files": (tmp_path / "mine", "OUT_DIR holds files an ONNX export does not write (thesis.tex)"),
    }[case]
    if case == "existing_file":
        out.write_text("my notes")
    elif case == "encoder_folder":  # the Hugging Face folder the archive's config names
        shutil.copytree(TINY_BERT_DIR, out)
        monkeypatch.chdir(tmp_path)
    elif case == "foreign_files":
        out.mkdir()
        (out / "thesis.tex").write_text("months of work")
        (out / "encoder.onnx").write_text("an earlier export")
    before = snapshot(tmp_path)

    def must_not_load(*args, **kwargs):
        raise AssertionError("the archive was loaded")

    monkeypatch.setattr(archival, "load_archive", must_not_load)
    code, _, err = run_command(monkeypatch, capsys, "export-onnx", archive, out)
    assert code == 1 and expected in user_error_line(err)
    assert snapshot(tmp_path) == before
