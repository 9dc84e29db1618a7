"""
The results files the evidence scripts and benchmarks write (``evidence/results.py``): each script's summary turned
into the tables its documentation page shows, checked on made-up figures without training or measuring anything;
and the results files of the task pages, one JSON object each in the shape ``python -m evidence.results`` renders.
"""

import argparse
import json

import pytest

from evidence.results import RESULTS_DIR, render_table
from tests import REPO_ROOT

TASK_RESULTS = (
    "ner_litbank",
    "ner_litbank_curves",
    "ner_litbank_outside_bias",
    "qa_side_by_side",
    "semeval2010",
    "main_job",
    "main_job_from_scratch",
    "adaptation_ner",
    "spacy_components",
    "onnx_inference",
    "qa_memory",
)


def assert_table(found, columns):
    assert found["columns"] == columns
    assert found["rows"] and all(len(row) == len(columns) for row in found["rows"])


@pytest.mark.parametrize("name", TASK_RESULTS)
def test_the_task_pages_results_files_have_the_rendered_shape(name):
    results = json.loads((RESULTS_DIR / f"{name}.json").read_text(encoding="utf-8"))
    assert {"title", "command", "machine", "date", "tables", "notes"} <= set(results)
    assert results["command"].startswith((".venv/bin/python -m ", "OMP_NUM_THREADS=1 .venv/bin/python -m ", "bash "))
    for table_name, found in results["tables"].items():
        assert found["rows"] and all(len(row) == len(found["columns"]) for row in found["rows"])
        assert all(not isinstance(cell, str) or cell.strip() for row in found["rows"] for cell in row)
        assert f"`results/{name}.json`" in render_table(results, name, table_name)


def test_ner_side_by_side_tables_hold_every_system_and_seed():
    from evidence import ner_litbank_side_by_side as ner

    def scores(f1, cpu=420.0):
        return {"precision": 30.0, "recall": 60.0, "f1": f1, "cpu_seconds": cpu, "max_rss_mb": 3500.0}

    results = {
        "entity-aware attention": {1: scores(42.7), 2: scores(32.0), 3: scores(35.6)},
        "SpanMarker 1.8.1": {1: scores(10.6, 3912.0), 3: scores(12.7)},
    }
    tables = ner.results_tables(results)
    columns = ["system", "config", "P", "R", "F1", "F1 seed 1", "F1 seed 2", "F1 seed 3"]
    assert_table(tables["systems"], columns + ["CPU minutes (seed 1)", "peak RSS GB (seed 1)"])
    ours, spanmarker = tables["systems"]["rows"]
    config = "`litbank_minilm.jsonnet`"
    assert ours == ["entity-aware attention", config, 30.0, 60.0, "36.8 ± 5.4", 42.7, 32.0, 35.6, 7.0, 3.5]
    assert spanmarker[0].startswith("SpanMarker 1.8.1, retrained here") and "--epochs 0.386" in spanmarker[1]
    assert spanmarker[5:8] == [10.6, None, 12.7] and spanmarker[8] == 65.2
    assert_table(tables["published"], ["system", "data", "F1", "reference"])
    assert ner.results_path(None, 1) == RESULTS_DIR / "ner_litbank.json"
    assert ner.results_path(None, 2) == RESULTS_DIR / "ner_litbank_budgets2.json"
    assert ner.results_path("outputs/mine", 1) == REPO_ROOT / "outputs" / "mine" / "results.json"


def test_ner_outside_bias_table_has_a_row_per_set_of_models():
    from evidence import ner_litbank_outside_bias as bias

    def row(bias_value, f1, heldout=None):
        figures = {"bias": bias_value, "precision": 40.0, "recall": 40.0, "f1": f1}
        return figures if heldout is None else {**figures, "heldout_f1": heldout}

    results = {
        "a": {1: row(0.0, 36.4, 42.7), 2: row(0.0, 36.1, 42.6)},
        "b": {1: row(1.25, 39.8, 49.8), 2: row(1.5, 42.4, 50.8)},
        "c": {1: row(0.0, 42.7), 2: row(0.0, 32.0)},
        "d": {1: row(1.375, 39.2), 2: row(1.375, 40.1)},
    }
    found = bias.results_table(results)
    assert_table(found, ["models", "bias", "P", "R", "F1", "F1 per seed", "held-out F1 per seed"])
    assert [r[1] for r in found["rows"]] == [0.0, "1.25 / 1.5", 0.0, 1.375]
    assert found["rows"][1][5:] == ["39.8 / 42.4", "49.8 / 50.8"] and found["rows"][2][6] is None
    assert found["rows"][0][0] == "trained on documents 0-59"


