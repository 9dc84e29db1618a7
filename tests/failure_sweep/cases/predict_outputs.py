"""
``allennlp predict``'s outputs: its own input (also through links) or its archive as output, a missing or wrong
directory, the Hugging Face folder the archive's config names, a stream appended to, stale partial files of an
ended run, a name as long as the file system allows.
"""

import json
import os
import subprocess

from spanbert_lib.safeguards.atomic_files import partial_prefix
from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.cases.inputs import GOOD_LINE, SQUAD
from tests.failure_sweep.grading import Case, all_of

book = CaseBook()


def predictions_in(path, earlier: str = ""):
    """A check: ``path`` starts with ``earlier`` and then holds one JSON prediction line with an answer."""

    def check(outcome):
        text = path.read_text(encoding="utf-8") if path.exists() else None
        if text is None:
            return f"{path.name} was not written"
        if not text.startswith(earlier):
            return f"{path.name} lost its earlier content"
        lines = text[len(earlier) :].splitlines()
        if len(lines) != 1 or "best_span_str" not in json.loads(lines[0]):
            return f"{path.name} does not hold the one prediction after its earlier content: {lines[:2]}"
        return None

    return check


for how in ("same", "symlink", "hardlink"):

    def output_is_input(d, how=how):
        source = d.lines(GOOD_LINE)
        output = source if how == "same" else d.link(source, "out.jsonl", hard=how == "hardlink")
        return Case(["predict", d.archives.qa, source, "--output-file", output, "--silent"], names=(str(output),))

    book.add(f"predict_output_is_input_{how}", output_is_input)


@book.case("predict_output_is_archive")
def _(d):
    run = d.copy(d.archives.qa_run, "run")
    archive = run / "model.tar.gz"
    return Case(["predict", archive, d.lines(GOOD_LINE), "--output-file", archive, "--silent"], names=("model.tar.gz",))


@book.case("predict_output_directory_missing")
def _(d):
    return Case(
        ["predict", d.archives.qa, d.lines(GOOD_LINE), "--output-file", d / "no" / "o.jsonl", "--silent"],
        names=("o.jsonl",),
    )


@book.case("predict_output_is_a_directory")
def _(d):
    return Case(
        ["predict", d.archives.qa, d.lines(GOOD_LINE), "--output-file", d.path, "--silent"], names=(str(d.path),)
    )


@book.case("predict_predictor_args_file_is_input")
def _(d):
    dataset = d.copy(SQUAD, "dev.json")
    return Case(
        [
            "predict",
            d.archives.qa,
            dataset,
            "--use-dataset-reader",
            "--silent",
            "--output-file",
            d / "full_output.jsonl",
            "--predictor-args",
            json.dumps({"predictions_file": str(dataset)}),
        ],
        names=("predictions_file",),
    )


@book.case("predict_output_in_the_model_folder_the_config_names")
def _(d):
    """The archive's config names a copy of the tiny BERT as ``model_name``: its ``vocab.txt`` is an input."""
    encoder = d.archives.own_encoder
    vocab = encoder / "vocab.txt"
    return Case(
        ["predict", d.archives.own_encoder_archive, d.lines(GOOD_LINE), "--output-file", vocab, "--silent"],
        names=(str(vocab),),
        watch=(encoder,),
    )


@book.case("predict_to_dev_stdout_appended_to_a_log")
def _(d):
    """``predict ... --output-file /dev/stdout --silent >> log.txt``: the log keeps its text and gains the
    predictions."""
    earlier = "an earlier run's line\n"
    log = d.write("log.txt", earlier)
    return Case(
        ["predict", d.archives.qa, d.lines(GOOD_LINE), "--output-file", "/dev/stdout", "--silent"],
        expect="succeed",
        stdout_file=log,
        appends_to=("log.txt",),
        check=predictions_in(log, earlier),
    )


@book.case("predict_removes_a_stale_partial_file_of_an_ended_run")
def _(d):
    output = d / "out.jsonl"
    ended = _ended_pid()
    stale = d.write(f"{partial_prefix(str(output))}{ended}-k2j9.jsonl", '{"half": "a prediction')
    gone = lambda outcome: f"{stale.name} is still there" if stale.exists() else None  # noqa: E731
    return Case(
        ["predict", d.archives.qa, d.lines(GOOD_LINE), "--output-file", output, "--silent"],
        expect="succeed",
        writes=(output, stale),
        check=all_of(gone, predictions_in(output)),
    )


def _ended_pid() -> int:
    """The process id of a process that has ended (and been waited for)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


@book.case("predict_output_name_as_long_as_the_file_system_allows")
def _(d):
    name_max = os.pathconf(d.path, "PC_NAME_MAX")
    output = d / ("o" * (name_max - len(".jsonl")) + ".jsonl")
    return Case(
        ["predict", d.archives.qa, d.lines(GOOD_LINE), "--output-file", output, "--silent"],
        expect="succeed",
        writes=(output,),
        check=predictions_in(output),
    )
