"""
Coreference metrics checked against values worked out by hand from the definitions used by
the CoNLL-2012 reference scorer v8.01 (arithmetic in the comments).

Most cases use the key of Pradhan et al. (2014, "Scoring coreference partitions of predicted
mentions"): {a} {b c} {d e f}; x, y, z are response mentions not in the key (twinless).
"""

import itertools
import random

import pytest

from spanbert_lib.coref.metrics import (
    ConllCorefScores,
    CorefScoreAccumulator,
    TooManyRepeatedMentions,
    score_documents,
)
from spanbert_lib.coref.metrics.blanc import (
    _counts_closed_form,
    _counts_from_link_sets,
    blanc_counts,
    blanc_scores,
)
from spanbert_lib.coref.metrics.mention_alignment import align_mentions

a, b, c, d, e, f = (0, 1), (3, 6), (9, 9), (11, 12), (14, 14), (16, 18)
x, y, z = (2, 2), (7, 7), (8, 8)
KEY = [[a], [b, c], [d, e, f]]


def rpf(scores, metric):
    return tuple(scores[metric][k] for k in ("recall", "precision", "f1"))


def f1(recall, precision):
    return 2 * recall * precision / (recall + precision) if recall + precision else 0.0


def approx(*values):
    return pytest.approx(values, abs=1e-9)


def score(key, response, **kwargs):
    return score_documents([key], [response], **kwargs)


def test_perfect_response_scores_one_everywhere():
    scores = score(KEY, [[a], [b, c], [d, e, f]])
    for metric in ("muc", "bcub", "ceafm", "ceafe", "blanc", "mentions"):
        assert rpf(scores, metric) == approx(1, 1, 1)
    assert scores["conll_f1"] == pytest.approx(1.0)


def test_missing_mentions_and_entities():
    # response {a} {d e}: b, c, f missing
    scores = score(KEY, [[a], [d, e]])
    # MUC: key links (1-1)+(2-1)+(3-1) = 3; response links 1 (d-e), correct -> R 1/3, P 1/1
    assert rpf(scores, "muc") == approx(1 / 3, 1, 0.5)
    # B3 recall over key mentions: a 1/1, d 2/3, e 2/3, b c f 0 -> (7/3)/6;
    # precision over response mentions: a 1/1, d 2/2, e 2/2 -> 3/3; F = 14/25
    assert rpf(scores, "bcub") == approx(7 / 18, 1, 14 / 25)
    # CEAFm: align {a}-{a} (1), {def}-{de} (2) -> 3; R 3/6, P 3/3
    assert rpf(scores, "ceafm") == approx(0.5, 1, 2 / 3)
    # CEAFe: phi4 {a}{a} = 1, {def}{de} = 2*2/(3+2) = 0.8 -> 1.8; R 1.8/3, P 1.8/2
    assert rpf(scores, "ceafe") == approx(0.6, 0.9, 0.72)
    # BLANC: key coref links b-c, d-e, d-f, e-f (4), non-coref C(6,2)-4 = 11;
    # response coref d-e (1, correct), non-coref a-d, a-e (2, both in key non-coref)
    # Rc 1/4, Pc 1, Fc 0.4; Rn 2/11, Pn 1, Fn (4/11)/(13/11) = 4/13
    assert rpf(scores, "blanc") == approx((1 / 4 + 2 / 11) / 2, 1, (0.4 + 4 / 13) / 2)
    # mention identification: 3 of 6 key mentions found, all 3 response mentions correct
    assert rpf(scores, "mentions") == approx(0.5, 1, 2 / 3)
    assert scores["conll_f1"] == pytest.approx((0.5 + 14 / 25 + 0.72) / 3)


