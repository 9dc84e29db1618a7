"""
Bad input fails well (issue 14): one line ``error: FILE:LINE: what is wrong`` on stderr and a
non-zero exit from every command, empty input refused, invalid UTF-8 and unknown labels named
precisely, ``--include-package`` accepted by every subcommand this library adds.

Commands run in-process through ``allennlp.commands.main`` (what the console script calls); two
subprocess runs prove the installed ``allennlp`` executable prints the same single line.
"""

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, List

import pytest
from allennlp.commands import main as allennlp_main
from allennlp.commands.subcommand import Subcommand
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary

from spanbert_lib.common.errors import EmptyInputError, InvalidEncodingError, UserInputError
from spanbert_lib.common.known_labels import UnknownLabelError
from spanbert_lib.entity_typing.dataset_readers import OpenEntityReader
from spanbert_lib.ner.dataset_readers import SpanNerConllReader, SpanNerLitBankReader
from spanbert_lib.qa.dataset_readers import MrqaReader, SquadReader
from spanbert_lib.relation.dataset_readers import TacredReader
from spanbert_lib.safeguards.user_errors import (
    DEBUG_ENVIRONMENT_VARIABLE,
    USER_ERROR_EXIT_CODE,
    errors_as_one_line,
    find_user_error,
    one_line_message,
    report_user_errors,
)
from tests import REPO_ROOT, TINY_BERT_DIR

TACRED_FIXTURE = REPO_ROOT / "fixtures" / "relation" / "tacred_fixture.json"
PRETRAINING_CONFIG = REPO_ROOT / "fixtures" / "configs" / "pretraining" / "spanbert_tiny.jsonnet"
RELATION_CONFIG = REPO_ROOT / "fixtures" / "configs" / "relation" / "tiny_relation_classifier.jsonnet"

READERS: Dict[str, Callable[[], object]] = {
    "spanbert_span_ner_conll": lambda: SpanNerConllReader(str(TINY_BERT_DIR), max_seq_length=64),
    "spanbert_span_ner_litbank": lambda: SpanNerLitBankReader(str(TINY_BERT_DIR), max_seq_length=64),
    "spanbert_tacred": lambda: TacredReader(str(TINY_BERT_DIR), max_seq_length=32),
    "spanbert_open_entity": lambda: OpenEntityReader(str(TINY_BERT_DIR), max_seq_length=64),
    "spanbert_squad": lambda: SquadReader(str(TINY_BERT_DIR), max_seq_length=64, doc_stride=24, max_query_length=24),
    "spanbert_mrqa": lambda: MrqaReader(str(TINY_BERT_DIR), max_seq_length=64, doc_stride=24, max_query_length=24),
}
FILE_NAMES = {
    "spanbert_span_ner_conll": "data.txt",
    "spanbert_span_ner_litbank": "doc_brat.tsv",
    "spanbert_tacred": "data.json",
    "spanbert_open_entity": "data.jsonl",
    "spanbert_squad": "data.json",
    "spanbert_mrqa": "data.jsonl",
}

TACRED_RECORD = (
    '{"id": "r1", "relation": "per:title", "token": ["Ann", "is", "a", "%s"], "subj_start": 0, '
    '"subj_end": 0, "obj_start": 3, "obj_end": 3, "subj_type": "PERSON", "obj_type": "TITLE"}'
)
SQUAD_QA = '{"id": "q1", "question": "Who?", "answers": [{"text": "Ann", "answer_start": 0}]}'
MRQA_HEADER = '{"header": {"dataset": "t", "split": "dev"}}'
MRQA_LINE = (
    '{"context": "%s", "qas": [{"qid": "q1", "question": "Who?", "answers": ["Ann"], '
    '"detected_answers": [{"text": "Ann", "char_spans": [[0, 2]]}]}]}'
)