def test_adaptation_table_is_per_seed_f1_then_mean_and_std():
    from evidence import adaptation_ner_side_by_side as adaptation

    results = {
        adaptation.ORIGINAL: {1: {"precision": 30.0, "recall": 60.0, "f1": 40.0}},
        adaptation.ADAPTED: {1: {"precision": 20.0, "recall": 50.0, "f1": 30.0}},
    }
    results[adaptation.ORIGINAL][2] = {"precision": 32.0, "recall": 62.0, "f1": 42.0}
    found = adaptation.results_table(results)
    assert_table(found, ["encoder", "F1 seed 1", "F1 seed 2", "P", "R", "F1"])
    assert found["rows"][0][1:] == [40.0, 42.0, "31.0 ± 1.4", "61.0 ± 1.4", "41.0 ± 1.4"]
    assert found["rows"][1][1:] == [30.0, None, "20.0 (1 seed)", "50.0 (1 seed)", "30.0 (1 seed)"]


def test_semeval_table_names_the_ablation_of_the_baseline():
    from pathlib import Path

    from evidence import semeval2010_side_by_side as semeval

    runs = [
        {"system": "ours", "seed": 1, "dev_macro_f1": 0.804},
        {"system": "ours", "seed": 2, "dev_macro_f1": 0.801},
        {"system": "hf_baseline", "seed": 1, "dev_macro_f1": 0.472},
    ]
    config = Path("training_configs/relation/semeval2010_minilm_cpu.jsonnet")
    found = semeval.results_table(runs, ["ours", "hf_baseline"], config, "resize", "pooler")
    assert_table(found, ["system", "seed 1", "seed 2", "macro-F1"])
    assert (
        found["rows"][0][1:] == [80.4, 80.1, "80.2 ± 0.2"] and "semeval2010_minilm_cpu.jsonnet" in found["rows"][0][0]
    )
    assert found["rows"][1][1:] == [47.2, None, "47.2 (1 seed)"] and "head" not in found["rows"][1][0]
    ablation = semeval.results_table(runs, ["hf_baseline"], config, "description", "raw_cls")
    assert "marker rows: description, head: raw_cls" in ablation["rows"][0][0]


def test_qa_table_has_a_row_per_seed_and_their_mean():
    from evidence import qa_side_by_side as qa

    def summary(ours, hf):
        names = ("exact_match", "f1")
        return {"ours": {"scores": dict(zip(names, ours))}, "hf": {"scores": dict(zip(names, hf))}}

    summaries = {13: summary((8.25, 14.45), (6.75, 12.58)), 7: summary((6.25, 13.19), (7.25, 12.82))}
    found = qa.results_table(summaries, ["ours", "hf"])
    assert_table(found, ["seed", "ours EM", "ours F1", "Hugging Face EM", "Hugging Face F1"])
    assert found["rows"][0] == [13, 8.25, 14.45, 6.75, 12.58]
    assert found["rows"][2] == ["mean ± std", "7.25 ± 1.41", "13.82 ± 0.89", "7.00 ± 0.35", "12.70 ± 0.17"]
    assert len(qa.results_table({13: summaries[13]}, ["ours"])["rows"]) == 1  # one seed: no mean row


def test_qa_takes_one_seed_or_several():
    from evidence import qa_side_by_side as qa

    assert qa.parse_args(["--seed", "7"]).seeds == [7]
    assert qa.parse_args(["--seeds", "13", "7", "21"]).seeds == [13, 7, 21]


MAIN_JOB_SUMMARY = {
    "unigram_token": "the",
    "unigram_mlm_accuracy": 0.0851,
    "unigram_mlm_accuracy_at_mask": 0.0849,
    "unigram_perplexity_at_mask": 1816.4,
    **{
        f"{prefix}heldout_{head}_{measure}": value
        for prefix, scale in (("frozen_", 1.0), ("", 1.5))
        for head in ("mlm", "sbo")
        for measure, value in (
            ("accuracy", 0.1 * scale),
            ("accuracy_at_mask", 0.09 * scale),
            ("perplexity_at_mask", 1000.0 / scale),
        )
    },
    "optimizer_steps": 240,
    "stage_seconds": {
        "training: heads on the FROZEN encoder": 69.2,
        "training: ADAPTED encoder (end to end)": 223.8,
        "span NER: training and evaluation": 14.1,
    },
    "seconds": 328.3,
    "cpu_seconds": 585.4,
}


def test_main_job_tables_compare_the_frozen_and_the_adapted_heads_with_the_unigram_baseline():
    from evidence import main_job, main_job_report

    rows = main_job_report.heldout_rows(MAIN_JOB_SUMMARY)
    assert [row[0] for row in rows] == [
        "unigram baseline (always `the`)",
        "heads on the frozen encoder: MLM head",
        "heads on the frozen encoder: SBO head",
        "adapted encoder: MLM head",
        "adapted encoder: SBO head",
    ]
    assert rows[0] == ["unigram baseline (always `the`)", 0.085, None, 0.085, None, 1816]
    assert rows[3] == ["adapted encoder: MLM head", 0.15, 1.8, 0.135, 1.6, 667]
    alone = {key: value for key, value in MAIN_JOB_SUMMARY.items() if not key.startswith("frozen_")}
    assert [row[0] for row in main_job_report.heldout_rows(alone)][1:] == ["MLM head", "SBO head"]
    cost = main_job.cost(MAIN_JOB_SUMMARY)
    assert_table(cost, ["stage", "wall seconds", "CPU seconds"])
    assert cost["rows"] == [
        ["heads on the frozen encoder, 240 steps", 69, None],
        ["adapted encoder, 240 steps", 224, None],
        ["span NER reusing the exported encoder and SBO head", 14, None],
        ["the whole job", 328, 585],
    ]