def test_twinless_response_mentions():
    # response {a} {b c x} {d e f y} {z}: x, y, z are not in the key
    scores = score(KEY, [[a], [b, c, x], [d, e, f, y], [z]])
    # MUC: correct links 1 (b-c) + 2 (d-e-f) = 3 of 3 key links; response links 2+3 = 5
    assert rpf(scores, "muc") == approx(1, 3 / 5, 0.75)
    # B3 recall 6/6 (every key mention's response chain holds its whole key chain);
    # precision: a 1 + b,c 2/3 each + d,e,f 3/4 each + x,y,z 0 = 1 + 4/3 + 9/4 = 55/12 over 9
    precision = (55 / 12) / 9
    assert rpf(scores, "bcub") == approx(1, precision, f1(1, precision))
    # CEAFm: 1 + 2 + 3 = 6; R 6/6, P 6/9
    assert rpf(scores, "ceafm") == approx(1, 2 / 3, 0.8)
    # CEAFe: 1 + 2*2/(2+3) + 2*3/(3+4) = 1 + 4/5 + 6/7 = 93/35; R /3, P /4 ({z} is an entity)
    assert rpf(scores, "ceafe") == approx(31 / 35, 93 / 140, f1(31 / 35, 93 / 140))
    # BLANC: response coref links 3 + 6 = 9 (4 correct); 9 mentions -> 36 pairs - 9 = 27
    # non-coref (the 11 key non-coref links all among them): Rc 1, Pc 4/9, Rn 1, Pn 11/27
    assert rpf(scores, "blanc") == approx(1, (4 / 9 + 11 / 27) / 2, (8 / 13 + 22 / 38) / 2)
    assert rpf(scores, "mentions") == approx(1, 6 / 9, 0.8)


def test_overlapping_but_not_identical_mention_is_twinless():
    # response {a} {b c x B} {d y} {z} with B = (3, 5) overlapping b = (3, 6): no partial credit
    B = (3, 5)
    scores = score(KEY, [[a], [b, c, x, B], [d, y], [z]])
    # MUC: correct 1 (b-c) of 3 key links; response links 3 + 1 = 4
    assert rpf(scores, "muc") == approx(1 / 3, 1 / 4, f1(1 / 3, 1 / 4))
    # B3 recall: a 1 + b,c 2/2 + d 1/3 = 10/3 over 6; precision: a 1 + b,c 2/4 + d 1/2 = 2.5 / 8
    assert rpf(scores, "bcub") == approx(5 / 9, 2.5 / 8, f1(5 / 9, 2.5 / 8))
    # CEAFe: 1 + 2*2/(2+4) + 2*1/(3+2) = 1 + 2/3 + 2/5 = 31/15; R /3, P /4
    assert rpf(scores, "ceafe") == approx(31 / 45, 31 / 60, f1(31 / 45, 31 / 60))


def test_repeated_response_mention_is_dropped():
    # b written twice in one response chain: {a} {b c x b} {d y} {z} scores as {a} {b c x} ...
    repeated = score(KEY, [[a], [b, c, x, b], [d, y], [z]])
    deduplicated = score(KEY, [[a], [b, c, x], [d, y], [z]])
    assert repeated == deduplicated
    # and in another chain: {b z} loses its b and becomes {z}
    elsewhere = score(KEY, [[a], [b, c, x], [d, y], [b, z]])
    assert elsewhere == deduplicated
    # CEAFm for these: 1 + 2 + 1 = 4; R 4/6, P 4/7 (7 distinct response mentions)
    assert rpf(deduplicated, "ceafm") == approx(2 / 3, 4 / 7, f1(2 / 3, 4 / 7))
    # CEAFe: 1 + 2*2/(2+3) + 2*1/(3+2) = 2.2; R 2.2/3, P 2.2/4
    assert rpf(deduplicated, "ceafe") == approx(2.2 / 3, 0.55, f1(2.2 / 3, 0.55))