# Each file is a list of lines; "\udcff" marks the byte 0xFF (invalid in UTF-8) inside one of them.
INVALID_UTF8 = {
    "spanbert_span_ner_conll": ["-DOCSTART- -X- -X- O", "", "Ann NNP B-NP B-PER", "vis\udcffited VBD B-VP O"],
    "spanbert_span_ner_litbank": ["Ann\tB-PER\tO\t", "sa\udcffw\tO\tO\t"],
    "spanbert_tacred": ["[", TACRED_RECORD % "caf\udcff", "]"],
    "spanbert_open_entity": [
        '{"sent": "Ann left.", "start": 0, "end": 3, "labels": ["person"]}',
        '{"sent": "Bo\udcff left.", "start": 0, "end": 2, "labels": ["person"]}',
    ],
    "spanbert_squad": [
        '{"data": [{"title": "t", "paragraphs": [',
        '{"context": "Ann sa\udcffw it.", "qas": [',
        SQUAD_QA + "]}]}]}",
    ],
    "spanbert_mrqa": [MRQA_HEADER, MRQA_LINE % "Ann sa\udcffw it."],
}

EMPTY_INPUT = [
    ("spanbert_span_ner_conll", ""),
    ("spanbert_span_ner_conll", "-DOCSTART- -X- -X- O\n\n"),
    ("spanbert_span_ner_litbank", "\n\n"),
    ("spanbert_tacred", "[]"),
    ("spanbert_open_entity", ""),
    ("spanbert_open_entity", "[]"),
    ("spanbert_squad", '{"data": []}'),
    ("spanbert_mrqa", MRQA_HEADER + "\n"),
]


def write_lines(path: Path, lines: List[str]) -> bytes:
    data = "\n".join(lines).encode("utf-8", errors="surrogateescape") + b"\n"
    path.write_bytes(data)
    return data


@pytest.fixture(scope="module")
def readers():
    return {name: make() for name, make in READERS.items()}


# --- invalid UTF-8 and empty input, one case per reader ---------------------------------------------


@pytest.mark.parametrize("reader_name", sorted(INVALID_UTF8))
def test_invalid_utf8_names_file_line_and_byte_offset(readers, tmp_path, reader_name):
    path = tmp_path / FILE_NAMES[reader_name]
    data = write_lines(path, INVALID_UTF8[reader_name])
    offset = data.index(b"\xff")
    line = data.count(b"\n", 0, offset) + 1
    with pytest.raises(InvalidEncodingError) as error:
        list(readers[reader_name].read(str(path)))
    assert str(error.value) == (
        f"{path}:{line}: invalid UTF-8 byte(s) b'\\xff' at byte offset {offset}; convert the file to UTF-8"
    )


READER_PARAMS = {
    "spanbert_span_ner_conll": {"model_name": str(TINY_BERT_DIR), "max_seq_length": 64},
    "spanbert_span_ner_litbank": {"model_name": str(TINY_BERT_DIR), "max_seq_length": 64},
    "spanbert_tacred": {"model_name": str(TINY_BERT_DIR), "max_seq_length": 32},
    "spanbert_open_entity": {"model_name": str(TINY_BERT_DIR), "max_seq_length": 64},
    "spanbert_squad": {
        "model_name": str(TINY_BERT_DIR),
        "max_seq_length": 64,
        "doc_stride": 24,
        "max_query_length": 24,
    },
    "spanbert_mrqa": {"model_name": str(TINY_BERT_DIR), "max_seq_length": 64, "doc_stride": 24, "max_query_length": 24},
}
COMMAND_CASES = [(name, "invalid_utf8", None) for name in sorted(INVALID_UTF8)] + [
    (name, "empty", content) for name, content in EMPTY_INPUT
]


