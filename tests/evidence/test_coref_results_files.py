"""
The results files of docs/coref.md and docs/benchmarks.md (``results/NAME.json``, rendered into the pages by
``python -m evidence.results``): what ``evidence/coref_litbank_side_by_side.py``, ``evidence/coref_litbank_curves.py``
and the benchmarks write there, and that the files in ``results/`` have the columns those scripts write. Nothing here
trains or measures.
"""

import json
from argparse import Namespace

import pytest

from evidence.results import read_results, render_table
from tests import REPO_ROOT

RESULT_KEYS = {"title", "command", "machine", "date", "tables", "notes"}


@pytest.fixture(scope="module")
def side_by_side():
    from evidence import coref_litbank_side_by_side

    return coref_litbank_side_by_side


def run(with_f1, without_f1, cpu_seconds=600.0, predict_seconds=10.0, rss_mb=2048.0):
    return {
        "gold_with_singletons": {"conll_f1": with_f1, "muc": 70.0, "bcub": 50.0, "ceafe": 20.0},
        "gold_without_singletons": {"conll_f1": without_f1, "muc": 71.0, "bcub": 51.0, "ceafe": 21.0},
        "cpu_seconds": cpu_seconds,
        "wall_seconds": cpu_seconds,
        "predict_seconds": predict_seconds,
        "peak_rss_mb": rss_mb,
    }


@pytest.fixture
def finished(side_by_side):
    return {
        side_by_side.OURS: {2: run(51.0, 49.0, 900.0), 1: run(52.0, 50.0, 700.0)},
        side_by_side.OURS_TOPK: {1: run(52.0, 50.0, predict_seconds=14.0)},
        side_by_side.THEIRS: {1: run(42.0, 50.5, 2400.0, 80.0, 8192.0)},
        side_by_side.MAVERICK: {1: run(11.0, 10.0)},
    }


def test_the_side_by_side_tables_are_those_the_page_shows(side_by_side, finished):
    tables = side_by_side.results_tables(finished)
    assert set(tables) == {"systems", "options", "published"}
    systems = tables["systems"]
    assert systems["columns"] == side_by_side.SYSTEMS_COLUMNS
    # every system as shipped, in the script's order; the variants with an option off only in the options table
    assert [row[0] for row in systems["rows"]] == [
        side_by_side.DISPLAY[label] for label in (side_by_side.OURS, side_by_side.THEIRS, side_by_side.MAVERICK)
    ]
    ours, theirs, _ = systems["rows"]
    # seeds in order, mean ± sample std with the best mean in bold, per-seed F1, costs as means
    assert ours[1:5] == ["1 / 2", "**51.5** ± 0.7", "52.0 / 51.0", "49.5 ± 0.7"]
    assert ours[5:] == [70.0, 50.0, 20.0, 13.3, 10.0, 2.0]
    assert theirs[2] == "42.0 (1 seed)" and theirs[4] == "**50.5** (1 seed)"
    assert theirs[8:] == [40.0, 80.0, 8.0]
    options = tables["options"]
    assert options["columns"] == side_by_side.OPTIONS_COLUMNS
    assert [row[:3] for row in options["rows"]] == [
        [side_by_side.DISPLAY[side_by_side.OURS], "`true`", "`0.0`"],
        [side_by_side.DISPLAY[side_by_side.OURS_TOPK], "`true`", "`null`"],
    ]
    assert options["rows"][1][-1] == 14.0
    published = tables["published"]
    assert published["columns"] == side_by_side.PUBLISHED_COLUMNS
    assert published["rows"][0][3] == 78.0 and "ACL 2024" in published["rows"][0][4]
    assert (
        published["rows"][-1][0].startswith(side_by_side.DISPLAY[side_by_side.OURS])
        and published["rows"][-1][3] == 51.5
    )


def test_the_side_by_side_writes_a_results_file_the_pages_render(side_by_side, finished, tmp_path):
    path = tmp_path / "coref_litbank.json"
    side_by_side.save_results(path, side_by_side.FULL, finished)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert RESULT_KEYS <= set(written) and "evidence.coref_litbank_side_by_side" in written["command"]
    assert written["summary"][side_by_side.OURS]["conll_f1_with_singletons"]["mean"] == 51.5
    for table_name in ("systems", "options", "published"):
        rendered = render_table(written, "coref_litbank", table_name)
        assert rendered.splitlines()[0] == "| " + " | ".join(written["tables"][table_name]["columns"]) + " |"