def test_more_than_ten_repeated_mentions_are_refused():
    response = [[a], [b, c, x], [d, y], [b] * 11 + [z]]
    with pytest.raises(TooManyRepeatedMentions, match="11 repeated mentions"):
        score(KEY, response)
    allowed = score(KEY, [[a], [b, c, x], [d, y], [b] * 10 + [z]])
    assert allowed == score(KEY, response, max_repeated_mentions=None)
    # the count is over the whole corpus: 6 + 6 repeats in two documents
    twice = [[a], [b, c, x], [d, y], [b] * 7 + [z]]
    with pytest.raises(TooManyRepeatedMentions):
        score_documents([KEY, KEY], [twice, twice])


def test_all_singletons_response():
    scores = score(KEY, [[a], [b], [c], [d], [e], [f]])
    # MUC: no response links -> 0/3 and 0/0 -> 0
    assert rpf(scores, "muc") == approx(0, 0, 0)
    # B3 recall: a 1, b c 1/2 each, d e f 1/3 each = 3 over 6; precision 6/6
    assert rpf(scores, "bcub") == approx(0.5, 1, 2 / 3)
    # CEAFm: best alignment {a}{a} 1, {bc}{b} 1, {def}{d} 1 -> 3; R 3/6, P 3/6
    assert rpf(scores, "ceafm") == approx(0.5, 0.5, 0.5)
    # CEAFe: 1 + 2*1/(2+1) + 2*1/(3+1) = 1 + 2/3 + 1/2 = 13/6; R /3, P /6
    assert rpf(scores, "ceafe") == approx(13 / 18, 13 / 36, f1(13 / 18, 13 / 36))
    # BLANC: no response coref links (Rc 0/4, Pc 0/0 -> 0, Fc 0); response non-coref = all 15
    # pairs, 11 of them key non-coref: Rn 1, Pn 11/15, Fn 22/26
    assert rpf(scores, "blanc") == approx(0.5, 11 / 30, (22 / 26) / 2)


def test_single_entity_response():
    scores = score(KEY, [[a, b, c, d, e, f]])
    # MUC: partitions of the key chains by the one response chain: all links kept -> 3/3;
    # response links 5
    assert rpf(scores, "muc") == approx(1, 3 / 5, 0.75)
    # B3 precision: a 1/6 + b,c 2/6 each + d,e,f 3/6 each = 14/6 over 6
    assert rpf(scores, "bcub") == approx(1, 14 / 36, f1(1, 14 / 36))
    # BLANC: response coref links 15 (4 correct), no non-coref links:
    # Rc 1, Pc 4/15, Fc 8/19; Rn 0/11, Pn 0/0 -> 0, Fn 0
    assert rpf(scores, "blanc") == approx(0.5, 2 / 15, (8 / 19) / 2)


def test_ceaf_uses_the_optimal_not_the_greedy_alignment():
    # overlap matrix |K_i ∩ R_j| = [[3, 2], [2, 0]]: greedy takes K1-R1 (3) and is left with
    # K2-R2 (0); the optimal alignment K1-R2 + K2-R1 gives 2 + 2 = 4
    k1 = [(i, i) for i in range(5)]
    k2 = [(5, 5), (6, 6)]
    r1 = k1[:3] + k2
    r2 = k1[3:]
    scores = score([k1, k2], [r1, r2])
    assert rpf(scores, "ceafm") == approx(4 / 7, 4 / 7, 4 / 7)
    # CEAFe: K1-R2 2*2/(5+2) + K2-R1 2*2/(2+5) = 8/7 beats K1-R1 2*3/10 + K2-R2 0 = 0.6
    assert rpf(scores, "ceafe") == approx(4 / 7, 4 / 7, 4 / 7)


def test_empty_key_and_or_response_give_zero():
    empty = score([], [])
    for metric in ("muc", "bcub", "ceafm", "ceafe", "blanc", "mentions"):
        assert rpf(empty, metric) == approx(0, 0, 0)
    assert empty["conll_f1"] == 0
    no_response = score(KEY, [])
    assert all(rpf(no_response, m) == approx(0, 0, 0) for m in ("muc", "bcub", "ceafm", "ceafe", "blanc"))
    no_key = score([], [[x, y], [z]])
    assert all(rpf(no_key, m) == approx(0, 0, 0) for m in ("muc", "bcub", "ceafm", "ceafe", "blanc"))


