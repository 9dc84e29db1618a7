"""Model archives cannot write outside their extraction directory, wherever allennlp opens them."""

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from spanbert_lib.safeguards.safe_archives import UnsafeArchiveError, extract_archive_safely, extracted_archive
from tests import REPO_ROOT
from tests.safeguards.archive_builders import add_bytes, add_symlink, write_model_archive


def crafted_archive(path: Path, member_kind: str, outside: Path) -> str:
    """A model archive with one harmless file and one member aiming at ``outside``; returns that member's name."""
    with tarfile.open(path, "w:gz") as archive:
        add_bytes(archive, "config.json", b"{}")
        if member_kind == "parent_path":
            name = "../" * 12 + str(outside).lstrip("/")
            add_bytes(archive, name, b"written outside")
        elif member_kind == "symlink":  # a link out of the directory, then a file written through it
            name = "vocabulary"
            add_symlink(archive, name, str(outside.parent))
            add_bytes(archive, f"{name}/{outside.name}", b"written outside")
        elif member_kind == "hardlink":
            name = "weights.th"
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.LNKTYPE, "../" * 12 + str(outside).lstrip("/")
            archive.addfile(info)
        else:  # a character device
            name = "device"
            info = tarfile.TarInfo(name)
            info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
            archive.addfile(info)
    return name


@pytest.mark.parametrize("member_kind", ["parent_path", "symlink", "hardlink", "device"])
def test_load_archive_refuses_members_leaving_the_directory(tmp_path, member_kind):
    from allennlp.models.archival import load_archive

    outside = tmp_path / "elsewhere" / "escaped.txt"
    outside.parent.mkdir()
    archive = tmp_path / "model.tar.gz"
    member = crafted_archive(archive, member_kind, outside)
    with pytest.raises(UnsafeArchiveError) as raised:
        load_archive(str(archive))
    message = str(raised.value)
    assert message.startswith(f"{archive}: refusing to extract member {member!r}")
    assert not outside.exists()


def test_absolute_member_names_are_extracted_inside_the_directory(tmp_path):
    outside = tmp_path / "elsewhere" / "escaped.txt"
    archive = tmp_path / "model.tar.gz"
    with tarfile.open(archive, "w:gz") as handle:
        add_bytes(handle, str(outside), b"data")
    target = tmp_path / "target"
    target.mkdir()
    extract_archive_safely(archive, target)
    assert not outside.exists()
    assert (target / str(outside).lstrip("/")).read_bytes() == b"data"


def test_failed_extraction_leaves_no_temporary_directory(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "temp"))
    (tmp_path / "temp").mkdir()
    archive = tmp_path / "model.tar.gz"
    crafted_archive(archive, "parent_path", tmp_path / "escaped.txt")
    with pytest.raises(UnsafeArchiveError):
        with extracted_archive(archive):
            pass
    assert list((tmp_path / "temp").iterdir()) == []


def test_plain_archive_extracts(tmp_path):
    archive = tmp_path / "model.tar.gz"
    with tarfile.open(archive, "w:gz") as handle:
        add_bytes(handle, "config.json", b'{"a": 1}')
        add_bytes(handle, "vocabulary/labels.txt", b"x\n")
    with extracted_archive(archive) as directory:
        assert json.loads(Path(directory, "config.json").read_text()) == {"a": 1}
        assert Path(directory, "vocabulary", "labels.txt").read_text() == "x\n"
    assert not Path(directory).exists()
    target = tmp_path / "target"
    target.mkdir()
    extract_archive_safely(archive, target)
    assert sorted(p.name for p in target.iterdir()) == ["config.json", "vocabulary"]


def test_every_unfiltered_extractall_of_the_process_uses_the_data_filter(tmp_path):
    """allennlp's cached_path(extract_archive=True) and archive_surgery call extractall without a filter."""
    import allennlp  # noqa: F401  (the shim acts on the first import of allennlp)

    archive = tmp_path / "links.tar"
    with tarfile.open(archive, "w") as handle:
        add_symlink(handle, "link", "/etc")
    target = tmp_path / "target"
    target.mkdir()
    with tarfile.open(archive) as handle:
        with pytest.raises(tarfile.AbsoluteLinkError):
            handle.extractall(target)
    assert not (target / "link").exists()


def test_predict_with_a_crafted_archive_fails_with_one_clear_line_and_writes_nothing(tmp_path):
    outside = tmp_path / "elsewhere" / "escaped.txt"
    outside.parent.mkdir()
    archive = tmp_path / "model.tar.gz"
    member = crafted_archive(archive, "parent_path", outside)
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text('{"sentence": "a fine film"}\n')
    completed = subprocess.run(
        [str(Path(sys.executable).with_name("allennlp")), "predict", str(archive), str(inputs)],
        cwd=str(REPO_ROOT),
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
    )
    assert completed.returncode != 0
    assert f"{archive}: refusing to extract member {member!r}" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert not outside.exists()


def test_loadable_archive_still_loads(tmp_path):
    """The filter refuses nothing an ordinary model archive holds (config, vocabulary dir, weights)."""
    import torch
    from allennlp.common import Params
    from allennlp.data import Vocabulary
    from allennlp.models import Model
    from allennlp.models.archival import load_archive

    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["positive", "negative"], namespace="labels")
    params = Params.from_file(str(REPO_ROOT / "fixtures" / "configs" / "tiny_classifier.jsonnet"))
    model = Model.from_params(vocab=vocab, params=params["model"])
    archive = write_model_archive(tmp_path / "model.tar.gz", weights=model.state_dict())
    loaded = load_archive(str(archive)).model
    for name, value in model.state_dict().items():
        assert torch.equal(loaded.state_dict()[name], value), name


def test_weights_that_do_not_fit_are_one_line_naming_the_archive_and_the_weights_file(tmp_path, monkeypatch, capsys):
    import torch

    from tests.safeguards.in_process import run_command, user_error_line

    archive = write_model_archive(tmp_path / "model.tar.gz", weights={"classifier.weight": torch.zeros(2, 3)})
    other = tmp_path / "other.th"
    torch.save({"some_other_model.weight": torch.zeros(1)}, other)
    data = tmp_path / "input.jsonl"
    data.write_text('{"sentence": "a fine day"}\n', encoding="utf-8")
    for extra, weights in (
        ([], "its weights"),
        (["--weights-file", str(other)], f"the weights of --weights-file {other}"),
    ):
        code, _, err = run_command(monkeypatch, capsys, "predict", archive, data, *extra)
        line = user_error_line(err)
        assert code == 1
        assert line.startswith(f"error: {archive}: {weights} do not fit the model its config.json describes (")
        assert "missing and" in line and "unexpected parameters" in line
