"""
evidence/baselines/: the neutral JSONL the anchors (fastcoref, maverick-coref, span-marker) train from and the way their
predictions come back to the library's scorers. Nothing here needs the anchors' environment.
"""

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from spanbert_lib.commands.coref_score_cli import score_conll_files
from spanbert_lib.coref.dataset_readers.conll_format import (
    MIN_COLUMNS_WITH_WORDS,
    iter_conll_documents,
    read_conll_documents,
)
from spanbert_lib.ner.dataset_readers.litbank_format import read_litbank_document
from tests import REPO_ROOT, require_external_data

BASELINES = REPO_ROOT / "evidence" / "baselines"
DEV = "70:73"  # three of the ten dev documents keep the test quick


def load(name: str):
    """A module of the main environment's side (``evidence.baselines.NAME``)."""
    return importlib.import_module(f"evidence.baselines.{name}")


def load_anchor_side(name: str, monkeypatch):
    """An adapter or runner as its own environment imports it: a plain module beside its siblings (its folder first
    on ``sys.path``, as when it runs as a script)."""
    monkeypatch.syspath_prepend(str(BASELINES))
    return importlib.import_module(name)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """litbank_export.py's files for 2 training and 3 dev documents, and the LitBank folders they came from."""
    coref_dir = require_external_data("coref", "litbank")
    ner_dir = require_external_data("ner", "litbank")
    out = tmp_path_factory.mktemp("baselines_data")
    counts = load("litbank_export").export(out, ":2", DEV, coref_dir, ner_dir)
    return out, counts, coref_dir, ner_dir


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def test_coref_export_holds_the_documents_as_the_library_reads_them(exported):
    out, counts, coref_dir, _ = exported
    files = sorted(coref_dir.glob("*conll"))
    records = read_jsonl(out / "coref_dev.jsonl")
    documents = [d for path in files[70:73] for d in iter_conll_documents(path, min_columns=MIN_COLUMNS_WITH_WORDS)]
    assert counts["coref_train.jsonl"] == 2 and len(records) == counts["coref_dev.jsonl"] == 3
    for record, document in zip(records, documents):
        assert record["doc_key"] == document.doc_key
        assert record["sentences"] == document.sentences
        assert record["clusters"] == [[list(span) for span in cluster] for cluster in document.clusters]
    clusters = [cluster for record in records for cluster in record["clusters"]]
    assert any(len(cluster) == 1 for cluster in clusters), "LitBank's singletons are kept"
    mentions = [tuple(mention) for cluster in clusters for mention in cluster]
    assert any(s1 < s2 and e2 <= e1 for s1, e1 in mentions for s2, e2 in mentions), "nested mentions are kept"


def test_ner_export_is_one_line_per_sentence_with_nested_entities(exported):
    out, counts, _, ner_dir = exported
    records = read_jsonl(out / "ner_dev.jsonl")
    documents = [read_litbank_document(str(path)) for path in sorted(ner_dir.glob("*.tsv"))[70:73]]
    assert len(records) == counts["ner_dev.jsonl"] == sum(len(d.sentences) for d in documents)
    first = documents[0]
    assert records[0]["id"] == f"{first.doc_id}#0" and records[0]["tokens"] == first.sentences[0]
    by_id = {record["id"]: record for record in records}
    for document in documents:
        for index, entities in enumerate(document.entities):
            assert by_id[f"{document.doc_id}#{index}"]["entities"] == [list(entity) for entity in entities]
    nested = [
        record
        for record in records
        if any(
            s1 <= s2 and e2 <= e1 and (s1, e1) != (s2, e2)
            for s1, e1, _ in record["entities"]
            for s2, e2, _ in record["entities"]
        )
    ]
    assert nested, "nested entities are kept"