@pytest.mark.parametrize("reader_name, case, content", COMMAND_CASES)
def test_each_reader_through_a_command(tmp_path, monkeypatch, capsys, reader_name, case, content):
    """``allennlp count-instances`` reads the training data of a config with the reader: exit 1, one line."""
    path = tmp_path / FILE_NAMES[reader_name]
    if case == "invalid_utf8":
        data = write_lines(path, INVALID_UTF8[reader_name])
        offset = data.index(b"\xff")
        line = data.count(b"\n", 0, offset) + 1
        expected = (
            rf"^error: {re.escape(str(path))}:{line}: "
            rf"invalid UTF-8 byte\(s\) b'\\xff' at byte offset {offset}; convert the file to UTF-8$"
        )
    else:
        path.write_text(content, encoding="utf-8")
        expected = rf"^error: {re.escape(str(path))}: no instance could be read"
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "dataset_reader": {"type": reader_name, **READER_PARAMS[reader_name]},
                "train_data_path": str(path),
                "data_loader": {"batch_size": 1},
            }
        )
    )
    code, _, err = run_command(monkeypatch, capsys, "count-instances", str(config))
    assert_one_line_error(code, err, expected)


@pytest.mark.parametrize("case", ["invalid_utf8", "empty"])
def test_data_loader_workers_report_one_line(tmp_path, monkeypatch, capsys, case):
    """With ``num_workers: 2`` the readers run in worker processes; the main process reports the same line."""
    path = tmp_path / "data.json"
    if case == "invalid_utf8":
        offset = write_lines(path, INVALID_UTF8["spanbert_tacred"]).index(b"\xff")
        expected = (
            rf"^error: {re.escape(str(path))}:2: invalid UTF-8 byte\(s\) b'\\xff' at byte offset "
            rf"{offset}; convert the file to UTF-8$"
        )
    else:
        path.write_text("[]")
        expected = rf"^error: {re.escape(str(path))}: no instance could be read: .* by the TacredReader$"
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "dataset_reader": {"type": "spanbert_tacred", **READER_PARAMS["spanbert_tacred"]},
                "train_data_path": str(path),
                "data_loader": {"batch_size": 1, "num_workers": 2},
            }
        )
    )
    code, _, err = run_command(monkeypatch, capsys, "count-instances", str(config))
    assert_one_line_error(code, err, expected)


def test_entity_vocabulary_file_invalid_utf8(tmp_path):
    from spanbert_lib.common.modules.entity_aware.entity_vocabulary import EntityVocabulary

    path = tmp_path / "entities.txt"
    path.write_bytes(b"London\nZ\xfcrich\n")
    with pytest.raises(
        InvalidEncodingError,
        match=rf"^{re.escape(str(path))}:2: invalid UTF-8 byte\(s\) "
        r"b'\\xfc' at byte offset 8;",
    ):
        EntityVocabulary.from_file(path)


@pytest.mark.parametrize("reader_name, content", EMPTY_INPUT)
def test_empty_input_is_an_error_naming_the_path(readers, tmp_path, reader_name, content):
    path = tmp_path / FILE_NAMES[reader_name]
    path.write_text(content, encoding="utf-8")
    with pytest.raises(EmptyInputError, match=rf"^{re.escape(str(path))}: no instance could be read"):
        list(readers[reader_name].read(str(path)))


def test_every_record_skipped_is_empty_input_but_an_empty_shard_is_not(tmp_path):
    from allennlp.data.dataset_readers.dataset_reader import WorkerInfo

    path = tmp_path / "long.txt"
    path.write_text("".join(f"word{i} O\n" for i in range(20)), encoding="utf-8")
    with pytest.raises(EmptyInputError, match="every record in it was skipped"):
        list(SpanNerConllReader(str(TINY_BERT_DIR), max_seq_length=8).read(str(path)))
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    reader = TacredReader(str(TINY_BERT_DIR), max_seq_length=32)
    reader._set_worker_info(WorkerInfo(num_workers=2, id=1))  # what a data loader worker sees
    assert list(reader.read(str(empty))) == []


def test_reader_of_another_package_may_read_nothing(tmp_path):
    from allennlp.data import DatasetReader

    class NothingReader(DatasetReader):
        def _read(self, file_path):
            return iter(())

    assert list(NothingReader().read(str(tmp_path / "x"))) == []


