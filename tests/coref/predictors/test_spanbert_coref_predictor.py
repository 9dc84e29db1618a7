"""
The ``spanbert_coref`` predictor end to end (a tiny model trained here, archived and loaded),
its text helpers on hand-made cases, and the CoNLL prediction writer checked against
``allennlp coref-score``'s scorer.
"""

import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from spanbert_lib.commands.coref_predict_conll import main as conll_main
from spanbert_lib.coref.dataset_readers.conll_format import read_conll_documents
from spanbert_lib.coref.metrics import score_documents
from spanbert_lib.coref.predictors import (
    character_clusters,
    join_pretokenized,
    predict_conll_file,
    resolved_text,
    tokenize_text,
)
from tests import REPO_ROOT

CONFIG = REPO_ROOT / "fixtures" / "configs" / "coref" / "spanbert_coref_tiny.jsonnet"
DATA = REPO_ROOT / "fixtures" / "coref" / "segmented_document.gold_conll"
TEXT = "Anna told Ben that her old friend had called.  She said he would visit.\n\nHe did."


@pytest.fixture(scope="module")
def archive_path(tmp_path_factory):
    serialization_dir = tmp_path_factory.mktemp("coref_run")
    train_model_from_file(str(CONFIG), str(serialization_dir), overrides=json.dumps({"trainer.num_epochs": 1}))
    return serialization_dir / "model.tar.gz"


@pytest.fixture(scope="module")
def predictor(archive_path):
    return Predictor.from_archive(load_archive(archive_path), "spanbert_coref")


def test_tokenize_text_with_offsets():
    tokenized = tokenize_text(TEXT)
    assert tokenized.sentences == [
        ["Anna", "told", "Ben", "that", "her", "old", "friend", "had", "called", "."],
        ["She", "said", "he", "would", "visit", "."],
        ["He", "did", "."],
    ]
    assert all(TEXT[start:end] == word for (start, end), word in zip(tokenized.offsets, tokenized.words))
    assert tokenize_text(" \n\t ").sentences == []


def test_pretokenized_text_and_errors():
    tokenized = join_pretokenized([["Anna", "left", "."], [], ["She", "did", "."]])
    assert tokenized.text == "Anna left . She did ."
    assert tokenized.offsets[3] == (12, 15) and tokenized.sentences[1] == ["She", "did", "."]
    with pytest.raises(ValueError, match="list of sentences"):
        join_pretokenized(["Anna left ."])
    with pytest.raises(ValueError, match="sentence 1, word 0"):
        join_pretokenized([["a"], [" ", "b"]])


def test_character_clusters_and_resolved_text_by_hand():
    text = "Anna told her old friend that she and her friend met."
    #       0    5    10   15   20   25   30   35   40   45   50
    offsets = [
        (0, 4),
        (5, 9),
        (10, 13),
        (14, 17),
        (18, 24),
        (25, 29),
        (30, 33),
        (34, 37),
        (38, 41),
        (42, 48),
        (49, 52),
        (52, 53),
    ]
    clusters = [[(0, 0), (2, 2), (6, 6), (8, 8)], [(2, 4), (8, 9)]]
    chars = character_clusters(clusters, offsets)
    assert chars == [[(0, 4), (10, 13), (30, 33), (38, 41)], [(10, 24), (38, 48)]]
    # (38, 48) "her friend" -> "her old friend" replaces the whole mention, hiding the nested
    # "her" (38, 41); "her" (10, 13) is inside the first mention of cluster 2, which stays, so
    # "her" -> "Anna" there is still applied; "she" -> "Anna"
    assert resolved_text(text, chars) == "Anna told Anna old friend that Anna and her old friend met."
    assert resolved_text(text, [[(0, 4)]]) == text  # singletons change nothing