def test_gold_clusters_converted_back_score_100_with_and_without_singletons(exported, tmp_path):
    out, _, _, _ = exported
    convert = load("predictions_to_conll").convert
    key, key_without = out / "coref_dev_key.conll", out / "coref_dev_key_no_singletons.conll"
    response, response_without = tmp_path / "response.conll", tmp_path / "response_without.conll"
    assert not any(convert(key, out / "coref_dev.jsonl", response).values())
    convert(key, out / "coref_dev.jsonl", response_without, drop_singletons=True)
    assert score_conll_files(str(key), str(response)).scores()["conll_f1"] == pytest.approx(1.0)
    assert score_conll_files(str(key_without), str(response_without)).scores()["conll_f1"] == pytest.approx(1.0)
    # the two keys differ by LitBank's singletons: gold without them scores well below 100 against the full key
    assert score_conll_files(str(key), str(response_without)).scores()["conll_f1"] < 0.9
    # and the command users run agrees
    completed = subprocess.run(
        [str(Path(sys.executable).parent / "allennlp"), "coref-score", "--json", str(key), str(response)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert json.loads(completed.stdout)["conll_f1"] == pytest.approx(1.0)


def test_predictions_the_brackets_cannot_hold_are_repaired_and_counted(exported, tmp_path):
    out, _, _, _ = exported
    module = load("predictions_to_conll")
    key = out / "coref_dev_key.conll"
    documents = read_conll_documents(key)
    predictions = tmp_path / "predictions.jsonl"
    # one cluster with two crossing mentions, a mention repeated in a second cluster, a singleton
    clusters = [[[0, 2], [1, 3], [5, 5]], [[5, 5], [7, 7], [8, 8]], [[10, 10]]]
    lines = [{"doc_key": d.doc_key, "clusters": clusters if i == 0 else []} for i, d in enumerate(documents)]
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    counts = module.convert(key, predictions, tmp_path / "response.conll")
    assert counts == {"repeated_mentions_dropped": 1, "crossing_mentions_dropped": 1, "missing_documents": 0}
    written = read_conll_documents(tmp_path / "response.conll")
    assert [d.doc_key for d in written] == [d.doc_key for d in documents]
    assert sorted(map(sorted, written[0].clusters)) == [[(0, 2), (5, 5)], [(7, 7), (8, 8)], [(10, 10)]]
    module.convert(key, predictions, tmp_path / "without.conll", drop_singletons=True)
    assert sorted(map(sorted, read_conll_documents(tmp_path / "without.conll")[0].clusters)) == [
        [(0, 2), (5, 5)],
        [(7, 7), (8, 8)],
    ]


@pytest.mark.parametrize(
    "lines, options, message",
    [
        (lambda docs: [{"doc_key": d.doc_key, "clusters": []} for d in docs[1:]], [], "no prediction for key document"),
        (lambda docs: [{"doc_key": "elsewhere", "clusters": []}], ["--allow-missing"], "not in the key"),
        (lambda docs: [{"doc_key": docs[0].doc_key, "clusters": [[[0, 10**6]]]}], ["--allow-missing"], "outside"),
        (
            lambda docs: [{"doc_key": docs[0].doc_key, "sentences": [["a"]], "clusters": []}],
            ["--allow-missing"],
            "1 words",
        ),
    ],
)
def test_predictions_that_do_not_fit_the_key_are_refused_in_one_line(exported, tmp_path, lines, options, message):
    out, _, _, _ = exported
    key = out / "coref_dev_key.conll"
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines(read_conll_documents(key))))
    command = [
        sys.executable,
        "-m",
        "evidence.baselines.predictions_to_conll",
        "--key",
        str(key),
        "--predictions",
        str(predictions),
        "--out",
        str(tmp_path / "r"),
    ]
    completed = subprocess.run(command + options, capture_output=True, text=True, cwd=REPO_ROOT)
    assert completed.returncode == 1
    assert completed.stderr.startswith("error: ") and len(completed.stderr.strip().splitlines()) == 1
    assert message in completed.stderr


