"""``benchmarks/coref_inference.py``'s driver side: where it finds an anchor's trained model, the novel document and
the goal lines printed under its table (no model is run here)."""

import json
import os
import time

import pytest

from tests import TINY_BERT_DIR, require_external_data


@pytest.fixture(scope="module")
def bench():
    from benchmarks import coref_inference

    return coref_inference


def result(system, words, seconds, peak_mb, requested=None):
    return {
        "system": system,
        "words": words,
        "words_requested": requested or words,
        "seconds": seconds,
        "forward_peak_mb": peak_mb,
        "process_peak_mb": peak_mb + 100.0,
    }


def test_goal_lines_compare_ours_with_allennlp_models_the_fastest_anchor_and_the_novel_cap(bench):
    results = [
        result(bench.OURS, 8074, 4.0, 1200.0, 8000),
        result(bench.OURS_COARSE, 8074, 2.5, 1100.0, 8000),
        result(bench.ALLENNLP, 8074, 30.0, 14000.0, 8000),
        result("fastcoref", 8074, 5.0, 3000.0, 8000),
        result("maverick", 8074, 9.0, 2000.0, 8000),
        result(bench.OURS, 50012, 30.0, 5000.0, 50000),
        result(bench.OURS_COARSE, 50012, 20.0, 2000.0, 50000),
    ]
    lines = bench.goals(results, 50000)
    ours = [line for line in lines if line.startswith(f"  {bench.OURS} ")]
    assert "7.50x faster (goal >= 8x): no" in ours[0]
    assert (
        "fastest anchor (fastcoref, ?: ? clusters predicted)" in ours[1]
        and "1.25x faster (goal >= 1.5x): no" in ours[1]
    )
    assert "peak memory 0.40x theirs (goal <= 0.5x): yes" in ours[1]
    assert "process peak 5100 MB (goal < 4096 MB): no" in ours[2]
    coarse = [line for line in lines if line.startswith(f"  {bench.OURS_COARSE} ")]
    assert "12.00x faster (goal >= 8x): yes" in coarse[0] and "2.00x faster (goal >= 1.5x): yes" in coarse[1]
    assert "process peak 2100 MB (goal < 4096 MB): yes" in coarse[2]


def test_goal_lines_say_what_was_not_measured(bench):
    lines = bench.goals([result(bench.OURS, 8074, 4.0, 1200.0, 8000)], 0)
    assert lines[1].endswith("(goal >= 8x): not measured")
    assert "not measured (no anchor row at 8000 words)" in lines[2] and len(lines) == 3


def test_an_anchor_model_is_found_where_the_side_by_side_script_leaves_it(bench, tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "REPO_ROOT", tmp_path)
    anchor = bench.EXTERNAL_SYSTEMS["fastcoref"]
    assert anchor.trained_models() == []
    run = tmp_path / "outputs" / "coref_litbank" / "fcoref_seed1"
    (run / "model").mkdir(parents=True)
    (run / "model" / "config.json").write_text("{}")
    (run / "run.json").write_text(json.dumps({"system": "fastcoref 2.1.6, fcoref architecture trained on gold"}))
    assert anchor.trained_models() == [run / "model"]
    assert bench.EXTERNAL_SYSTEMS["fastcoref_lingmess"].trained_models() == []