# --- unknown gold labels ---------------------------------------------------------------------------

UNKNOWN_LABELS = {
    # reader, training file, evaluation file (name, text), the unknown label, the record and line named
    "spanbert_tacred": (
        str(TACRED_FIXTURE),
        ("unseen.json", "[" + TACRED_RECORD.replace("per:title", "per:pet_name") % "doctor" + "]"),
        "per:pet_name",
        "r1",
        None,
    ),
    "spanbert_span_ner_conll": (
        str(REPO_ROOT / "fixtures" / "ner" / "conll2003_iob2.txt"),
        (
            "unseen.txt",
            "-DOCSTART- -X- -X- O\n\nAnn NNP B-NP B-PER\nsaw VBD B-VP O\n\nRex NNP B-NP B-DOG\nbarked VBD B-VP O\n",
        ),
        "DOG",
        "document unseen.txt#0 sentence 1",
        6,
    ),
    "spanbert_open_entity": (
        str(REPO_ROOT / "fixtures" / "entity_typing" / "open_entity_luke.json"),
        (
            "unseen.jsonl",
            '{"sent": "Ann left.", "start": 0, "end": 3, "labels": ["person"]}\n'
            '{"sent": "Rex left.", "start": 0, "end": 3, "labels": ["dog"]}\n',
        ),
        "dog",
        "1",
        None,
    ),
}


@pytest.mark.parametrize("reader_name", sorted(UNKNOWN_LABELS))
def test_unknown_label_names_file_record_and_known_labels(readers, tmp_path, reader_name):
    train_path, (name, text), label, record, line = UNKNOWN_LABELS[reader_name]
    reader = readers[reader_name]
    vocab = Vocabulary.from_instances(reader.read(train_path))
    namespace = "labels"
    known = list(vocab.get_token_to_index_vocabulary(namespace))
    assert label not in known and known
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UnknownLabelError) as error:
        for instance in reader.read(str(path)):
            instance.index_fields(vocab)
    location = f"{path}:{line}" if line is not None else str(path)
    assert str(error.value).startswith(f"{location}: record {record}: label {label!r} ")
    assert f"its 'labels' vocabulary has {len(known)}: {known[0]!r}" in str(error.value)


# --- the error reporting itself --------------------------------------------------------------------


def test_find_user_error_unwraps_the_cause_chain():
    cause = InvalidEncodingError("invalid UTF-8", path="a.txt", line=3)
    try:
        try:
            raise cause
        except InvalidEncodingError as error:
            raise ConfigurationError("could not construct the reader") from error
    except ConfigurationError as wrapped:
        assert find_user_error(wrapped) is cause
    configuration_error = ConfigurationError("key 'model' is required")
    assert find_user_error(configuration_error) is configuration_error
    missing = FileNotFoundError(2, "No such file or directory", "x.json")
    assert find_user_error(missing) is missing
    assert find_user_error(KeyError("bug")) is None
    jsonnet_error = RuntimeError("STATIC ERROR: c.jsonnet:2:1: expected a comma before next field.\n")
    assert find_user_error(jsonnet_error) is jsonnet_error
    assert find_user_error(RuntimeError("CUDA out of memory")) is None
    try:
        try:
            raise missing
        except FileNotFoundError:
            raise RuntimeError("a bug while handling it")  # noqa: B904 - the implicit context is what is tested
    except RuntimeError as bug:
        assert find_user_error(bug) is None
    assert one_line_message(ValueError("two\n  lines\n")) == "error: two lines"


def _raise(error: BaseException):
    def command() -> None:
        raise error

    return command