def test_ner_scores_are_the_library_exact_match_f1(exported, tmp_path, monkeypatch):
    out, _, _, _ = exported
    score = load("score_predictions").score_ner
    gold = read_jsonl(out / "ner_dev.jsonl")
    run = tmp_path / "run"
    run.mkdir()
    (run / "dev_predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gold))
    assert score(out, run)["f1"] == pytest.approx(100.0)
    # a flat decoder: only entities no other entity of the sentence contains
    flat = []
    for record in gold:
        outer = [
            e
            for e in record["entities"]
            if not any(o != e and o[0] <= e[0] and e[1] <= o[1] for o in record["entities"])
        ]
        flat.append({"id": record["id"], "entities": outer})
    (run / "dev_predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in flat))
    scores = score(out, run)
    assert scores["precision"] == pytest.approx(100.0) and scores["recall"] < 100.0


def test_segments_fit_the_encoder_and_cover_the_document():
    segment_bounds = load("anchor_common").segment_bounds
    assert segment_bounds(300, 512) == [(0, 300)]
    for length in (512, 513, 1022, 1023, 2600):
        bounds = segment_bounds(length, 512)
        assert bounds[0][0] == 0 and bounds[-1][1] == length
        assert all(end == next_start for (_, end), (next_start, _) in zip(bounds, bounds[1:]))
        for start, end in bounds:
            added = int(start > 0) + int(end < length)
            assert 0 < end - start and end - start + added <= 512


@pytest.mark.parametrize("adapter", ["fastcoref_litbank", "maverick_litbank", "spanmarker_litbank"])
def test_an_adapter_outside_its_environment_names_the_command_that_makes_it(adapter, tmp_path):
    data = tmp_path / "x.jsonl"
    data.write_text("{}\n")
    completed = subprocess.run(
        [
            sys.executable,
            str(BASELINES / f"{adapter}.py"),
            "--train",
            str(data),
            "--dev",
            str(data),
            "--out",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert completed.returncode == 1
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "python -m evidence.baselines.make_env" in lines[0] and ".venv-baselines/anchors" in lines[0]


def test_the_export_says_which_files_it_holds(exported):
    out, counts, _, _ = exported
    manifest = json.loads((out / "export.json").read_text())
    assert (manifest["train"], manifest["dev"]) == (":2", DEV) and manifest["counts"] == counts


def test_a_saved_model_is_checked_tensor_by_tensor(tmp_path):
    import torch

    check = load("anchor_common").check_same_tensors
    trained = {"encoder.weight": torch.ones(2, 3), "head.bias": torch.zeros(3)}
    assert check(trained, {name: tensor.clone() for name, tensor in trained.items()}, tmp_path) == 2
    changed = dict(trained, **{"head.bias": torch.tensor([0.0, 0.0, 1e-6])})
    with pytest.raises(RuntimeError, match="1 tensors differ, e.g. head.bias"):
        check(trained, changed, tmp_path)
    with pytest.raises(RuntimeError, match="e.g. encoder.weight"):
        check(trained, {"head.bias": trained["head.bias"]}, tmp_path)


def test_a_saved_fastcoref_model_names_its_architecture(tmp_path, monkeypatch):
    architecture_of = load_anchor_side("fastcoref_inference", monkeypatch).architecture_of
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["LingMessModel"], "coref_head": {}}))
    assert architecture_of(tmp_path) == "LingMessModel"
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertModel"]}))
    with pytest.raises(ValueError, match="names no fastcoref architecture"):
        architecture_of(tmp_path)


def test_spanmarkers_curve_callback_predicts_every_n_steps_but_the_last_in_eval_mode(tmp_path, monkeypatch):
    from types import SimpleNamespace

    import torch

    adapter = load_anchor_side("spanmarker_litbank", monkeypatch)
    model = torch.nn.Linear(1, 1)
    modes = []

    def predict():
        modes.append(model.training)
        return [{"id": "s1", "entities": []}]

    curve = load_anchor_side("anchor_common", monkeypatch).LearningCurve(
        tmp_path, every=300, epochs=0, predict=predict, unit="step"
    )
    callback = adapter.curve_callback(curve, model)
    callback.on_train_begin(None, SimpleNamespace(max_steps=900), None)
    for step in range(1, 901):
        callback.on_step_end(None, SimpleNamespace(global_step=step, max_steps=900), None)
    # steps 300 and 600; step 900's point is the run's final predictions
    assert [point["step"] for point in curve.points] == [300, 600] and curve.epochs == 900
    assert modes == [False, False] and model.training
    assert (tmp_path / "curve" / "step_600" / "dev_predictions.jsonl").exists()
    assert json.loads((tmp_path / "curve" / "points.json").read_text())["every_steps"] == 300