def test_an_anchor_is_timed_at_its_best_scoring_weights(bench, tmp_path, monkeypatch):
    """Its cost depends on the mentions its weights find: the run with the best dev score first, then the runs not
    scored, newest first."""
    monkeypatch.setattr(bench, "REPO_ROOT", tmp_path)
    anchor = bench.EXTERNAL_SYSTEMS["maverick"]
    runs = {}
    scored = [("coref_litbank_epochs12", 35.9), ("coref_litbank", 10.5), ("coref_litbank_small", None)]
    for age, (folder, f1) in enumerate(scored):
        run = runs[folder] = tmp_path / "outputs" / folder / "maverick_seed1"
        (run / "model").mkdir(parents=True)
        (run / "model" / "weights.ckpt").write_text("")
        (run / "run.json").write_text(json.dumps({"system": "maverick-coref 1.0.7, Maverick_mes"}))
        if f1 is not None:
            (run / "dev_scores.json").write_text(json.dumps({"with_singletons": {"conll_f1": f1}}))
        os.utime(run / "model", (1000 + age, 1000 + age))  # the later in the list, the newer
    unscored = tmp_path / "outputs" / "coref_litbank_epochs3" / "maverick_seed2"
    (unscored / "model").mkdir(parents=True)
    (unscored / "model" / "weights.ckpt").write_text("")
    (unscored / "run.json").write_text(json.dumps({"system": "maverick-coref 1.0.7, Maverick_mes"}))
    os.utime(unscored / "model", (999, 999))
    assert anchor.trained_models() == [
        runs["coref_litbank_epochs12"] / "model",
        runs["coref_litbank"] / "model",
        runs["coref_litbank_small"] / "model",
        unscored / "model",
    ]


def test_the_novel_document_is_whole_sentences_of_words(bench):
    require_external_data("corpus", "gutenberg", "1342_pride_and_prejudice.txt")
    sentences = bench.novel_sentences("1342_pride_and_prejudice", 2000)
    words = sum(len(sentence) for sentence in sentences)
    assert 2000 <= words < 2000 + max(len(sentence) for sentence in sentences)
    assert all(word.strip() == word and word for sentence in sentences for word in sentence)
    assert sentences[1][:4] == ["It", "is", "a", "truth"] and sentences[1][-1] == "."  # split at sentence ends
    assert bench.novel_sentences("no_such_novel", 10) is None


def test_our_trained_rows_use_the_best_scoring_litbank_archive(bench, tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "REPO_ROOT", tmp_path)
    assert bench.trained_archive(bench.OURS_LITBANK) is None
    assert "no trained model (outputs/coref_litbank*/ours_seed*/model.tar.gz" in bench.why_unavailable(
        bench.OURS_LITBANK
    )
    runs = {}
    for folder, f1 in (
        ("ours_seed1", 51.0),
        ("ours_seed2", 52.0),
        ("ours_topk_seed1", 60.0),
        ("ours_coarse_seed1", 50.0),
    ):
        run = runs[folder] = tmp_path / "outputs" / "coref_litbank" / folder
        run.mkdir(parents=True)
        (run / "model.tar.gz").write_text("")
        (run / "dev_scores.json").write_text(json.dumps({"with_singletons": {"conll_f1": f1}}))
    # the shipped config's runs only (ours_topk_seedN predicts with the top-k spans), the best first
    assert bench.trained_archive(bench.OURS_LITBANK) == runs["ours_seed2"] / "model.tar.gz"
    assert bench.trained_archive(bench.OURS_COARSE_LITBANK) == runs["ours_coarse_seed1"] / "model.tar.gz"
    assert bench.why_unavailable(bench.OURS_LITBANK) is None and bench.why_unavailable(bench.OURS) is None


def test_trained_rows_are_held_to_the_anchor_goals_not_to_allennlp_models(bench):
    trained = result(bench.OURS_LITBANK, 8074, 3.0, 1000.0, 8000) | {"model": "outputs/x/model.tar.gz", "clusters": 7}
    results = [trained, result(bench.ALLENNLP, 8074, 30.0, 14000.0, 8000), result("maverick", 8074, 6.0, 2500.0, 8000)]
    lines = bench.goals(results, 0)
    ours = [line for line in lines if line.startswith(f"  {bench.OURS_LITBANK} ")]
    assert len(ours) == 1 and "allennlp-models" not in ours[0]
    assert ours[0].startswith(f"  {bench.OURS_LITBANK} (outputs/x/model.tar.gz: 7 clusters) vs the fastest anchor")
    assert "2.00x faster (goal >= 1.5x): yes" in ours[0] and "peak memory 0.40x theirs" in ours[0]


