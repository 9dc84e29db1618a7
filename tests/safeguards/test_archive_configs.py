"""Loading a model archive runs no code of the archive's choosing: every ``type`` it names must be registered."""

import io
import json
import sys
import tarfile
from pathlib import Path

import pytest

from spanbert_lib.safeguards.archive_configs import (
    UnsafeArchiveConfigError,
    check_archive_config,
    loading_archive,
    read_archive_config,
    registered_names,
    unsafe_entries,
)
from tests.safeguards.archive_builders import write_model_archive
from tests.safeguards.in_process import run_command, user_error_line


def _popen(marker: Path) -> dict:
    """A config object that, built by allennlp without the safeguard, runs ``touch MARKER``."""
    return {"type": "subprocess.Popen", "args": ["touch", str(marker)]}


def _set(config: dict, dotted_key: str, value) -> None:
    *parents, last = dotted_key.split(".")
    for key in parents:
        config = config.setdefault(key, {})
    config[last] = value


def _archive_with(tmp_path: Path, dotted_key: str, value) -> Path:
    return write_model_archive(tmp_path / "model.tar.gz", weights={}, edit_config=lambda c: _set(c, dotted_key, value))


@pytest.fixture
def import_marker_module(tmp_path, monkeypatch):
    """``(module name, marker)``: a module on ``sys.path`` that creates ``marker`` when it is imported."""
    marker = tmp_path / "imported"
    name = f"archive_payload_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nclass Payload:\n    def __init__(self, **kwargs): pass\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, marker
    sys.modules.pop(name, None)


@pytest.mark.parametrize(
    "key",
    [
        "dataset_reader",
        "validation_dataset_reader",
        "model",
        "model.text_field_embedder.token_embedders.tokens",
        "model.seq2vec_encoder",
        "vocabulary",
    ],
)
def test_a_dotted_type_anywhere_loading_builds_is_refused_before_anything_runs(tmp_path, key):
    from allennlp.models.archival import load_archive

    marker = tmp_path / "ran"
    archive = _archive_with(tmp_path, key, _popen(marker))
    with pytest.raises(UnsafeArchiveConfigError) as raised:
        load_archive(str(archive))
    assert str(raised.value).startswith(f"{archive}: config.json key '{key}.type' names 'subprocess.Popen'")
    assert "not a registered component" in str(raised.value)
    assert not marker.exists()


def test_the_module_a_dotted_type_names_is_never_imported(tmp_path, import_marker_module):
    from allennlp.models.archival import load_archive

    module, marker = import_marker_module
    archive = _archive_with(tmp_path, "model", {"type": f"{module}.Payload"})
    with pytest.raises(UnsafeArchiveConfigError, match=r"key 'model\.type'"):
        load_archive(str(archive))
    assert module not in sys.modules
    assert not marker.exists()


def test_an_unknown_name_and_remote_code_are_refused_naming_the_key(tmp_path):
    from allennlp.models.archival import load_archive

    archive = _archive_with(tmp_path / "unknown", "model.seq2vec_encoder.type", "no_such_pooler")
    (tmp_path / "unknown").mkdir(exist_ok=True)
    with pytest.raises(UnsafeArchiveConfigError, match=r"key 'model\.seq2vec_encoder\.type' names 'no_such_pooler'"):
        load_archive(str(archive))
    remote = tmp_path / "remote"
    remote.mkdir()
    archive = _archive_with(
        remote, "model.text_field_embedder.token_embedders.tokens.transformer_kwargs", {"trust_remote_code": True}
    )
    with pytest.raises(UnsafeArchiveConfigError, match="trust_remote_code"):
        load_archive(str(archive))


def test_overrides_that_name_a_dotted_type_are_refused_too(tmp_path):
    from allennlp.models.archival import load_archive

    marker = tmp_path / "ran"
    archive = write_model_archive(tmp_path / "model.tar.gz", weights={})
    with pytest.raises(UnsafeArchiveConfigError, match=r"key 'dataset_reader\.type'"):
        load_archive(str(archive), overrides=json.dumps({"dataset_reader": _popen(marker)}))
    assert not marker.exists()