def test_blanc_when_the_key_has_no_coreference_links():
    # key all singletons: only non-coreference links count (the scorer's special case)
    key = [[a], [b], [c], [d]]
    assert rpf(score(key, [[a], [b], [c], [d]]), "blanc") == approx(1, 1, 1)
    # response {a b} {c} {d}: non-coref links a-c a-d b-c b-d c-d (5 of the key's 6, all correct)
    # Rn 5/6, Pn 5/5; the wrong coref link a-b is ignored since the key has no coref links
    assert rpf(score(key, [[a, b], [c], [d]]), "blanc") == approx(5 / 6, 1, f1(5 / 6, 1))
    # one response entity: no non-coref links -> 0
    assert rpf(score(key, [[a, b, c, d]]), "blanc") == approx(0, 0, 0)


def test_blanc_when_the_key_has_no_non_coreference_links():
    # key one entity {a b c d}: 6 coref links, only they count
    key = [[a, b, c, d]]
    # response {a b} {c d}: coref links a-b, c-d (2 of 6), Rc 2/6, Pc 2/2
    assert rpf(score(key, [[a, b], [c, d]]), "blanc") == approx(1 / 3, 1, 0.5)
    assert rpf(score(key, [[a], [b], [c], [d]]), "blanc") == approx(0, 0, 0)


def test_micro_average_over_documents_differs_from_macro():
    doc1_key, doc1_response = [[a, b, c, d, e]], [[a, b, c, d, e]]  # MUC 4/4, 4/4
    doc2_key, doc2_response = [[a, b], [c, d]], [[a, b, c, d]]  # MUC 2/2, 2/3
    scores = score_documents([doc1_key, doc2_key], [doc1_response, doc2_response])
    # micro: R (4+2)/(4+2) = 1, P (4+2)/(4+3) = 6/7, F = 12/13
    assert rpf(scores, "muc") == approx(1, 6 / 7, 12 / 13)
    # macro F would be (1 + 0.8)/2 = 0.9
    macro = (rpf(score(doc1_key, doc1_response), "muc")[2] + rpf(score(doc2_key, doc2_response), "muc")[2]) / 2
    assert macro == pytest.approx(0.9)
    # B3 sums per-mention contributions: P = (5 + 4 * 2/4) / (5 + 4) = 7/9
    assert scores["bcub"]["precision"] == pytest.approx(7 / 9)
    # CEAFe sums similarities and entity counts: (1 + 2*2/(2+4)) / (1 + 1) = 5/6 precision,
    # recall over 3 key entities = (5/3)/3
    assert rpf(scores, "ceafe")[:2] == approx(5 / 9, 5 / 6)
    # BLANC sums link counts before dividing: coref links key 10 + 2, response 10 + 6,
    # correct 10 + 2; non-coref key 0 + 4, response 0 + 0 -> Rc 1, Pc 12/16, Rn 0/4, Pn 0
    assert rpf(scores, "blanc") == approx(0.5, 0.375, f1(1, 0.75) / 2)


def test_repeated_key_span_keeps_its_last_id_like_the_scorer():
    # the scorer numbers key mentions in order and a repeated span keeps the last number
    chains = align_mentions([[(0, 0), (1, 1)], [(0, 0), (2, 2)]], [[(1, 1), (5, 5)]])
    assert chains.key == [[2, 1], [2, 3]]
    assert chains.key_mentions == 3
    # twinless (5, 5) gets the next free id after the 4 key mentions
    assert chains.response == [[1, 4]]
    assert (chains.matched_mentions, chains.response_mentions) == (1, 2)


