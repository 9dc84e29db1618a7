import pytest
from transformers import AutoTokenizer

from spanbert_lib.commands.build_wordpiece_vocab import build_wordpiece_vocab
from spanbert_lib.common.errors import EmptyInputError, InvalidEncodingError
from tests import REPO_ROOT, run_allennlp

TEXT = "Tarrowby Bridge crosses the River Vell. Tarrowby Bridge has eight arches.\n\nThe Vell floods.\n"


def _vocab(directory):
    return (directory / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]


def test_builds_a_cased_vocabulary_by_default(tmp_path):
    (tmp_path / "corpus" / "sub").mkdir(parents=True)
    (tmp_path / "corpus" / "sub" / "a.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "corpus" / "ignored.md").write_text("Zebra Zebra Zebra", encoding="utf-8")
    size = build_wordpiece_vocab(str(tmp_path / "corpus"), str(tmp_path / "out"), vocab_size=200)
    vocab = _vocab(tmp_path / "out")
    assert size == len(vocab) <= 200
    assert vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert "Tarrowby" in vocab and "Bridge" in vocab  # whole words seen twice, case kept
    assert not any("Zebra" in entry for entry in vocab)  # only *.txt files of a directory are read
    tokenizer = AutoTokenizer.from_pretrained(str(tmp_path / "out"))
    assert tokenizer.tokenize("Tarrowby Bridge") == ["Tarrowby", "Bridge"]


def test_lowercase_and_glob_input(tmp_path):
    (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
    build_wordpiece_vocab(str(tmp_path / "*.txt"), str(tmp_path / "out"), vocab_size=200, lowercase=True)
    vocab = _vocab(tmp_path / "out")
    assert "tarrowby" in vocab and not any(entry != entry.lower() for entry in vocab[5:])


def test_undecodable_input_names_the_file(tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"Fine text\n\xc3\x28 broken\n")
    with pytest.raises(InvalidEncodingError, match="bad.txt.*byte offset 10"):
        build_wordpiece_vocab(str(tmp_path), str(tmp_path / "out"))


@pytest.mark.parametrize("content", [b"", b"  \n\t\n\n", b"\x00\x00\n\n\x00\n"], ids=["empty", "blank", "nul"])
def test_a_corpus_without_words_is_refused(tmp_path, content):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.txt").write_bytes(content)
    with pytest.raises(EmptyInputError, match=f"^{tmp_path / 'corpus'}: .*no word"):
        build_wordpiece_vocab(str(tmp_path / "corpus"), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()  # nothing written


def test_missing_input_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        build_wordpiece_vocab(str(tmp_path / "nowhere"), str(tmp_path / "out"))


@pytest.mark.slow
def test_command_line_on_the_fixture_corpus(tmp_path):
    # from the repository root, the .allennlp_plugins file registers the command
    completed = run_allennlp(
        ["build-wordpiece-vocab", "fixtures/corpus", str(tmp_path / "vocab"), "--vocab-size", "500"], cwd=REPO_ROOT
    )
    assert f"cased WordPiece vocabulary of 500 entries to {tmp_path / 'vocab'}" in completed.stdout
    tokenizer = AutoTokenizer.from_pretrained(str(tmp_path / "vocab"))
    assert len(tokenizer) == 500 and tokenizer.is_fast
    assert tokenizer.tokenize("Tarrowby")[0] != "[UNK]"