def test_bf16_runs_ours_through_the_encoders_option_and_the_others_in_autocast(bench):
    import torch

    from spanbert_lib.common.token_embedders import SegmentedTransformerEmbedder
    from spanbert_lib.coref.models.pairwise_scorer import PairFeatures, PairwiseScorer

    class Runner:  # an anchor's runner: prepare / predict only
        def prepare(self, sentences):
            return sentences

        def predict(self, prepared):
            return [[[0, 0]]] if torch.is_autocast_enabled("cpu") else []

    wrapped = bench.in_bfloat16(Runner())
    assert isinstance(wrapped, bench.Autocast)
    assert wrapped.prepare([["a"]]) == [["a"]] and wrapped.predict(None) == [[[0, 0]]]
    assert wrapped.details(None) == {} and not torch.is_autocast_enabled("cpu")

    encoder = SegmentedTransformerEmbedder(str(TINY_BERT_DIR))
    pairs = PairwiseScorer(4, PairFeatures(2), hidden_dim=3)
    ours = bench.LibrarySystem(torch.nn.Sequential(encoder, pairs), make_instance=None)
    assert bench.in_bfloat16(ours) is ours and encoder.autocast_dtype == "bfloat16"
    assert pairs.product_dtype == torch.bfloat16


def test_the_speed_goal_is_also_held_on_words_to_clusters_time(bench):
    ours = result(bench.OURS_LITBANK, 8074, 3.8, 1100.0, 8000) | {"model": "m", "total_seconds": 3.9}
    maverick = result("maverick", 8074, 3.4, 2400.0, 8000) | {"total_seconds": 5.9}
    fastcoref = result("fastcoref", 8074, 9.7, 2500.0, 8000) | {"total_seconds": 9.8}
    lines = bench.goals([ours, maverick, fastcoref], 0)
    (line,) = [line for line in lines if line.startswith(f"  {bench.OURS_LITBANK} ")]
    assert "0.89x faster (goal >= 1.5x): no" in line
    assert line.endswith(
        "words to clusters (input preparation included) 1.51x faster than maverick (goal >= 1.5x): yes"
    )
    # without the time (an older result file) the line stops at the memory goal
    del ours["total_seconds"]
    (line,) = [line for line in bench.goals([ours, maverick], 0) if line.startswith(f"  {bench.OURS_LITBANK} ")]
    assert line.endswith("(goal <= 0.5x): yes")


def test_the_table_shows_both_times_and_both_ratios(bench):
    ours = result(bench.OURS, 8074, 4.0, 1200.0, 8000) | {"total_seconds": 4.1}
    maverick = result("maverick", 8074, 3.4, 2400.0, 8000) | {"total_seconds": 8.2}
    row = [line for line in bench.report([ours, maverick]).splitlines() if " maverick " in line][0]
    assert "3.40    0.85x |     8.20    2.00x |" in row
    ours_row = [line for line in bench.report([ours, maverick]).splitlines() if f" {bench.OURS} " in line][0]
    assert "4.00        - |     4.10        - |" in ours_row


def test_measure_times_the_input_preparation_best_of_the_repeats(bench):
    class Slow:  # preparation slow on its first document-sized call only
        calls = 0

        def prepare(self, sentences):
            if sentences is not bench.WARM_UP:
                Slow.calls += 1
                time.sleep(0.3 if Slow.calls == 1 else 0.05)
            return sentences

        def predict(self, prepared):
            return [[[0, 1]]]

    measured = bench.measure(Slow(), [["a", "b"]], repeats=3, threads=1)
    assert Slow.calls == 3 and 0.05 <= measured["prepare_seconds"] < 0.3
    assert measured["total_seconds"] == pytest.approx(measured["prepare_seconds"] + measured["seconds"])