def test_main_job_writes_the_documented_results_file_only_for_the_job_as_shipped():
    from evidence import main_job

    shipped = argparse.Namespace(
        corpus=main_job.DEFAULT_CORPUS,
        heldout=None,
        documents=None,
        steps=240,
        out="outputs/main_job",
        config=main_job.CONFIG,
        ner_config=main_job.NER_CONFIG,
        seeds=10,
    )
    assert main_job.default_results_path(shipped) == RESULTS_DIR / "main_job.json"
    assert main_job.job_command(shipped) == "bash scripts/main.sh"
    mine = argparse.Namespace(**{**vars(shipped), "corpus": "my_corpus", "out": "out"})
    assert str(main_job.default_results_path(mine)) == "out/results.json"
    assert main_job.job_command(mine) == "CORPUS=my_corpus OUT=out bash scripts/main.sh"


def test_benchmark_rows_are_the_pages_columns():
    from benchmarks import onnx_inference, spacy_components, span_ner_throughput

    spacy_rows = spacy_components.result_rows(
        "50 x ~200 words",
        {
            "`spanbert_coref` (`ours_seed1`)": {"docs": 50, "seconds": 6.0, "clusters": 578, "peak_mb": 951.2},
            spacy_components.FASTCOREF: {"docs": 50, "seconds": 6.5, "clusters": 9, "peak_mb": 785.0},
        },
    )
    assert spacy_rows == [
        ["50 x ~200 words", "`spanbert_coref` (`ours_seed1`)", 8.33, 1.08, 578, 951],
        ["50 x ~200 words", "fastcoref's component (F-coref)", 7.69, 1.0, 9, 785],
    ]
    assert len(spacy_components.COLUMNS) == len(spacy_rows[0])
    measured = {
        "model": "pretrained/all-MiniLM-L6-v2",
        "graph": "encoder",
        "threads": 1,
        "pytorch_ms": 207.33,
        "onnxruntime_ms": 193.94,
        "ratio": 1.0691,
        "max_abs_difference": 4.0531e-06,
    }
    assert onnx_inference.result_rows([measured]) == [
        ["`pretrained/all-MiniLM-L6-v2`", "encoder", 1, 207.3, 193.9, 1.07, 4.1e-06]
    ]
    assert onnx_inference.installed_mb("json") is not None and onnx_inference.installed_mb("no_such_package") is None
    system = {
        "spans": 1000,
        "encoder_tokens": 200,
        "forward_seconds": 0.1234,
        "spans_per_second": 8000.4,
        "ratio_to_allennlp": 1.0123,
        "cpu_ratio_to_allennlp": 0.9876,
    }
    tables = span_ner_throughput.results_tables(
        [
            {
                "words": 20,
                "systems": {"allennlp (plain encoder)": system, "ours, use_entities=true": system},
                "entity_aware_to_plain": 0.0841,
                "position_bound": 0.1062,
                "same_logits_without_entities": True,
            }
        ]
    )
    assert tables["throughput"]["rows"][0] == [20, "allennlp (plain encoder)", 1000, 200, 0.123, 8000, 1.012, 0.988]
    assert tables["entity_aware"]["rows"] == [[20, 0.084, 0.106, True]]


def test_a_tiny_main_job_writes_its_results_file_beside_its_outputs(tmp_path, monkeypatch):
    import importlib

    from tests.pretraining.test_main_job import tiny_configs

    monkeypatch.chdir(REPO_ROOT)
    main_job = importlib.import_module("evidence.main_job")
    pretraining, ner = tiny_configs(tmp_path)
    out = tmp_path / "job"
    main_job.main(["--config", pretraining, "--ner-config", ner, "--steps", "4", "--seeds", "2", "--out", str(out)])
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert_table(results["tables"]["heldout"], main_job.main_job_report.HELDOUT_COLUMNS)
    assert len(results["tables"]["heldout"]["rows"]) == 5  # the baseline, two heads of each run
    assert results["tables"]["cost"]["rows"][0][0] == "heads on the frozen encoder, 4 steps"
    assert "-m evidence.main_job --config" in results["command"]  # not the shipped job: the python command


def test_a_qa_smoke_run_writes_its_results_file_beside_its_outputs(tmp_path):
    from evidence import qa_side_by_side as qa

    assert qa.main(["--smoke", "--seeds", "1", "2", "--sides", "ours", "--output-dir", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "qa_side_by_side.json").read_text(encoding="utf-8"))
    assert_table(results["tables"]["seeds"], ["seed", "ours EM", "ours F1"])
    assert [row[0] for row in results["tables"]["seeds"]["rows"]] == [1, 2, "mean ± std"]
    assert results["command"].endswith(
        f"-m evidence.qa_side_by_side --smoke --seeds 1 2 --sides ours --output-dir {tmp_path}"
    )
    assert (tmp_path / "seed1" / "summary.json").is_file() and (tmp_path / "seed2" / "summary.json").is_file()