def test_only_the_full_runs_in_the_default_folder_write_the_documentations_file(side_by_side, tmp_path):
    default = tmp_path / "outputs" / "coref_litbank"
    args = Namespace(results=None, out=default)
    assert side_by_side.default_results(args, side_by_side.FULL, default) == side_by_side.RESULTS
    assert side_by_side.default_results(args, side_by_side.SMALL, default) == default / "results.json"
    elsewhere = Namespace(results=None, out=tmp_path / "mine")
    assert side_by_side.default_results(elsewhere, side_by_side.FULL, default) == tmp_path / "mine" / "results.json"
    chosen = Namespace(results=tmp_path / "x.json", out=default)
    assert side_by_side.default_results(chosen, side_by_side.FULL, default) == tmp_path / "x.json"


def curve(key, seed, epochs, scores, final=None, cpu=None):
    return {
        "key": key,
        "seed": seed,
        "epochs": epochs,
        "points": [{"epoch": epoch, "with_singletons": score} for epoch, score in scores.items()],
        "final": None
        if final is None
        else {"with_singletons": final[0], "without_singletons": final[1], "cpu_minutes": cpu},
    }


def test_the_learning_curve_table_averages_the_seeds_of_each_system_and_length():
    from evidence import coref_litbank_curves as curves_script

    curves = [
        curve("maverick", 1, 4, {2: 1.0, 4: 5.0}, (5.0, 4.0), 30.0),
        curve("ours", 2, 3, {1: 30.0, 2: 42.0, 3: 50.0}, (50.0, 48.0), 12.0),
        curve("ours", 1, 3, {1: 32.0, 2: 44.0, 3: 51.0}, (51.0, 49.0), 14.0),
        curve("allennlp_models", 1, 6, {}, (42.0, 49.0), 36.0),  # a final score only: in the side-by-side's table
    ]
    table = curves_script.curves_table(curves, every=2)
    assert table["columns"] == [
        "system",
        "seeds",
        "epochs",
        "epoch 2",
        "epoch 4",
        "final model",
        "final model, without singletons",
        "training CPU min",
    ]
    from evidence.coref_litbank_side_by_side import DISPLAY, MAVERICK, OURS

    assert table["rows"] == [
        [DISPLAY[OURS], "1 / 2", 3, 43.0, None, 50.5, 48.5, 13.0],
        [DISPLAY[MAVERICK], "1", 4, 1.0, 5.0, 5.0, 4.0, 30.0],
    ]


def test_the_benchmarks_write_the_rows_their_tables_print():
    from benchmarks import (
        console_scripts,
        corpus_reader_memory,
        encoder_bf16,
        masking_throughput,
        pretraining_step_throughput,
        serve_load,
    )

    measured = {
        "coref-score": {
            "subcommand_s": 9.271,
            "console_s": 0.812,
            "ratio": 0.0876,
            "subcommand_rss_mb": 586.2,
            "console_rss_mb": 77.4,
            "console_script": "spanbert-coref-score",
        }
    }
    assert console_scripts.results_rows(measured) == [
        ["`spanbert-coref-score`", 0.81, 77, "`allennlp coref-score`", 9.27, 586, 0.088]
    ]
    assert len(console_scripts.COLUMNS) == 7

    one = {"rps": 20.0, "p50_ms": 51.2, "p50_vs_direct": 1.0}
    load = {"rps": 27.516, "errors": 0, "rps_vs_direct": 1.3211}
    row = {
        "direct_p50_ms": 50.1,
        "p50_ratio_batched_vs_unbatched": 1.0404,
        "unbatched_1_client": one,
        "batched_1_client": one | {"p50_ms": 53.3},
        "unbatched_16_clients": load | {"rps_vs_direct": 1.11, "errors": 1},
        "batched_16_clients": load,
    }
    rows = serve_load.results_rows({"qa": row, "coref": row}, 16, 120)
    assert rows[0] == ["QA", 50, 51, 53, 1.04, 27.52, 1.32, 1.11, 1]
    assert rows[1][0] == "coreference (120 words)" and len(serve_load.results_columns(16)) == len(rows[0])
    assert "16 clients requests/s, batched" in serve_load.results_columns(16)

    rates = {"geometric_span (ours)": 18046.4, masking_throughput.REFERENCE: 501.6}
    assert masking_throughput.results_rows(rates) == [
        ["geometric_span (ours)", 18046, 35.98],
        [masking_throughput.REFERENCE, 502, 1.0],
    ]
    assert pretraining_step_throughput.results_rows(1.0, 0.676, 0.69)[0][1] == 0.69
    assert pretraining_step_throughput.results_rows(1.0, 0.676, 0.69)[1][1] == 1.02
    sides = corpus_reader_memory.results_rows({"rss_rise_mb": 154.3}, {"rss_rise_mb": 1031.0})
    assert sides == [
        ["`spanbert_pretraining_corpus` (chunked)", 154, 0.15],
        ["one `tokenizer(text)` call over the document", 1031, 1.0],
    ]
    gpu = {"pieces": 163840, "segments_per_pass": "all", "float32_s": 0.10234, "bfloat16_s": 0.02076, "speedup": 4.9297}
    assert encoder_bf16.results_row(gpu) == [163840, 128000, "all (640)", 102.3, 20.8, 4.93]
    assert encoder_bf16.results_row(gpu | {"segments_per_pass": 8})[2] == "8 (default)"


