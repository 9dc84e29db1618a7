"""Dataset path specs: files, directories, globs, comma lists and #files=START:END slices."""

import pytest

from spanbert_lib.common.data_files import resolve_data_files


@pytest.fixture
def corpus(tmp_path):
    for name in ["b.conll", "a.conll", "c.conll", "notes.txt"]:
        (tmp_path / name).write_text("x")
    return tmp_path


def test_directory_glob_file_and_list(corpus):
    names = lambda paths: [p.rsplit("/", 1)[-1] for p in paths]  # noqa: E731
    assert names(resolve_data_files(corpus, pattern="*conll")) == ["a.conll", "b.conll", "c.conll"]
    assert names(resolve_data_files(f"{corpus}/[ab]*")) == ["a.conll", "b.conll"]
    assert names(resolve_data_files(f"{corpus}/c.conll, {corpus}/notes.txt")) == ["c.conll", "notes.txt"]
    # overlapping parts are listed once
    assert names(resolve_data_files(f"{corpus}/a.conll,{corpus}/*.conll")) == ["a.conll", "b.conll", "c.conll"]


def test_slices(corpus):
    names = lambda paths: [p.rsplit("/", 1)[-1] for p in paths]  # noqa: E731
    assert names(resolve_data_files(f"{corpus}#files=:2", pattern="*conll")) == ["a.conll", "b.conll"]
    assert names(resolve_data_files(f"{corpus}#files=2:", pattern="*conll")) == ["c.conll"]
    assert names(resolve_data_files(f"{corpus}/*.conll#files=-1:")) == ["c.conll"]
    with pytest.raises(ValueError, match="selects none of the 3 files"):
        resolve_data_files(f"{corpus}#files=5:9", pattern="*conll")


def test_missing_part_is_named(corpus):
    with pytest.raises(FileNotFoundError, match="nope.conll"):
        resolve_data_files(f"{corpus}/a.conll,{corpus}/nope.conll")