def test_registries_resolve_dotted_names_for_configs_the_user_writes_but_not_while_an_archive_loads():
    from allennlp.models import Model
    from allennlp.models.basic_classifier import BasicClassifier

    dotted = "allennlp.models.basic_classifier.BasicClassifier"
    assert Model.resolve_class_name(dotted) == (BasicClassifier, None)
    with loading_archive("shared/model.tar.gz"):
        assert Model.resolve_class_name("basic_classifier")[0] is BasicClassifier
        with pytest.raises(UnsafeArchiveConfigError, match="^shared/model.tar.gz: .*not a registered Model"):
            Model.resolve_class_name(dotted)
    assert Model.resolve_class_name(dotted) == (BasicClassifier, None)


def test_unsafe_entries_walk_lists_and_any_depth():
    names = registered_names()
    assert "spanbert_coref" in names and "basic_classifier" in names
    deep: dict = {"type": "a.b"}
    for _ in range(5000):  # deeper than Python's recursion limit
        deep = {"inner": deep}
    config = {"type": "basic_classifier", "layers": [{"type": "basic_classifier"}, {"type": "os.system"}], "deep": deep}
    found = list(unsafe_entries(config, names, "model"))
    assert found[0][0] == "model.layers[1].type"
    assert found[1][0].startswith("model.deep.inner.inner.") and found[1][0].endswith(".type")
    assert len(found) == 2
    check_archive_config({"model": {"type": "basic_classifier"}, "trainer": {"type": "not.checked"}}, "m.tar.gz")


def test_read_archive_config_accepts_members_named_with_a_leading_dot_slash(tmp_path):
    archive = tmp_path / "repacked.tar.gz"
    data = json.dumps({"model": {"type": "spanbert_coref"}}).encode()
    with tarfile.open(archive, "w:gz") as handle:
        info = tarfile.TarInfo("./config.json")
        info.size = len(data)
        handle.addfile(info, io.BytesIO(data))
    assert read_archive_config(archive) == {"model": {"type": "spanbert_coref"}}


@pytest.mark.parametrize("command", ["predict", "evaluate", "export-encoder", "serve", "coref-predict-conll"])
def test_every_command_refuses_the_archive_in_one_line_with_nothing_run(tmp_path, monkeypatch, capsys, command):
    marker = tmp_path / "ran"
    archive = _archive_with(tmp_path, "dataset_reader", _popen(marker))
    data = tmp_path / "input.jsonl"
    data.write_text('{"sentence": "a fine day", "label": "positive"}\n', encoding="utf-8")
    argv = {
        "predict": ["predict", archive, data],
        "evaluate": ["evaluate", archive, data],
        "export-encoder": ["export-encoder", archive, tmp_path / "encoder"],
        "serve": ["serve", "--model", f"evil={archive}", "--port", "1"],
        "coref-predict-conll": ["coref-predict-conll", archive, data, tmp_path / "out.conll"],
    }[command]
    code, _, err = run_command(monkeypatch, capsys, *argv)
    assert code == 1
    line = user_error_line(err)
    assert f"{archive}: config.json key 'dataset_reader.type' names 'subprocess.Popen'" in line
    assert not marker.exists()
    assert not (tmp_path / "encoder").exists() and not (tmp_path / "out.conll").exists()


@pytest.mark.parametrize("factory", ["spanbert_coref", "spanbert_span_ner"])
def test_the_spacy_components_refuse_the_archive_at_add_pipe(tmp_path, factory):
    import spacy

    import spanbert_lib.spacy_components  # noqa: F401

    marker = tmp_path / "ran"
    archive = _archive_with(tmp_path, "dataset_reader", _popen(marker))
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=r"config.json key 'dataset_reader\.type' names 'subprocess\.Popen'"):
        nlp.add_pipe(factory, config={"archive": str(archive)})
    assert not marker.exists()