def test_coref_inference_keeps_the_other_precisions_rows(tmp_path):
    from benchmarks import coref_inference as bench

    def measured(system, seconds, **extra):
        return {
            "system": system,
            "words": 8074,
            "words_requested": 8000,
            "seconds": seconds,
            "total_seconds": seconds + 0.05,
            "forward_peak_mb": 1000.4,
            **extra,
        }

    results = [
        measured(bench.OURS, 5.4),
        measured(bench.OURS_LITBANK, 3.8, model="outputs/coref_litbank/ours_seed1/model.tar.gz"),
        {"system": "maverick", "words_requested": 8000, "oom": True, "memory_cap_gb": 12.0},
        {"system": "fastcoref", "words_requested": 8000, "unavailable": "no trained model"},
    ]
    rows = bench.results_rows(results, "float32")
    assert rows == [
        [8074, f"`{bench.OURS}`", "untrained heads on MiniLM", "float32", 5.4, 5.45, 1000],
        [
            8074,
            f"`{bench.OURS_LITBANK}`",
            "`outputs/coref_litbank/ours_seed1/model.tar.gz`",
            "float32",
            3.8,
            3.85,
            1000,
        ],
        [8074, "`maverick`", None, "float32", "out of memory (over the 12 GB cap)", None, None],
    ]
    path = tmp_path / "coref_inference.json"
    args = Namespace(bf16=False, threads=1, repeats=3)
    bench.save_results(path, results, args)
    bench.save_results(path, [measured(bench.OURS, 2.6)], Namespace(bf16=True, threads=1, repeats=3))
    written = json.loads(path.read_text(encoding="utf-8"))
    assert RESULT_KEYS <= set(written) and set(written["commands"]) == {"float32", "bfloat16"}
    table = written["tables"]["prediction"]
    assert table["columns"] == bench.RESULT_COLUMNS
    assert [row[3] for row in table["rows"]] == ["float32"] * 3 + ["bfloat16"]
    bench.save_results(path, [measured(bench.OURS, 5.0)], args)  # a new float32 run replaces the float32 rows only
    rows = json.loads(path.read_text(encoding="utf-8"))["tables"]["prediction"]["rows"]
    assert [(row[3], row[4]) for row in rows] == [("float32", 5.0), ("bfloat16", 2.6)]


def columns_of(name, table_name):
    return read_results(name)["tables"][table_name]["columns"]


def test_the_documentations_results_files_have_the_scripts_columns():
    from benchmarks import (
        console_scripts,
        coref_inference,
        corpus_reader_memory,
        encoder_bf16,
        masking_throughput,
        pretraining_step_throughput,
        serve_load,
    )
    from evidence import coref_litbank_side_by_side as side_by_side

    expected = {
        ("coref_litbank", "systems"): side_by_side.SYSTEMS_COLUMNS,
        ("coref_litbank", "options"): side_by_side.OPTIONS_COLUMNS,
        ("coref_litbank", "published"): side_by_side.PUBLISHED_COLUMNS,
        ("coref_inference", "prediction"): coref_inference.RESULT_COLUMNS,
        ("coref_inference_trained", "prediction"): coref_inference.RESULT_COLUMNS,
        ("encoder_bf16", "encoder"): encoder_bf16.COLUMNS,
        ("console_scripts", "startup"): console_scripts.COLUMNS,
        ("serve_load", "load"): serve_load.results_columns(16),
        ("masking_throughput", "throughput"): masking_throughput.COLUMNS,
        ("pretraining_step_throughput", "ratios"): pretraining_step_throughput.COLUMNS,
        ("corpus_reader_memory", "memory"): corpus_reader_memory.COLUMNS,
    }
    for (name, table_name), columns in expected.items():
        assert columns_of(name, table_name) == columns, name
        results = read_results(name)
        assert RESULT_KEYS <= set(results), name
        assert all(len(row) == len(columns) for row in results["tables"][table_name]["rows"]), name
    curves = columns_of("coref_litbank_curves", "curves")
    assert curves[:3] == ["system", "seeds", "epochs"] and curves[-3:] == [
        "final model",
        "final model, without singletons",
        "training CPU min",
    ]
    assert (REPO_ROOT / "docs" / "coref_litbank_curves.png").exists()
