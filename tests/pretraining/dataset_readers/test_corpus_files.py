import pytest

from spanbert_lib.common.errors import InvalidEncodingError
from spanbert_lib.pretraining.dataset_readers.corpus_files import (
    CorpusFileStats,
    expand_text_paths,
    iter_documents,
)
from tests.pretraining.dataset_readers.corpus_test_utils import write


@pytest.fixture
def corpus_dir(tmp_path):
    write(tmp_path / "b.txt", "Second file.\n")
    write(tmp_path / "a.txt", "First file.\n")
    write(tmp_path / "sub" / "deeper" / "c.txt", "Nested file.\n")
    write(tmp_path / "notes.md", "Not a corpus file.\n")
    return tmp_path


def test_expand_single_file(corpus_dir):
    assert expand_text_paths(corpus_dir / "b.txt") == [corpus_dir / "b.txt"]
    # a file is taken as given, whatever its extension
    assert expand_text_paths(str(corpus_dir / "notes.md")) == [corpus_dir / "notes.md"]


def test_expand_directory_is_recursive_sorted_and_txt_only(corpus_dir):
    assert expand_text_paths(corpus_dir) == [
        corpus_dir / "a.txt",
        corpus_dir / "b.txt",
        corpus_dir / "sub" / "deeper" / "c.txt",
    ]


def test_expand_glob(corpus_dir):
    assert expand_text_paths(str(corpus_dir / "*.txt")) == [corpus_dir / "a.txt", corpus_dir / "b.txt"]
    assert expand_text_paths(str(corpus_dir / "**" / "c.txt")) == [corpus_dir / "sub" / "deeper" / "c.txt"]


@pytest.mark.parametrize("pattern", ["missing.txt", "*.json", "sub/nothing/*.txt"])
def test_expand_nothing_matches_is_an_error_naming_the_path(corpus_dir, pattern):
    with pytest.raises(FileNotFoundError, match="missing.txt|json|nothing"):
        expand_text_paths(str(corpus_dir / pattern))


def test_expand_directory_without_txt_files(tmp_path):
    write(tmp_path / "x.md", "text")
    with pytest.raises(FileNotFoundError, match="no \\*.txt files"):
        expand_text_paths(tmp_path)


def test_blank_line_documents(tmp_path):
    path = write(tmp_path / "c.txt", "\n\nDoc one line one.\nDoc one line two.\n\n \t\n\nDoc two.\r\nStill two.\r\n\n")
    stats = CorpusFileStats()
    docs = list(iter_documents([path], "blank_line", stats=stats))
    assert [d.text for d in docs] == ["Doc one line one.\nDoc one line two.", "Doc two.\nStill two."]
    assert [d.index_in_file for d in docs] == [0, 1]
    assert [d.first_line for d in docs] == [3, 8]
    assert {d.path for d in docs} == {str(path)}
    assert (stats.files, stats.documents, sum(stats.empty_documents.values())) == (1, 2, 0)


def test_file_documents(tmp_path):
    first = write(tmp_path / "1.txt", "\ufeffPara one.\n\nPara two.\n")
    second = write(tmp_path / "2.txt", "Other file.")
    docs = list(iter_documents([first, second], "file"))
    assert [d.text for d in docs] == ["Para one.\n\nPara two.", "Other file."]  # BOM dropped


@pytest.mark.parametrize("separator", ["blank_line", "file"])
def test_empty_and_whitespace_only_files_are_counted(tmp_path, separator):
    empty = write(tmp_path / "empty.txt", "")
    blank = write(tmp_path / "blank.txt", "  \n\t\n\n")
    real = write(tmp_path / "real.txt", "Words here.\n")
    stats = CorpusFileStats()
    docs = list(iter_documents([empty, blank, real], separator, stats=stats))
    assert [d.text for d in docs] == ["Words here."]
    assert dict(stats.empty_documents) == {str(empty): 1, str(blank): 1}
    assert (stats.files, stats.documents) == (3, 1)


def test_undecodable_bytes_name_file_line_and_offset(tmp_path):
    path = write(tmp_path / "bad.txt", b"Good line.\nBad \xff byte.\n")
    with pytest.raises(InvalidEncodingError) as error:
        list(iter_documents([path]))
    message = str(error.value)
    assert message.startswith(f"{path}:2: ")  # FILE:LINE:
    assert "byte offset 15" in message  # len(b"Good line.\n") + len(b"Bad ")
    assert 'encoding_errors="replace"' in message


def test_undecodable_bytes_replaced_when_asked(tmp_path):
    path = write(tmp_path / "bad.txt", b"Bad \xff byte.\n")
    assert [d.text for d in iter_documents([path], encoding_errors="replace")] == ["Bad \ufffd byte."]


def test_invalid_options(tmp_path):
    path = write(tmp_path / "a.txt", "x")
    with pytest.raises(ValueError, match="document_separator"):
        list(iter_documents([path], "paragraph"))
    with pytest.raises(ValueError, match="encoding_errors"):
        list(iter_documents([path], encoding_errors="ignore"))
