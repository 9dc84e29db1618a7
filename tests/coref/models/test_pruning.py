"""Non-crossing mention pruning against hand-worked cases and a plain greedy reference."""

import random

import torch

from spanbert_lib.coref.models.pruning import (
    crossing_pairs,
    greedy_non_crossing,
    prune_non_crossing,
)


def reference_greedy(scores, spans, k):
    """Lee et al.'s greedy pass, written plainly: best first, skip spans crossing a kept one."""
    order = sorted(range(len(spans)), key=lambda i: (-scores[i], i))
    kept = []
    for i in order:
        if len(kept) == k:
            break
        s1, e1 = spans[i]
        if all(not (s1 < s2 <= e1 < e2 or s2 < s1 <= e2 < e1) for s2, e2 in (spans[j] for j in kept)):
            kept.append(i)
    return sorted(kept, key=lambda i: spans[i])


def as_tensors(spans):
    spans = torch.tensor(spans)
    return spans[:, 0], spans[:, 1]


def test_crossing_pairs_finds_each_crossing_pair_once():
    # crossing: (0,2)x(1,3), (0,2)x(2,4), (1,3)x(2,4) and (1,2)x(2,4) (1 < 2 <= 2 < 4);
    # nested, not crossing: (1,2) in (0,2) and in (1,3); (3,3) in (1,3) and in (2,4)
    starts, ends = as_tensors([(0, 2), (1, 3), (1, 2), (2, 4), (3, 3)])
    first, second = crossing_pairs(starts, ends)
    pairs = sorted(zip(first.tolist(), second.tolist()))
    assert pairs == [(0, 1), (0, 3), (1, 3), (2, 3)]


def test_greedy_keeps_nested_and_drops_crossing_spans():
    # listed best first: A=(0,2), B=(1,3) crosses A, C=(1,2) nested in A, D=(2,4) crosses A,
    # F=(3,5) crosses only D, which is dropped -> F kept; E=(3,3) nested in F
    starts, ends = as_tensors([(0, 2), (1, 3), (1, 2), (2, 4), (3, 5), (3, 3)])
    assert greedy_non_crossing(starts, ends).tolist() == [True, False, True, False, True, True]


def test_prune_returns_top_k_non_crossing_in_document_order():
    spans = [(3, 3), (2, 4), (1, 2), (1, 3), (0, 2), (3, 5)]
    scores = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 1.5])
    starts, ends = as_tensors(spans)
    kept = prune_non_crossing(scores, starts, ends, 3)
    # greedy: (0,2) kept, (1,3) dropped, (1,2) kept, (2,4) dropped, (3,5) kept -> k=3 reached
    assert [spans[i] for i in kept.tolist()] == [(0, 2), (1, 2), (3, 5)]
    kept = prune_non_crossing(scores, starts, ends, 10)  # more than can be kept: all survivors
    assert [spans[i] for i in kept.tolist()] == [(0, 2), (1, 2), (3, 3), (3, 5)]
    assert prune_non_crossing(scores, starts, ends, 0).numel() == 0


def test_prune_ties_prefer_earlier_index():
    starts, ends = as_tensors([(0, 1), (1, 2), (2, 2)])
    kept = prune_non_crossing(torch.zeros(3), starts, ends, 2)
    assert kept.tolist() == [0, 2]  # (0,1) first; (1,2) crosses it; then (2,2)


def test_prune_matches_plain_greedy_on_random_documents():
    generator = random.Random(7)
    for trial in range(40):
        num_words = generator.randint(1, 40)
        width = generator.randint(1, 8)
        spans = [(s, e) for s in range(num_words) for e in range(s, min(num_words, s + width))]
        scores = [generator.choice([0.0, 0.5, 1.0, generator.random()]) for _ in spans]
        k = generator.randint(0, num_words)
        starts, ends = as_tensors(spans)
        kept = prune_non_crossing(torch.tensor(scores), starts, ends, k).tolist()
        assert kept == reference_greedy(scores, spans, k), trial


def test_prune_examines_more_candidates_when_the_best_ones_cross():
    # the 2k best spans all cross (0, 9)'s neighbours: doubling must reach the low-scored ones
    spans = [(0, 9)] + [(i, 10 + i) for i in range(1, 9)] + [(20, 20), (21, 21), (22, 22)]
    scores = torch.tensor([10.0] + [9.0 - 0.1 * i for i in range(8)] + [0.1, 0.2, 0.3])
    starts, ends = as_tensors(spans)
    kept = prune_non_crossing(scores, starts, ends, 4).tolist()
    assert kept == reference_greedy(scores.tolist(), spans, 4)
    assert [spans[i] for i in kept] == [(0, 9), (20, 20), (21, 21), (22, 22)]
