"""
Nothing a user has is lost by a command (issue #24): no command writes over its own input (the same
path, a symbolic link or a hard link to it), an output file is replaced only by a complete new one, and
``--recover`` on a finished run changes nothing. Every case compares the files byte for byte (and their
modification times) before and after.
"""

import json
import os
import shutil
from pathlib import Path

import pytest

from tests import REPO_ROOT, TINY_BERT_DIR
from tests.safeguards.in_process import run_command, snapshot, user_error_line

QA_CONFIG = REPO_ROOT / "fixtures" / "configs" / "qa" / "squad11_tiny.jsonnet"
PRETRAINING_CONFIG = REPO_ROOT / "fixtures" / "configs" / "pretraining" / "spanbert_tiny.jsonnet"
SQUAD = REPO_ROOT / "fixtures" / "qa" / "squad11.json"
COREF_KEY = REPO_ROOT / "fixtures" / "coref" / "singletons.gold_conll"
CORPUS = REPO_ROOT / "fixtures" / "corpus"
QUESTION = {"question": "When did the bridge open?", "passage": "The bridge opened in March 1932."}


@pytest.fixture(scope="module")
def qa_run(tmp_path_factory) -> Path:
    """A finished one-epoch run of the tiny SQuAD config (model.tar.gz, metrics.json, checkpoints)."""
    from allennlp.commands.train import train_model_from_file

    directory = tmp_path_factory.mktemp("qa") / "run"
    train_model_from_file(str(QA_CONFIG), str(directory))
    return directory


def _copy(source: Path, target: Path) -> Path:
    shutil.copyfile(source, target)
    return target


def _linked(path: Path, how: str) -> Path:
    """``path`` itself, or a new symbolic / hard link to it."""
    if how == "same":
        return path
    link = path.with_name(f"{how}_{path.name}")
    if how == "symlink":
        link.symlink_to(path)
    else:
        os.link(path, link)
    return link


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
def test_predict_refuses_its_input_as_output(qa_run, tmp_path, monkeypatch, capsys, how):
    source = tmp_path / "questions.jsonl"
    source.write_text(json.dumps(QUESTION) + "\n", encoding="utf-8")
    output = _linked(source, how)
    before = snapshot(tmp_path)
    code, _, err = run_command(
        monkeypatch, capsys, "predict", qa_run / "model.tar.gz", source, "--output-file", output, "--silent"
    )
    assert code == 1
    assert "refusing to write --output-file over an input of the command" in user_error_line(err)
    assert snapshot(tmp_path) == before


def test_predict_that_fails_leaves_the_old_output(qa_run, tmp_path, monkeypatch, capsys):
    source = tmp_path / "questions.jsonl"
    source.write_text(json.dumps(QUESTION) + "\nnull\n", encoding="utf-8")
    output = tmp_path / "predictions.jsonl"
    output.write_text("the predictions of yesterday\n", encoding="utf-8")
    before = snapshot(tmp_path)
    code, _, err = run_command(
        monkeypatch, capsys, "predict", qa_run / "model.tar.gz", source, "--output-file", output, "--silent"
    )
    assert code == 1
    assert user_error_line(err) == f"error: {source}:2: expected a JSON object on each line, got null"
    assert snapshot(tmp_path) == before  # no partial file left beside it either


def test_predict_that_succeeds_replaces_the_output(qa_run, tmp_path, monkeypatch, capsys):
    source = tmp_path / "questions.jsonl"
    source.write_text(json.dumps(QUESTION) + "\n" + json.dumps(QUESTION) + "\n", encoding="utf-8")
    output = tmp_path / "predictions.jsonl"
    output.write_text("old\n", encoding="utf-8")
    output.chmod(0o640)
    code, _, _ = run_command(
        monkeypatch, capsys, "predict", qa_run / "model.tar.gz", source, "--output-file", output, "--silent"
    )
    assert code == 0
    lines = output.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and all("best_span_str" in json.loads(line) for line in lines)
    assert output.stat().st_mode & 0o777 == 0o640  # a replaced file keeps its permissions
    assert sorted(path.name for path in tmp_path.iterdir()) == ["predictions.jsonl", "questions.jsonl"]


