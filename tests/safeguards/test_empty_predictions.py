"""A model that predicts nothing says so: at the end of training, in ``evaluate`` and in ``coref-predict-conll``."""

import json

import pytest

from spanbert_lib.safeguards.empty_predictions import empty_prediction_warning
from tests import REPO_ROOT
from tests.safeguards.in_process import run_command

CONFIGS = REPO_ROOT / "fixtures" / "configs"
COREF_DATA = REPO_ROOT / "fixtures" / "coref" / "segmented_document.gold_conll"
# a mention must score above this logit to be kept at prediction time: none is
KEEPS_NO_MENTION = {"trainer.num_epochs": 1, "model.singletons": True, "model.min_mention_score": 1e6}


def warning_lines(err: str):
    return [line for line in err.splitlines() if line.startswith("warning: ")]


@pytest.fixture(scope="module")
def mentionless_run(tmp_path_factory):
    from allennlp.commands.train import train_model_from_file

    directory = tmp_path_factory.mktemp("mentionless") / "run"
    train_model_from_file(
        str(CONFIGS / "coref" / "spanbert_coref_tiny.jsonnet"), str(directory), overrides=json.dumps(KEEPS_NO_MENTION)
    )
    return directory


def test_training_whose_best_model_keeps_no_mentions_ends_with_one_warning(tmp_path, monkeypatch, capsys):
    overrides = json.dumps(KEEPS_NO_MENTION)
    config = CONFIGS / "coref" / "spanbert_coref_tiny.jsonnet"
    code, _, err = run_command(monkeypatch, capsys, "train", config, "-s", tmp_path / "run", "-o", overrides)
    assert code == 0
    [line] = warning_lines(err)
    assert line.startswith(f"warning: {tmp_path / 'run'}: on the validation data the model keeps no mentions")
    assert "trainer.num_epochs" in line
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["best_validation_predicted_mentions"] == 0.0


def test_evaluate_and_coref_predict_conll_of_such_a_model_warn(mentionless_run, tmp_path, monkeypatch, capsys):
    archive = mentionless_run / "model.tar.gz"
    code, _, err = run_command(monkeypatch, capsys, "evaluate", archive, COREF_DATA)
    assert code == 0
    assert warning_lines(err) == [
        f"warning: {archive}: on {COREF_DATA} the model " + empty_prediction_warning({"predicted_mentions": 0})[10:]
    ]
    code, _, err = run_command(monkeypatch, capsys, "coref-predict-conll", archive, COREF_DATA, tmp_path / "out.conll")
    assert code == 0 and len(warning_lines(err)) == 1 and "keeps no mentions" in warning_lines(err)[0]


def test_a_model_that_predicts_mentions_does_not_warn(tmp_path, monkeypatch, capsys):
    from tests.spacy_components.archives import _write_coref_document, shared_archives

    archive = shared_archives(tmp_path.parent)["coref"]  # trained until it reproduces its story's clusters
    story = _write_coref_document(tmp_path / "story.conll")
    metrics = tmp_path / "metrics.json"
    code, _, err = run_command(monkeypatch, capsys, "evaluate", archive, story, "--output-file", metrics)
    assert code == 0 and warning_lines(err) == []
    assert json.loads(metrics.read_text())["predicted_mentions"] > 0


def test_span_ner_that_predicts_no_entity_warns(tmp_path, monkeypatch, capsys):
    overrides = json.dumps(
        {
            "trainer.num_epochs": 1,
            "dataset_reader.type": "spanbert_span_ner_litbank",
            "train_data_path": str(REPO_ROOT / "fixtures" / "ner" / "litbank"),
            "validation_data_path": str(REPO_ROOT / "fixtures" / "ner" / "litbank"),
            "model.outside_logit_bias": 1e6,
        }
    )
    config = CONFIGS / "ner" / "span_ner_tiny.jsonnet"
    code, _, err = run_command(monkeypatch, capsys, "train", config, "-s", tmp_path / "run", "-o", overrides)
    assert code == 0
    [line] = warning_lines(err)
    assert "on the validation data the model predicts no entity" in line


@pytest.mark.parametrize(
    "metrics, prefix, expected",
    [
        ({"predicted_mentions": 0.0}, "", "keeps no mentions"),
        ({"best_validation_predicted_entities": 0}, "best_validation_", "predicts no entity"),
        ({"predicted_mentions": 3.5, "predicted_entities": 1.0}, "", None),
        ({"accuracy": 0.0}, "", None),  # another package's model: nothing to say
    ],
)
def test_empty_prediction_warning(metrics, prefix, expected):
    found = empty_prediction_warning(metrics, prefix)
    assert (found is None) if expected is None else (expected in found)
