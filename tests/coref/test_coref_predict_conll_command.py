"""
``allennlp coref-predict-conll`` refuses what it cannot predict with one ``error:`` line, before
loading a model: archives of another model type (read from their ``config.json``), files that
are no archive, and inputs without words. (Predicting with a trained archive is tested in
``predictors/test_spanbert_coref_predictor.py``.)
"""

import argparse
import io
import json
import tarfile

import pytest

from spanbert_lib.commands.coref_predict_conll import CorefPredictConll, main
from spanbert_lib.safeguards.archive_configs import archive_model_type


def archive_with_config(path, config):
    """A ``model.tar.gz`` holding only ``config.json``: enough for the checks made before the
    model is loaded."""
    data = json.dumps(config).encode("utf-8")
    with tarfile.open(path, "w:gz") as archive:
        member = tarfile.TarInfo("config.json")
        member.size = len(data)
        archive.addfile(member, io.BytesIO(data))
    return path


def make_inputs(tmp_path):
    paths = {
        "qa_archive": archive_with_config(tmp_path / "qa.tar.gz", {"model": {"type": "spanbert_qa"}}),
        "coref_archive": archive_with_config(tmp_path / "coref.tar.gz", {"model": {"type": "spanbert_coref"}}),
        "untyped_archive": archive_with_config(tmp_path / "untyped.tar.gz", {"model": {}}),
        "text_file": tmp_path / "notes.txt",
        "qa_directory": tmp_path / "qa_run",
        "empty_conll": tmp_path / "empty.conll",
        "no_words_conll": tmp_path / "no_words.conll",
        "missing": tmp_path / "missing.conll",
    }
    paths["text_file"].write_text("not an archive\n")
    paths["qa_directory"].mkdir()
    (paths["qa_directory"] / "config.json").write_text('{"model": {"type": "transformer_qa"}}')
    paths["empty_conll"].write_text("")
    paths["no_words_conll"].write_text("#begin document (d); part 000\n#end document\n")
    return paths


# name: (archive, input, the path the message names, message after "error: PATH: ")
PREDICT_ERRORS = {
    # the model type is checked first: the missing input is not even looked at
    "qa_archive": (
        "qa_archive",
        "missing",
        "qa_archive",
        "the archive holds a 'spanbert_qa' model, not a coreference model "
        "(spanbert_coref); coref-predict-conll needs a coreference archive",
    ),
    "qa_serialization_directory": (
        "qa_directory",
        "missing",
        "qa_directory",
        "the archive holds a 'transformer_qa' model, not a coreference model",
    ),
    "archive_without_model_type": (
        "untyped_archive",
        "missing",
        "untyped_archive",
        "the archive's config.json names no model type",
    ),
    "not_an_archive": (
        "text_file",
        "missing",
        "text_file",
        "not a model archive (a model.tar.gz or a serialization directory with config.json)",
    ),
    "missing_archive": (
        "missing",
        "empty_conll",
        "missing",
        "no such model archive (a model.tar.gz or a serialization directory with config.json)",
    ),
    "empty_input": (
        "coref_archive",
        "empty_conll",
        "empty_conll",
        "no document with words (0 '#begin document' blocks); nothing to predict",
    ),
    "input_without_words": (
        "coref_archive",
        "no_words_conll",
        "no_words_conll",
        "no document with words (1 '#begin document' blocks); nothing to predict",
    ),
}


@pytest.mark.parametrize("name", sorted(PREDICT_ERRORS))
def test_refusals_are_one_line_before_the_model_is_loaded(tmp_path, capsys, monkeypatch, name):
    monkeypatch.delenv("SPANBERT_LIB_DEBUG", raising=False)
    paths = make_inputs(tmp_path)
    archive, input_name, named, message = PREDICT_ERRORS[name]
    output = tmp_path / "predicted.conll"
    parser = argparse.ArgumentParser()
    CorefPredictConll().add_subparser(parser.add_subparsers())
    args = parser.parse_args(["coref-predict-conll", str(paths[archive]), str(paths[input_name]), str(output)])
    with pytest.raises(SystemExit) as exit_info:
        args.func(args)
    assert exit_info.value.code == 1
    [error_line] = capsys.readouterr().err.splitlines()
    assert error_line.startswith(f"error: {paths[named]}: {message}"), error_line
    assert not output.exists()


def test_include_package_is_accepted_by_allennlp_and_the_module_entry_point(tmp_path, capsys, monkeypatch):
    from allennlp.commands import parse_args

    monkeypatch.setattr(
        "sys.argv",
        [
            "allennlp",
            "coref-predict-conll",
            "model.tar.gz",
            "in.conll",
            "out.conll",
            "--include-package",
            "spanbert_lib.coref",
        ],
    )
    _, args = parse_args("allennlp")
    assert args.include_package == ["spanbert_lib.coref"]

    paths = make_inputs(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                str(paths["qa_archive"]),
                str(paths["empty_conll"]),
                str(tmp_path / "out.conll"),
                "--include-package",
                "spanbert_lib.coref.metrics",
            ]
        )
    assert exit_info.value.code == 1
    assert "the archive holds a 'spanbert_qa' model" in capsys.readouterr().err


def test_archive_model_type_reads_only_the_config(tmp_path):
    paths = make_inputs(tmp_path)
    assert archive_model_type(str(paths["coref_archive"])) == "spanbert_coref"
    assert archive_model_type(str(paths["qa_directory"])) == "transformer_qa"