def test_predictor_file_arguments_may_not_name_the_input(qa_run, tmp_path, monkeypatch, capsys):
    dataset = _copy(SQUAD, tmp_path / "dev.json")
    before = snapshot(tmp_path)
    code, _, err = run_command(
        monkeypatch,
        capsys,
        "predict",
        qa_run / "model.tar.gz",
        dataset,
        "--use-dataset-reader",
        "--predictor-args",
        json.dumps({"predictions_file": str(dataset)}),
        "--output-file",
        tmp_path / "full_output.jsonl",
        "--silent",
    )
    assert code == 1
    assert "--predictor-args predictions_file over an input" in user_error_line(err)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("option", ["--output-file", "--predictions-output-file"])
def test_evaluate_refuses_its_input_as_output(qa_run, tmp_path, monkeypatch, capsys, option):
    dataset = _copy(SQUAD, tmp_path / "dev.json")
    link = _linked(dataset, "symlink")
    before = snapshot(tmp_path)
    code, _, err = run_command(monkeypatch, capsys, "evaluate", qa_run / "model.tar.gz", dataset, option, link)
    assert code == 1
    assert f"refusing to write {option} over an input" in user_error_line(err)
    assert snapshot(tmp_path) == before


def test_evaluate_that_fails_leaves_the_old_metrics(qa_run, tmp_path, monkeypatch, capsys):
    dataset = tmp_path / "dev.json"
    dataset.write_text('{"data": [{"title": "t", "paragraphs": [{"context": "", "qas": []}]}]}', encoding="utf-8")
    metrics = tmp_path / "metrics.json"
    metrics.write_text('{"f1": 91.0}', encoding="utf-8")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("earlier predictions\n", encoding="utf-8")
    before = snapshot(tmp_path)
    code, _, err = run_command(
        monkeypatch,
        capsys,
        "evaluate",
        qa_run / "model.tar.gz",
        dataset,
        "--output-file",
        metrics,
        "--predictions-output-file",
        predictions,
    )
    assert code == 1 and user_error_line(err)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
def test_coref_predict_conll_refuses_to_overwrite_the_key(tmp_path, monkeypatch, capsys, how):
    from tests.coref.test_coref_predict_conll_command import archive_with_config

    archive = archive_with_config(tmp_path / "coref.tar.gz", {"model": {"type": "spanbert_coref"}})
    key = _copy(COREF_KEY, tmp_path / "key.conll")
    output = _linked(key, how)
    before = snapshot(tmp_path)
    code, _, err = run_command(monkeypatch, capsys, "coref-predict-conll", archive, key, output)
    assert code == 1
    assert "refusing to write OUTPUT over an input of the command" in user_error_line(err)
    assert snapshot(tmp_path) == before


def test_squad_eval_does_not_write_its_scores_over_the_dataset(tmp_path, monkeypatch, capsys):
    dataset = _copy(SQUAD, tmp_path / "dev.json")
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps({"q1": "March 1932"}), encoding="utf-8")
    before = snapshot(tmp_path)
    code, _, err = run_command(monkeypatch, capsys, "squad-eval", dataset, predictions, "--output-file", dataset)
    assert code == 1 and "refusing to write --output-file" in user_error_line(err)
    assert snapshot(tmp_path) == before


def test_export_encoder_into_the_run_directory_is_refused(qa_run, tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    shutil.copytree(qa_run, run)
    before = snapshot(run)
    for archive in (run / "model.tar.gz", run):
        code, _, err = run_command(monkeypatch, capsys, "export-encoder", archive, run)
        assert code == 1 and "into the directory of the input" in user_error_line(err)
    assert snapshot(run) == before  # its config.json is the training's, not the encoder's


def test_export_encoder_replaces_an_old_export_whole(qa_run, tmp_path, monkeypatch, capsys):
    export = tmp_path / "encoder"
    export.mkdir()
    (export / "config.json").write_text("{}", encoding="utf-8")
    (export / "notes.txt").write_text("kept", encoding="utf-8")
    code, _, _ = run_command(monkeypatch, capsys, "export-encoder", qa_run / "model.tar.gz", export)
    assert code == 0
    assert json.loads((export / "config.json").read_text())["model_type"] == "bert"
    assert (export / "notes.txt").read_text() == "kept" and (export / "model.safetensors").exists()
    assert [path.name for path in tmp_path.iterdir()] == ["encoder"]  # no temporary directory left


def test_build_wordpiece_vocab_does_not_write_into_its_corpus(tmp_path, monkeypatch, capsys):
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus)
    before = snapshot(corpus)
    for text_path in (corpus, corpus / "miscellany.txt"):
        code, _, err = run_command(monkeypatch, capsys, "build-wordpiece-vocab", text_path, corpus)
        assert code == 1 and "into the directory of the input" in user_error_line(err)
    assert snapshot(corpus) == before


