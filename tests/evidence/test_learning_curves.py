"""
Learning curves of the other tools given more training: the adapters' ``LearningCurve`` (dev predictions every N
epochs, their time kept out of training time, running out of memory recorded), ``evidence/coref_litbank_curves.py``
and ``evidence/ner_litbank_curves.py`` (our per-epoch validation and the other tools' curve points scored against the
same dev data, plotted, and the NER results file). Nothing here needs the other tools' environment.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evidence.baselines import litbank_export
from tests import REPO_ROOT, require_external_data


@pytest.fixture(scope="module")
def anchor_common():
    from evidence.baselines import anchor_common

    return anchor_common


def test_a_curve_predicts_every_n_epochs_and_after_the_last(anchor_common, tmp_path):
    calls = []

    def predict():
        calls.append(len(calls))
        return [{"doc_key": "d", "clusters": [[[0, 0], [2, 2]]]}]

    curve = anchor_common.LearningCurve(tmp_path, every=2, epochs=5, predict=predict)
    for epoch in range(1, 6):
        curve.after(epoch)
    curve.after(5)  # a second call for an epoch already predicted (the adapter's after-training call)
    assert [point["epoch"] for point in curve.points] == [2, 4, 5] and len(calls) == 3
    written = tmp_path / "curve" / "epoch_004" / "dev_predictions.jsonl"
    assert json.loads(written.read_text()) == {"doc_key": "d", "clusters": [[[0, 0], [2, 2]]]}
    assert curve.points[1]["run"] == str(written.parent)
    cpus = [point["training_cpu_seconds"] for point in curve.points]
    assert cpus == sorted(cpus) and all(cpu >= 0 for cpu in cpus)
    saved = json.loads((tmp_path / "curve" / "points.json").read_text())
    assert saved["every_epochs"] == 2 and [p["epoch"] for p in saved["points"]] == [2, 4, 5]


def test_no_curve_predicts_nothing(anchor_common, tmp_path):
    curve = anchor_common.LearningCurve(tmp_path, every=0, epochs=3, predict=lambda: pytest.fail("predicted"))
    for epoch in (1, 2, 3):
        curve.after(epoch)
    assert curve.points == [] and not (tmp_path / "curve").exists()
    assert curve.deduct({"wall_seconds": 10.0, "cpu_seconds": 8.0}) == {"wall_seconds": 10.0, "cpu_seconds": 8.0}


def test_the_curve_time_is_taken_out_of_training_and_memory_errors_are_points(anchor_common, tmp_path):
    def out_of_memory():
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:127] DefaultCPUAllocator: can't allocate memory")

    curve = anchor_common.LearningCurve(tmp_path, every=1, epochs=1, predict=out_of_memory)
    curve.after(1)
    [point] = curve.points
    assert "out of memory" in point["error"] and "can't allocate" in point["error"] and "run" not in point
    curve.spent = {"wall_seconds": 3.0, "cpu_seconds": 2.5}
    assert curve.deduct({"wall_seconds": 10.0, "cpu_seconds": 8.0}) == {"wall_seconds": 7.0, "cpu_seconds": 5.5}

    def other_failure():
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match="shape mismatch"):
        anchor_common.LearningCurve(tmp_path, every=1, epochs=1, predict=other_failure).after(1)


@pytest.fixture(scope="module")
def dev_data(tmp_path_factory):
    """litbank_export.py's files for 1 training and 1 dev document."""
    coref_dir = require_external_data("coref", "litbank")
    ner_dir = require_external_data("ner", "litbank")
    data = tmp_path_factory.mktemp("curve_data")
    litbank_export.export(data, ":1", "70:71", coref_dir, ner_dir)
    return data


def write_predictions(folder: Path, data: Path, clusters_of) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    gold = [json.loads(line) for line in (data / "coref_dev.jsonl").read_text().splitlines()]
    (folder / "dev_predictions.jsonl").write_text(
        "".join(json.dumps({"doc_key": d["doc_key"], "clusters": clusters_of(d["clusters"])}) + "\n" for d in gold)
    )