def test_predictor_raw_text(predictor):
    result = predictor.predict(TEXT)
    assert result["document"] == tokenize_text(TEXT).words
    assert result["text"] == TEXT
    assert len(result["clusters"]) == len(result["char_clusters"]) == len(result["cluster_texts"])
    for cluster, chars, texts in zip(result["clusters"], result["char_clusters"], result["cluster_texts"]):
        assert len(cluster) >= 2
        for (start, end), (cs, ce), mention in zip(cluster, chars, texts):
            assert TEXT[cs:ce] == mention
            assert mention.split() == result["document"][start : end + 1] or mention.replace(" ", "") == "".join(
                result["document"][start : end + 1]
            )
    assert result["resolved"] == resolved_text(TEXT, [[tuple(s) for s in c] for c in result["char_clusters"]])


def test_predictor_pretokenized_and_batch_with_empty(predictor):
    sentences = [["Anna", "told", "Ben", "."], ["She", "left", "."]]
    result = predictor.predict_tokenized(sentences)
    assert result["document"] == ["Anna", "told", "Ben", ".", "She", "left", "."]
    assert result["text"] == "Anna told Ben . She left ."
    results = predictor.predict_batch_json(
        [{"document": ""}, {"document": sentences}, {"document": "   \n "}, {"document": []}]
    )
    assert results[1] == result
    for empty, text in zip((results[0], results[2], results[3]), ("", "   \n ", "")):
        assert empty == {
            "document": [],
            "sentences": [],
            "text": text,
            "clusters": [],
            "char_clusters": [],
            "cluster_texts": [],
            "resolved": text,
        }
    assert predictor.predict("")["clusters"] == []
    with pytest.raises(ValueError, match="needs a 'document'"):
        predictor.predict_json({"text": "x"})


def test_conll_predictions_match_the_scorer(archive_path, tmp_path):
    output = tmp_path / "predicted.conll"
    metrics = predict_conll_file(str(archive_path), str(DATA), str(output))
    gold = read_conll_documents(DATA)
    predicted = read_conll_documents(output)
    assert [d.document_id for d in predicted] == [d.document_id for d in gold]
    assert [d.sentences for d in predicted] == [d.sentences for d in gold]
    assert [d.speakers for d in predicted] == [d.speakers for d in gold]
    scores = score_documents(gold, predicted)
    assert scores["conll_f1"] == pytest.approx(metrics["conll_f1"], abs=1e-9)
    assert conll_main([str(archive_path), str(DATA), str(tmp_path / "again.conll")]) == 0
    assert (tmp_path / "again.conll").read_text() == output.read_text()


def test_conll_prediction_writer_is_an_allennlp_subcommand():
    import argparse

    from allennlp.commands.subcommand import Subcommand

    assert "coref-predict-conll" in Subcommand.list_available()
    parser = argparse.ArgumentParser().add_subparsers()
    subparser = Subcommand.by_name("coref-predict-conll")().add_subparser(parser)
    args = subparser.parse_args(["model.tar.gz", "dev#files=:2", "out.conll", "--batch-size", "2"])
    assert (args.archive_file, args.input_path, args.output_file, args.batch_size) == (
        "model.tar.gz",
        "dev#files=:2",
        "out.conll",
        2,
    )


def test_a_trained_archive_predicts_in_bfloat16_through_an_override(archive_path, predictor):
    """What docs/coref.md tells a user: the encoder's ``autocast_dtype`` set on a trained model when loading it."""
    override = json.dumps({"model.encoder.token_embedders.tokens.autocast_dtype": "bfloat16"})
    fast = Predictor.from_archive(load_archive(archive_path, overrides=override), "spanbert_coref")
    assert fast._model.encoder.token_embedder_tokens.autocast_dtype == "bfloat16"
    assert predictor._model.encoder.token_embedder_tokens.autocast_dtype is None
    output, expected = fast.predict(TEXT), predictor.predict(TEXT)
    assert output["document"] == expected["document"]
    assert set(output) == set(expected) and isinstance(output["clusters"], list)