def test_masking_stats_does_not_plot_over_its_input(tmp_path, monkeypatch, capsys):
    text = _copy(CORPUS / "miscellany.txt", tmp_path / "text.txt")
    config = _copy(PRETRAINING_CONFIG, tmp_path / "config.jsonnet")
    before = snapshot(tmp_path)
    for target in (text, config):
        code, _, err = run_command(monkeypatch, capsys, "masking-stats", config, text, "--plot", target)
        assert code == 1 and "refusing to write --plot over an input" in user_error_line(err)
    assert snapshot(tmp_path) == before


def test_train_force_does_not_delete_its_own_config_or_data(tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    run.mkdir()
    config = run / "config.jsonnet"
    config.write_text(QA_CONFIG.read_text().replace("../../../", str(REPO_ROOT) + "/"), encoding="utf-8")
    data = _copy(SQUAD, run / "train.json")
    before = snapshot(run)
    code, _, err = run_command(monkeypatch, capsys, "train", config, "-s", run, "-f")
    assert code == 1 and "refusing --force: it deletes the serialization directory" in user_error_line(err)
    elsewhere = _copy(config, tmp_path / "config.jsonnet")
    overrides = json.dumps({"train_data_path": str(data), "validation_data_path": str(data)})
    code, _, err = run_command(monkeypatch, capsys, "train", elsewhere, "-s", run, "-f", "-o", overrides)
    assert code == 1 and f"holds the input {data}" in user_error_line(err)
    assert snapshot(run) == before


def test_train_into_a_file_is_refused(tmp_path, monkeypatch, capsys):
    target = _copy(SQUAD, tmp_path / "data.json")
    before = snapshot(tmp_path)
    code, _, err = run_command(monkeypatch, capsys, "train", QA_CONFIG, "-s", target, "-f")
    assert code == 1 and "is an existing file, not a directory" in user_error_line(err)
    assert snapshot(tmp_path) == before


def test_recover_on_a_finished_run_changes_nothing(qa_run, tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    shutil.copytree(qa_run, run)
    before = snapshot(run)
    assert len(json.loads((run / "metrics.json").read_text())) > 10
    code, out, err = run_command(monkeypatch, capsys, "train", QA_CONFIG, "-s", run, "--recover")
    assert code == 0, err[-2000:]
    assert "this training run is finished (1 epoch of 1;" in out
    assert snapshot(run) == before


def test_recover_with_more_epochs_continues_the_run(qa_run, tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    shutil.copytree(qa_run, run)
    before = snapshot(run)
    overrides = json.dumps({"trainer.num_epochs": 2})
    code, out, err = run_command(monkeypatch, capsys, "train", QA_CONFIG, "-s", run, "--recover", "-o", overrides)
    assert code == 0, err[-2000:]
    assert "finished" not in out
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["epoch"] == 1 and (run / "metrics_epoch_1.json").exists()
    assert json.loads((run / "config.json").read_text())["trainer"]["num_epochs"] == 2
    after = snapshot(run)
    assert after["model.tar.gz"] != before["model.tar.gz"]
    assert after["metrics_epoch_0.json"] == before["metrics_epoch_0.json"]  # the first epoch stays as it was


# ---- what a command reads beyond its arguments: the encoder folder an archive names, a config's imports ------


@pytest.fixture(scope="module")
def qa_run_own_encoder(tmp_path_factory) -> Path:
    """A finished tiny SQuAD run whose config names its own copy of the tiny BERT folder (``run/../encoder``)."""
    from allennlp.commands.train import train_model_from_file

    base = tmp_path_factory.mktemp("qa_own_encoder")
    encoder = base / "encoder"
    shutil.copytree(TINY_BERT_DIR, encoder)
    overrides = {"dataset_reader.model_name": str(encoder), "model.encoder.model_name": str(encoder)}
    train_model_from_file(str(QA_CONFIG), str(base / "run"), overrides=json.dumps(overrides))
    return base / "run"


def test_export_encoder_refuses_the_encoder_folder_its_archive_names(qa_run_own_encoder, monkeypatch, capsys):
    encoder = qa_run_own_encoder.parent / "encoder"
    before = snapshot(encoder)
    code, _, err = run_command(monkeypatch, capsys, "export-encoder", qa_run_own_encoder / "model.tar.gz", encoder)
    assert code == 1 and "refusing to write OUTPUT_DIR into the directory of the input" in user_error_line(err)
    assert snapshot(encoder) == before


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_outputs_may_not_land_in_the_encoder_folder_the_archive_names(
    qa_run_own_encoder, tmp_path, monkeypatch, capsys, command
):
    encoder = qa_run_own_encoder.parent / "encoder"
    source = tmp_path / "questions.jsonl"
    source.write_text(json.dumps(QUESTION) + "\n", encoding="utf-8")
    data = source if command == "predict" else SQUAD
    before = snapshot(encoder)
    archive = qa_run_own_encoder / "model.tar.gz"
    code, _, err = run_command(monkeypatch, capsys, command, archive, data, "--output-file", encoder / "vocab.txt")
    assert code == 1 and "refusing to write --output-file over an input of the command" in user_error_line(err)
    assert snapshot(encoder) == before


def test_train_force_keeps_the_files_its_config_imports_and_the_encoder_folder(tmp_path, monkeypatch, capsys):
    shared = tmp_path / "shared"
    shared.mkdir()
    _copy(REPO_ROOT / "training_configs" / "common" / "optimizer.libsonnet", shared / "optimizer.libsonnet")
    config = tmp_path / "config.jsonnet"
    config.write_text(
        QA_CONFIG.read_text()
        .replace("../../../training_configs/common/optimizer.libsonnet", str(shared / "optimizer.libsonnet"))
        .replace('"fixtures/', f'"{REPO_ROOT}/fixtures/'),
        encoding="utf-8",
    )
    encoder = tmp_path / "encoder"
    shutil.copytree(TINY_BERT_DIR, encoder)
    before = snapshot(tmp_path)
    code, _, err = run_command(monkeypatch, capsys, "train", config, "-s", shared, "-f")
    assert code == 1 and f"holds the input {shared / 'optimizer.libsonnet'}" in user_error_line(err)
    overrides = json.dumps({"dataset_reader.model_name": str(encoder), "model.encoder.model_name": str(encoder)})
    code, _, err = run_command(monkeypatch, capsys, "train", config, "-s", encoder, "-f", "-o", overrides)
    assert code == 1 and f"holds the input {encoder}" in user_error_line(err)
    assert snapshot(tmp_path) == before


def test_train_force_refuses_a_serialization_directory_that_is_a_link(tmp_path, monkeypatch, capsys):
    real = tmp_path / "runs"
    real.mkdir()
    (real / "earlier.txt").write_text("an earlier run", encoding="utf-8")
    link = tmp_path / "latest"
    link.symlink_to(real)
    before = snapshot(tmp_path)
    code, _, err = run_command(monkeypatch, capsys, "train", QA_CONFIG, "-s", link, "-f")
    assert code == 1 and "refusing --force: the serialization directory (-s) is a symbolic link" in user_error_line(err)
    assert snapshot(tmp_path) == before and link.is_symlink()


def test_evaluate_refuses_two_outputs_that_are_one_file_through_a_link(qa_run, tmp_path, monkeypatch, capsys):
    metrics = tmp_path / "metrics.json"
    metrics.write_text("{}", encoding="utf-8")
    predictions = _linked(metrics, "symlink")
    before = snapshot(tmp_path)
    code, _, err = run_command(
        monkeypatch,
        capsys,
        "evaluate",
        qa_run / "model.tar.gz",
        SQUAD,
        "--output-file",
        metrics,
        "--predictions-output-file",
        predictions,
    )
    assert code == 1 and "is named as two outputs (--output-file and --predictions-output-file" in user_error_line(err)
    assert snapshot(tmp_path) == before