def test_curves_of_ours_and_an_anchor_are_scored_and_plotted(dev_data, tmp_path):
    out = tmp_path / "outputs" / "coref_litbank_epochs4"  # --epochs 4
    ours = out / "ours_seed1"
    write_predictions(ours, dev_data, lambda clusters: clusters)
    for epoch, f1 in enumerate((0.30, 0.45, 0.5, 0.52)):
        (ours / f"metrics_epoch_{epoch}.json").write_text(json.dumps({"validation_conll_f1": f1}))
    (ours / "training_cost.json").write_text(json.dumps({"cpu_seconds": 480.0}))
    fcoref = out / "fcoref_seed2"
    write_predictions(fcoref / "curve" / "epoch_002", dev_data, lambda clusters: [])  # links nothing yet
    write_predictions(fcoref / "curve" / "epoch_004", dev_data, lambda cs: [c for c in cs if len(c) > 1])
    write_predictions(fcoref, dev_data, lambda cs: [c for c in cs if len(c) > 1])
    points = [
        {"epoch": 2, "training_cpu_seconds": 60.0, "run": str(fcoref / "curve" / "epoch_002")},
        {"epoch": 3, "training_cpu_seconds": 90.0, "error": "out of memory (over the cap of 12 GB): ..."},
        {"epoch": 4, "training_cpu_seconds": 120.0, "run": str(fcoref / "curve" / "epoch_004")},
    ]
    timings = {"training": {"cpu_seconds": 120.0, "wall_seconds": 130.0}, "prediction": {"wall_seconds": 1.0}}
    curve = {"every_epochs": 2, "points": points}
    (fcoref / "run.json").write_text(json.dumps({"epochs": 4, "timings": timings, "learning_curve": curve}))
    (out / "maverick_seed1").mkdir()  # started, nothing written yet
    topk = out / "ours_topk_seed1"  # a variant of our config with an option off: plotted only when asked
    write_predictions(topk, dev_data, lambda clusters: clusters)
    (topk / "metrics_epoch_0.json").write_text(json.dumps({"validation_conll_f1": 0.4}))
    png = tmp_path / "curves.png"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "evidence.coref_litbank_curves",
            str(out),
            "--data",
            str(dev_data),
            "--out",
            str(tmp_path),
            "--png",
            str(png),
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    curves = {c["key"]: c for c in json.loads((tmp_path / "curves.json").read_text())["curves"]}
    assert sorted(curves) == ["fcoref", "ours"]
    assert [(p["epoch"], p["with_singletons"], p["cpu_minutes"]) for p in curves["ours"]["points"]] == [
        (1, 30.0, 2.0),
        (2, 45.0, 4.0),
        (3, 50.0, 6.0),
        (4, 52.0, 8.0),
    ]
    assert curves["ours"]["final"]["with_singletons"] == pytest.approx(100.0)
    assert "differs from the final predictions" in curves["ours"]["source"]  # 52.0 at the last epoch, 100 final
    anchor = curves["fcoref"]
    assert anchor["seed"] == 2 and anchor["epochs"] == 4 and [p["epoch"] for p in anchor["points"]] == [2, 3, 4]
    first, failed, last = anchor["points"]
    assert first["with_singletons"] == 0.0 and last["without_singletons"] == pytest.approx(100.0)
    assert last["with_singletons"] < 100.0 and last["cpu_minutes"] == 2.0  # the key's singletons missed
    assert failed["with_singletons"] is None and failed["error"].startswith("out of memory")
    assert anchor["final"]["with_singletons"] == last["with_singletons"]
    assert "maverick_seed1: nothing finished yet" in completed.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_missing_output_folder_is_one_line(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "evidence.coref_litbank_curves", str(tmp_path / "nowhere")],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert completed.returncode == 1 and "no such output folder" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_a_runs_epochs_come_from_its_own_record_whatever_its_folder(tmp_path):
    """A run written with a custom ``--out`` is not labelled 6 epochs: an anchor's ``run.json`` and an allennlp run's
    ``config.json`` say how long it trained; the folder's ``_epochs<N>`` name only when neither is there."""
    from evidence import coref_litbank_curves as curves

    anchor, ours = tmp_path / "custom" / "maverick_seed1", tmp_path / "custom" / "ours_seed1"
    unrecorded = tmp_path / "out_epochs9" / "fcoref_seed1"
    for folder in (anchor, ours, unrecorded, tmp_path / "custom" / "fcoref_seed2"):
        folder.mkdir(parents=True)
    (anchor / "run.json").write_text(json.dumps({"epochs": 12.0}))
    (ours / "config.json").write_text(json.dumps({"trainer": {"num_epochs": 4}}))
    assert curves.budget_epochs(anchor) == 12 and curves.budget_epochs(ours) == 4
    assert curves.budget_epochs(unrecorded) == 9 and curves.budget_epochs(tmp_path / "custom" / "fcoref_seed2") == 6


