import itertools

import numpy as np
import pytest
import torch

from spanbert_lib.pretraining.masking.selection import select_up_to_budget
from spanbert_lib.pretraining.masking.units import batch_word_starts, coverage, find_runs, word_runs


def test_find_runs_by_hand():
    labels = np.array(
        [
            [-1, 0, 0, 1, 2, 2, 2, -1, -1],
            [-1, 0, -1, 0, 0, 1, -1, -1, -1],  # the same label on both sides of a -1: two runs
            [-1, -1, -1, -1, -1, -1, -1, -1, -1],
        ]
    )
    runs = find_runs(labels)
    assert runs.counts.tolist() == [3, 3, 0]
    assert runs.starts[:2].tolist() == [[1, 3, 4], [1, 3, 5]]
    assert runs.ends[:2].tolist() == [[2, 3, 6], [1, 4, 5]]
    assert runs.valid.tolist() == [[True] * 3, [True] * 3, [False] * 3]
    assert runs.num_tokens.tolist() == [[2, 1, 3], [1, 2, 1], [0, 0, 0]]


def test_word_runs_and_starts_treat_every_negative_id_as_special():
    word_ids = np.array([[-100, 0, 0, 1, -2, 2, 2, -100]])
    runs = word_runs(word_ids)
    assert runs.starts.tolist() == [[1, 3, 5]] and runs.ends.tolist() == [[2, 3, 6]]
    assert batch_word_starts(word_ids).tolist() == [[False, True, False, True, False, True, False, False]]


def test_coverage_marks_selected_runs_only():
    runs = find_runs(np.array([[-1, 0, 0, 1, 2, 2, -1], [5, 5, 6, -1, -1, -1, -1]]))
    selected = np.array([[True, False, True], [False, True, False]])
    assert coverage(runs, selected, 7).astype(int).tolist() == [[0, 1, 1, 0, 1, 1, 0], [0, 0, 1, 0, 0, 0, 0]]


def _expected_selected_tokens(sizes, budget):
    """P(total selected = t), from the rule: random order, take while within budget, the first
    crossing unit with probability (budget - taken) / size, then stop."""
    distribution = {}
    orders = list(itertools.permutations(sizes))
    for order in orders:
        taken = 0
        outcomes = {0: 1.0}
        for size in order:
            if taken + size <= budget:
                taken += size
                continue
            keep = (budget - taken) / size
            outcomes = {taken + size: keep, taken: 1 - keep}
            break
        else:
            outcomes = {taken: 1.0}
        if len(outcomes) == 1:
            outcomes = {taken: 1.0}
        for total, probability in outcomes.items():
            distribution[total] = distribution.get(total, 0.0) + probability / len(orders)
    return distribution


@pytest.mark.parametrize("budget", [0.5, 2.5, 4.2])
def test_select_up_to_budget_matches_its_definition(budget):
    rows = 20000
    sizes = [3, 1, 2]
    unit_tokens = np.tile(np.array([[3, 1, 2, 7]]), (rows, 1))
    available = np.tile(np.array([[True, True, True, False]]), (rows, 1))
    chosen = select_up_to_budget(unit_tokens, available, np.full(rows, budget), torch.Generator().manual_seed(0))
    assert not chosen[:, 3].any()
    totals = (unit_tokens * chosen).sum(axis=1)
    assert (totals - budget < max(sizes)).all()
    expected = _expected_selected_tokens(sizes, budget)
    assert abs(sum(t * p for t, p in expected.items()) - budget) < 1e-9  # unbiased by construction
    for total in range(0, sum(sizes) + 1):
        assert abs((totals == total).mean() - expected.get(total, 0.0)) < 0.015, total
    assert abs(totals.mean() - budget) < 0.03


def test_select_up_to_budget_edge_budgets():
    unit_tokens = np.array([[2, 2, 1], [4, 1, 1]])
    available = np.array([[True, True, True], [True, False, True]])
    generator = torch.Generator().manual_seed(1)
    assert not select_up_to_budget(unit_tokens, available, np.array([0.0, 0.0]), generator).any()
    everything = select_up_to_budget(unit_tokens, available, np.array([5.0, 100.0]), generator)
    assert (everything == available).all()