def test_blanc_closed_form_matches_enumerating_links():
    rng = random.Random(13)
    for _ in range(200):
        ids = list(range(rng.randint(0, 12)))
        key = _random_partition(rng, rng.sample(ids, rng.randint(0, len(ids))))
        response = _random_partition(rng, rng.sample(ids, rng.randint(0, len(ids))))
        assert _counts_closed_form(key, response) == _counts_from_link_sets(key, response)


def _random_partition(rng, items):
    chains = {}
    for item in items:
        chains.setdefault(rng.randint(0, 3), []).append(item)
    return list(chains.values())


def test_blanc_with_repeated_twinless_span_uses_link_sets():
    # twinless z written twice in one response chain shares one id: the pair (z, z) is a link
    chains = align_mentions([[a, b]], [[a, z, z]])
    assert chains.response == [[0, 2, 2]]
    # key coref links {(0, 1)}; response coref links {(0, 2), (2, 2)} (a set: (0, 2) once);
    # no non-coref links on either side
    assert blanc_counts(chains.key, chains.response) == (0, 1, 0, 2, 0, 0, 0, 0)
    assert blanc_scores((0, 1, 0, 2, 0, 0, 0, 0)) == (0.0, 0.0, 0.0)


# --------------------------------------------------------------------- allennlp Metric


def test_allennlp_metric_is_registered_and_accumulates_documents():
    from allennlp.training.metrics import Metric

    assert Metric.by_name("conll2012_coref_scores") is ConllCorefScores
    metric = ConllCorefScores()
    gold = [KEY, [[a, b, c, d, e]]]
    predicted = [[[a], [d, e]], [[a, b, c, d, e]]]
    metric(predicted[:1], gold[:1])
    metric.add_document(predicted[1], gold[1])
    values = metric.get_metric(reset=False)
    expected = score_documents(gold, predicted)
    assert set(values) == {
        f"{m}_{k}" for m in ("muc", "bcub", "ceafm", "ceafe", "blanc", "mention") for k in ("precision", "recall", "f1")
    } | {"conll_f1"}
    for name in ("muc", "bcub", "ceafm", "ceafe", "blanc"):
        for kind in ("precision", "recall", "f1"):
            assert values[f"{name}_{kind}"] == pytest.approx(expected[name][kind])
    assert all(isinstance(v, float) for v in values.values())
    # micro MUC: R (1 + 4) / (3 + 4), P (1 + 4) / (1 + 4)
    assert (values["muc_recall"], values["muc_precision"]) == approx(5 / 7, 1)
    assert values["conll_f1"] == pytest.approx(expected["conll_f1"])

    assert metric.get_metric(reset=True) == values
    assert metric.get_metric()["conll_f1"] == 0.0
    with pytest.raises(ValueError, match="2 documents but gold clusters for 1"):
        metric(predicted, gold[:1])


def test_allennlp_models_metric_does_not_take_the_name_back():
    import importlib

    import allennlp_models.coref.metrics.conll_coref_scores as theirs
    from allennlp.training.metrics import Metric

    importlib.import_module("allennlp_models.coref")
    assert Metric.by_name("conll2012_coref_scores") is ConllCorefScores
    assert theirs.ConllCorefScores is not ConllCorefScores


def test_accumulator_reset_and_document_count():
    accumulator = CorefScoreAccumulator()
    for key, response in itertools.repeat((KEY, KEY), 3):
        accumulator.add_document(key, response)
    assert accumulator.num_documents == 3
    assert accumulator.counts["muc"] == [9, 9, 9, 9]
    accumulator.reset()
    assert accumulator.num_documents == 0 and accumulator.scores()["conll_f1"] == 0


def test_allennlp_metric_sums_counts_across_distributed_workers(tmp_path):
    import torch.distributed as dist

    metric = ConllCorefScores()
    metric([[[a], [d, e]]], [KEY])
    expected = metric.get_metric()
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0, world_size=1)
    try:
        # one worker: the all-reduced counts are this worker's counts
        assert metric.get_metric() == pytest.approx(expected)
    finally:
        dist.destroy_process_group()