def test_user_error_is_one_line_and_the_exit_code(capsys, monkeypatch):
    monkeypatch.delenv(DEBUG_ENVIRONMENT_VARIABLE, raising=False)
    with pytest.raises(SystemExit) as exit_info:
        report_user_errors(_raise(UserInputError("bad tag", path="d.txt", line=4)))()
    assert exit_info.value.code == USER_ERROR_EXIT_CODE
    assert capsys.readouterr().err == "error: d.txt:4: bad tag\n"
    with pytest.raises(KeyError):  # a bug keeps its traceback
        report_user_errors(_raise(KeyError("bug")))()
    monkeypatch.setenv(DEBUG_ENVIRONMENT_VARIABLE, "1")
    with pytest.raises(UserInputError):  # the full traceback on request
        report_user_errors(_raise(UserInputError("bad tag", path="d.txt", line=4)))()


@pytest.mark.parametrize("debug_value", [None, "0", "no"])
def test_a_commands_own_guard_prints_one_line_unless_debugging(capsys, monkeypatch, debug_value):
    if debug_value is None:
        monkeypatch.delenv(DEBUG_ENVIRONMENT_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(DEBUG_ENVIRONMENT_VARIABLE, debug_value)  # set, but not asking for tracebacks
    with pytest.raises(SystemExit) as exit_info:
        with errors_as_one_line((UserInputError,), describe=lambda error: f"in x.conll: {error}"):
            raise UserInputError("bad column", path="x.conll", line=3)
    assert exit_info.value.code == USER_ERROR_EXIT_CODE
    assert capsys.readouterr().err == "error: in x.conll: x.conll:3: bad column\n"
    with pytest.raises(SystemExit):  # a message over several lines is folded into one, as the entry point does
        with errors_as_one_line((ValueError,)):
            raise ValueError("two problems:\n  first\n  second")
    assert capsys.readouterr().err == "error: two problems: first second\n"
    with pytest.raises(KeyError):  # not one of the types: passes through
        with errors_as_one_line((UserInputError,)):
            raise KeyError("bug")
    monkeypatch.setenv(DEBUG_ENVIRONMENT_VARIABLE, "1")
    with pytest.raises(UserInputError):
        with errors_as_one_line((UserInputError,)):
            raise UserInputError("bad column")


# --- commands, in-process --------------------------------------------------------------------------


def run_command(monkeypatch, capsys, *argv: str):
    """``allennlp ARGV`` in-process: (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["allennlp", *argv])
    root_logger = logging.getLogger()
    handlers, level = list(root_logger.handlers), root_logger.level
    code = 0
    try:
        allennlp_main(prog="allennlp")
    except SystemExit as exit_info:
        code = exit_info.code if isinstance(exit_info.code, int) else 1
    finally:
        # `allennlp train` points the root logger at this test's captured streams: undo it
        for handler in set(root_logger.handlers) - set(handlers):
            handler.close()
        root_logger.handlers[:] = handlers
        root_logger.setLevel(level)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(code: int, err: str, pattern: str) -> None:
    assert code == USER_ERROR_EXIT_CODE, err[-3000:]
    assert "Traceback" not in err
    last = err.rstrip("\n").split("\n")[-1]
    assert last.startswith("error: ") and re.search(pattern, last), last


def library_subcommands() -> List[str]:
    from allennlp.common.util import import_module_and_submodules

    import spanbert_lib.commands  # noqa: F401

    import_module_and_submodules("spanbert_lib.commands")
    return sorted(
        name for name in Subcommand.list_available() if Subcommand.by_name(name).__module__.startswith("spanbert_lib.")
    )


@pytest.mark.parametrize("command", library_subcommands())
def test_every_library_subcommand_accepts_include_package(monkeypatch, capsys, command):
    code, out, _ = run_command(monkeypatch, capsys, command, "--help")
    assert code == 0 and "--include-package" in out


@pytest.fixture(scope="module")
def relation_archive(tmp_path_factory) -> Path:
    from allennlp.commands.train import train_model_from_file

    serialization_dir = tmp_path_factory.mktemp("relation") / "run"
    train_model_from_file(
        str(RELATION_CONFIG),
        str(serialization_dir),
        overrides='{"trainer.num_epochs": 1, "data_loader.shuffle": false}',
    )
    return serialization_dir / "model.tar.gz"


def test_train_evaluate_predict_report_one_line(relation_archive, tmp_path, monkeypatch, capsys):
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    overrides = json.dumps({"train_data_path": str(empty), "trainer.num_epochs": 1})
    code, _, err = run_command(
        monkeypatch, capsys, "train", str(RELATION_CONFIG), "-s", str(tmp_path / "run"), "-o", overrides
    )
    assert_one_line_error(code, err, rf"^error: {re.escape(str(empty))}: no instance could be read")

    code, _, err = run_command(monkeypatch, capsys, "evaluate", str(relation_archive), str(empty))
    assert_one_line_error(code, err, rf"^error: {re.escape(str(empty))}: no instance could be read")

    unseen = tmp_path / "unseen.json"
    unseen.write_text("[" + TACRED_RECORD.replace("per:title", "per:pet_name") % "doctor" + "]")
    code, _, err = run_command(monkeypatch, capsys, "evaluate", str(relation_archive), str(unseen))
    assert_one_line_error(
        code,
        err,
        rf"^error: {re.escape(str(unseen))}: record r1: label 'per:pet_name' "
        r"\('label' field\) is not one the model knows; its 'labels' vocabulary has",
    )

    invalid = tmp_path / "invalid.json"
    data = write_lines(invalid, INVALID_UTF8["spanbert_tacred"])
    offset = data.index(b"\xff")
    code, _, err = run_command(
        monkeypatch,
        capsys,
        "predict",
        str(relation_archive),
        str(invalid),
        "--use-dataset-reader",
        "--silent",
        "--output-file",
        str(tmp_path / "out.jsonl"),
    )
    assert_one_line_error(
        code,
        err,
        rf"^error: {re.escape(str(invalid))}:2: invalid UTF-8 byte\(s\) b'\\xff' "
        rf"at byte offset {offset};",
    )

    # the JSON-lines input of `allennlp predict` (no dataset reader)
    for name, content, pattern in [
        ("invalid.jsonl", b'{"token": ["caf\xff"]}\n', r":1: invalid UTF-8 byte\(s\) b'\\xff' at byte offset 15;"),
        (
            "malformed.jsonl",
            TACRED_RECORD.encode() % b"doctor" + b"\n\n{bad\n",
            r":3: not a valid JSON object \(column 2\)",
        ),
        ("blank.jsonl", b"\n \n", r": nothing to predict: the input file has no JSON line"),
        ("digits.jsonl", b'{"token": ' + b"7" * 5000 + b"}\n", r":1: not a JSON object this reads: Exceeds the limit"),
        ("deep.jsonl", b'{"token": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n", r":1: .*nested too deeply"),
        (
            "surrogate.jsonl",
            b'{"token": ["caf\\ud800"], "subj_start": 0}\n',
            r":1: the text of 'token\[0\]' holds a lone surrogate",
        ),
    ]:
        path = tmp_path / name
        path.write_bytes(content)
        code, _, err = run_command(
            monkeypatch,
            capsys,
            "predict",
            str(relation_archive),
            str(path),
            "--silent",
            "--output-file",
            str(tmp_path / "out.jsonl"),
        )
        assert_one_line_error(code, err, rf"^error: {re.escape(str(path))}{pattern}")


def test_a_setting_mistake_in_the_overrides_is_one_line(relation_archive, tmp_path, monkeypatch, capsys):
    """Three configuration mistakes allennlp raises as a bare TypeError / ValueError (issue #21's serve -o)."""
    source = tmp_path / "input.jsonl"
    source.write_text(TACRED_RECORD % "doctor" + "\n")
    for overrides, message in [
        (
            {"model.dropuot": 0.2},
            "model.dropuot: not a setting of 'spanbert_relation_classifier' (SpanBertRelationClassifier); "
            "did you mean 'dropout'?",
        ),
        ({"model.pooling": 2}, "model.pooling: expected a string, got 2 (SpanBertRelationClassifier)"),
        ({"model.head.size": 2}, "model.head.size: no such place in the configuration to override"),
    ]:
        code, _, err = run_command(
            monkeypatch,
            capsys,
            "predict",
            str(relation_archive),
            str(source),
            "--silent",
            "--output-file",
            str(tmp_path / "out.jsonl"),
            "-o",
            json.dumps(overrides),
        )
        assert_one_line_error(code, err, "^error: " + re.escape(message))
    typo = json.dumps({"dataset_reader.max_seq_lenght": 16, "trainer.num_epochs": 1})
    code, _, err = run_command(
        monkeypatch, capsys, "train", str(RELATION_CONFIG), "-s", str(tmp_path / "run"), "-o", typo
    )
    assert_one_line_error(
        code,
        err,
        r"^error: dataset_reader\.max_seq_lenght: not a setting of 'spanbert_tacred' .*"
        r"did you mean 'max_seq_length'\?",
    )
    assert not (tmp_path / "out.jsonl").exists()


def test_train_on_a_nul_only_corpus_fails(tmp_path, monkeypatch, capsys):
    corpus = tmp_path / "nul.txt"
    corpus.write_bytes(b"\x00" * 64)
    overrides = json.dumps({"train_data_path": str(corpus), "validation_data_path": None})
    code, _, err = run_command(
        monkeypatch, capsys, "train", str(PRETRAINING_CONFIG), "-s", str(tmp_path / "run"), "-o", overrides
    )
    assert_one_line_error(code, err, rf"^error: {re.escape(str(corpus))}: ")
    assert not (tmp_path / "run" / "model.tar.gz").exists()


def test_build_wordpiece_vocab_refuses_a_corpus_without_words(tmp_path, monkeypatch, capsys):
    corpus = tmp_path / "blank.txt"
    corpus.write_bytes(b"\x00\x00\n\n \t\n")
    code, _, err = run_command(monkeypatch, capsys, "build-wordpiece-vocab", str(corpus), str(tmp_path / "vocab"))
    assert_one_line_error(code, err, rf"^error: {re.escape(str(corpus))}: the corpus has no word")
    assert not (tmp_path / "vocab").exists()


def test_squad_eval_refuses_a_dataset_without_questions(tmp_path, monkeypatch, capsys):
    dataset = tmp_path / "dev.json"
    dataset.write_text('{"version": "1.1", "data": []}')
    predictions = tmp_path / "predictions.json"
    predictions.write_text("{}")
    code, _, err = run_command(
        monkeypatch, capsys, "squad-eval", str(dataset), str(predictions), "--include-package", "spanbert_lib.qa"
    )
    assert_one_line_error(code, err, rf"^error: {re.escape(str(dataset))}: the dataset file has no question")


# --- the installed executable ----------------------------------------------------------------------

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ - INFO - ")


def run_executable(*argv: str) -> subprocess.CompletedProcess:
    executable = Path(sys.executable).with_name("allennlp")
    env = dict(os.environ)
    env.pop(DEBUG_ENVIRONMENT_VARIABLE, None)
    return subprocess.run(
        [str(executable), *argv], cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=300, env=env
    )


@pytest.mark.slow
def test_console_script_prints_one_line_and_no_traceback(tmp_path):
    dataset = tmp_path / "dev.json"
    data = write_lines(dataset, INVALID_UTF8["spanbert_squad"])
    predictions = tmp_path / "predictions.json"
    predictions.write_text('{"q1": "Ann"}')
    offset = data.index(b"\xff")
    completed = run_executable("squad-eval", str(dataset), str(predictions), "--include-package", "spanbert_lib.qa")
    assert completed.returncode == USER_ERROR_EXIT_CODE
    *logged, last = completed.stderr.rstrip("\n").split("\n")
    assert (
        last == f"error: {dataset}:2: invalid UTF-8 byte(s) b'\\xff' at byte offset {offset}; convert the file to UTF-8"
    )
    assert all(LOG_LINE.match(line) for line in logged), logged  # allennlp's "Plugin ... available"
