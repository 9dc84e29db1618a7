"""evidence.summary: mean and sample std over seeds, and the per-seed table."""

import pytest

from evidence.summary import (
    format_mean_std,
    format_table,
    mean_std,
    seed_overrides,
    seed_summary,
    seed_table,
)


def test_mean_and_sample_standard_deviation():
    assert mean_std([42.0, 44.0]) == {"mean": 43.0, "std": pytest.approx(2**0.5)}
    # n - 1 in the denominator: the population std of 1, 2, 3, 4 would be 1.118
    assert mean_std([1.0, 2.0, 3.0, 4.0])["std"] == pytest.approx(1.2910, abs=1e-4)
    assert mean_std([42.0, 44.0], digits=2) == {"mean": 43.0, "std": 1.41}


def test_one_seed_has_no_spread_and_missing_figures_are_left_out():
    assert mean_std([41.0]) == {"mean": 41.0, "std": None}  # one seed shows no spread
    assert mean_std([41.04], digits=1) == {"mean": 41.0, "std": None}
    assert format_mean_std(mean_std([41.0])) == "41.0 (1 seed)"
    assert mean_std([None, 10.0, 20.0]) == {"mean": 15.0, "std": pytest.approx(7.0711, abs=1e-4)}
    assert mean_std([None]) == {"mean": None, "std": None}
    assert format_mean_std(mean_std([None])) == "-"
    assert format_mean_std(mean_std([42.0, 44.0])) == "43.0 ± 1.4"


def test_seed_overrides_set_all_three_allennlp_seeds():
    assert seed_overrides(7) == {"random_seed": 7, "numpy_seed": 7, "pytorch_seed": 7}


def test_seed_table_has_a_row_per_seed_and_a_mean_row_per_system():
    results = {
        "ours": {2: {"f1": 44.0, "minutes": None}, 1: {"f1": 42.0, "minutes": 17.0}},  # seed 2 finished first
        "theirs": {1: {"f1": 41.0, "minutes": 48.0}},
    }
    lines = seed_table(results, [("f1", "F1"), ("minutes", "min")]).splitlines()
    assert lines[0].split() == ["system", "seed", "F1", "min"]
    assert lines[2].split() == ["ours", "1", "42.0", "17.0"]
    assert lines[3].split() == ["ours", "2", "44.0", "-"]
    assert lines[4].split() == ["ours", "mean", "±", "std", "43.0", "±", "1.4", "17.0", "(1", "seed)"]
    assert lines[6].split() == ["theirs", "mean", "±", "std", "41.0", "(1", "seed)", "48.0", "(1", "seed)"]
    assert len({len(line) for line in lines[:4]}) == 1  # aligned columns


def test_markdown_table():
    text = format_table(["system", "seed", "F1"], [["ours", "1", "42.0"]], markdown=True)
    assert text.splitlines() == ["| system | seed | F1 |", "|---|---|---|", "| ours | 1 | 42.0 |"]


def test_seed_summary_gives_each_score_its_mean_and_the_f1_spread():
    per_seed = {1: {"precision": 50.0, "f1": 40.0}, 2: {"precision": 70.0, "f1": 44.0}}
    summary = seed_summary(per_seed, ["precision", "f1"])
    assert summary["per_seed"] == per_seed
    assert summary["mean"] == {"precision": 60.0, "f1": 42.0}
    assert summary["f1_std"] == pytest.approx(2 * 2**0.5)