def test_ner_curves_put_our_epochs_and_spanmarkers_steps_on_one_budget_axis(tmp_path):
    """``evidence/ner_litbank_curves.py`` on a side-by-side folder written here: our validation per epoch (one
    budget each), SpanMarker's curve point after 300 steps scored against the dev sentences, then its final run.
    A budget of SpanMarker is 528 steps (0.386 of its 1,367 a epoch; a run that recorded its own steps per epoch
    uses those), so its point at step 300 stands at 0.57 budgets."""
    from evidence import ner_litbank_curves as curves_script

    data, out = tmp_path / "data", tmp_path / "outputs" / "ner_litbank_budgets2"
    data.mkdir()
    gold = [{"id": "s1", "entities": [[0, 0, "PER"], [0, 2, "PER"]]}, {"id": "s2", "entities": [[1, 1, "LOC"]]}]
    (data / "ner_dev.jsonl").write_text("".join(json.dumps(record) + "\n" for record in gold))
    ours = out / "litbank_minilm_seed1"
    ours.mkdir(parents=True)
    for epoch, f1 in enumerate((0.25, 0.5)):
        (ours / f"metrics_epoch_{epoch}.json").write_text(json.dumps({"validation_f1": f1}))
    (ours / "metrics.run.json").write_text(json.dumps({"cpu_seconds": 600.0}))
    anchor = out / "spanmarker_seed1"
    step = anchor / "curve" / "step_300"
    step.mkdir(parents=True)
    predicted = [{"id": "s1", "entities": [[0, 0, "PER"]]}, {"id": "s2", "entities": [[1, 1, "PER"]]}]
    (step / "dev_predictions.jsonl").write_text("".join(json.dumps(record) + "\n" for record in predicted))
    point = {"step": 300, "training_cpu_seconds": 3600.0, "run": str(step)}
    record = {"epochs": 0.772, "timings": {"training": {"cpu_seconds": 7200.0}}, "learning_curve": {"points": [point]}}
    (anchor / "run.json").write_text(json.dumps(record))
    (anchor / "dev_scores.json").write_text(json.dumps({"precision": 50.0, "recall": 33.33, "f1": 40.0}))
    (out / "spanmarker_seed2").mkdir()  # still training: nothing to show

    png = tmp_path / "ner.png"
    assert curves_script.main([str(out), "--data", str(data), "--out", str(tmp_path / "c"), "--png", str(png)]) == 0
    curves = {curve["key"]: curve for curve in json.loads((tmp_path / "c" / "curves.json").read_text())["curves"]}
    assert curves["entity_aware"]["points"] == [
        {"budgets": 1, "cpu_minutes": 5.0, "f1": 25.0},
        {"budgets": 2, "cpu_minutes": 10.0, "f1": 50.0},
    ]
    # 1 of 2 predictions right, 1 of 3 gold entities found: P 50, R 33.33, F1 40
    assert curves["spanmarker"]["points"] == [
        {"budgets": 0.57, "cpu_minutes": 60.0, "f1": 40.0},
        {"budgets": 2.0, "cpu_minutes": 120.0, "f1": 40.0},
    ]
    # the results file (beside the curves, since --out was given): a column per point, the model each run kept
    results = json.loads((tmp_path / "c" / "ner_litbank_curves.json").read_text())
    assert results["tables"]["curves"]["columns"] == [
        "system",
        "seed",
        "F1 after 1,368 sentences",
        "F1 after 2,400 sentences",
        "F1 after 4,800 sentences",
        "P (model kept)",
        "R (model kept)",
        "F1 (model kept)",
        "training CPU minutes",
    ]
    assert results["tables"]["curves"]["rows"] == [
        ["entity-aware attention", 1, None, 25.0, 50.0, None, None, None, 10.0],  # no metrics.json: no model kept
        ["SpanMarker 1.8.1, retrained here from the same MiniLM", 1, 40.0, None, 40.0, 50.0, 33.3, 40.0, 120.0],
    ]
    record["steps_per_epoch"] = 777  # 300 steps a budget
    (anchor / "run.json").write_text(json.dumps(record))
    assert curves_script.main([str(out), "--data", str(data), "--out", str(tmp_path / "c"), "--png", str(png)]) == 0
    curves = {curve["key"]: curve for curve in json.loads((tmp_path / "c" / "curves.json").read_text())["curves"]}
    assert [point["budgets"] for point in curves["spanmarker"]["points"]] == [1.0, 2.0]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
