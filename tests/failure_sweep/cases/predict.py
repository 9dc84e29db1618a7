"""``allennlp predict``: damaged archives and weights, bad input files and lines, bad options."""

import json

from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.cases.inputs import GOOD_LINE, SQUAD
from tests.failure_sweep.grading import Case, names_every

book = CaseBook()

DAMAGED = {
    "truncated": "truncated",
    "garbage": "garbage",
    "zip": "zipped",
    "no_weights": "no_weights",
    "no_config": "no_config",
    "json_not_archive": "config_only",
    "empty_directory": "empty_run",
    "member_escapes": "escaping",
}
for label, attribute in DAMAGED.items():

    def damaged_archive(d, attribute=attribute):
        damaged = getattr(d.damaged, attribute)
        source = d.lines(GOOD_LINE)
        return Case(
            ["predict", damaged, source, "--silent", "--output-file", d / "out.jsonl"],
            names=(str(damaged),),
            watch=(d.damaged.folder,),
        )

    book.add(f"predict_archive_{label}", damaged_archive)


@book.case("predict_input_missing")
def _(d):
    return Case(["predict", d.archives.qa, d / "missing.jsonl"], names=("missing.jsonl",))


@book.case("predict_input_directory")
def _(d):
    return Case(["predict", d.archives.qa, d.path], names=(str(d.path),))


@book.case("predict_input_empty")
def _(d):
    return Case(["predict", d.archives.qa, d.lines()], names=("in.jsonl",))


@book.case("predict_input_blank_lines")
def _(d):
    return Case(["predict", d.archives.qa, d.lines("", "  ")], names=("in.jsonl",))


@book.case("predict_input_bad_utf8")
def _(d):
    source = d.write("in.jsonl", GOOD_LINE.encode() + b'\n{"q\xff": 1}\n')
    return Case(["predict", d.archives.qa, source], names=("in.jsonl",))


@book.case("predict_input_bad_json")
def _(d):
    return Case(["predict", d.archives.qa, d.lines(GOOD_LINE, "{not json")], names=("in.jsonl:2",))


@book.case("predict_input_null_line_keeps_output")
def _(d):
    source, output = d.lines(GOOD_LINE, "null"), d.write("out.jsonl", "yesterday's predictions\n")
    return Case(["predict", d.archives.qa, source, "--output-file", output, "--silent"], names=("in.jsonl:2",))


@book.case("predict_input_array_line")
def _(d):
    return Case(["predict", d.archives.qa, d.lines("[1, 2]")], names=("in.jsonl:1",))


@book.case("predict_input_missing_key")
def _(d):
    source = d.lines(json.dumps({"question": "Who?"}))
    return Case(["predict", d.archives.qa, source], names=("in.jsonl:1",), check=names_every("passage"))


@book.case("predict_input_wrong_type")
def _(d):
    source = d.lines(json.dumps({"question": "Who?", "passage": 5}))
    return Case(["predict", d.archives.qa, source], names=("in.jsonl:1",), check=names_every("passage"))


@book.case("predict_input_passage_over_limit")
def _(d):
    source = d.lines(json.dumps({"question": "Who?", "passage": "word " * 110_000}))
    return Case(
        ["predict", d.archives.qa, source, "--silent", "--output-file", d / "o.jsonl"],
        names=("in.jsonl:1",),
        check=names_every("max_passage_wordpieces"),
    )


@book.case("predict_input_passage_characters_over_limit")
def _(d):
    source = d.lines(json.dumps({"question": "Who?", "passage": "x" * 10_000_001}))
    return Case(["predict", d.archives.qa, source], names=("in.jsonl:1",), check=names_every("max_passage_wordpieces"))


@book.case("predict_archive_missing")
def _(d):
    return Case(["predict", d / "model.tar.gz", d.lines(GOOD_LINE)], names=("model.tar.gz",))


for value in ("0", "-1", "abc"):

    def batch_size(d, value=value):
        return Case(["predict", d.archives.qa, d.lines(GOOD_LINE), "--batch-size", value], names=("--batch-size",))

    book.add(f"predict_batch_size_{value}", batch_size)


@book.case("predict_cuda_device_-2")
def _(d):
    return Case(["predict", d.archives.qa, d.lines(GOOD_LINE), "--cuda-device", "-2"], names=("--cuda-device",))


@book.case("predict_predictor_args_bad_json")
def _(d):
    return Case(["predict", d.archives.qa, d.lines(GOOD_LINE), "--predictor-args", "{bad"], names=("--predictor-args",))


@book.case("predict_unknown_predictor")
def _(d):
    return Case(
        ["predict", d.archives.qa, d.lines(GOOD_LINE), "--predictor", "no_such_predictor"],
        names=("no_such_predictor",),
    )


@book.case("predict_overrides_bad_json")
def _(d):
    return Case(["predict", d.archives.qa, d.lines(GOOD_LINE), "-o", "{bad"], names=("--overrides",))


@book.case("predict_overrides_setting_the_model_does_not_take")
def _(d):
    typo = json.dumps({"model.max_answer_lenght": 10})
    return Case(["predict", d.archives.qa, d.lines(GOOD_LINE), "-o", typo], names=("model.max_answer_lenght",))


@book.case("predict_overrides_key_leads_nowhere")
def _(d):
    nowhere = json.dumps({"model.answer_head.size": 10})
    return Case(["predict", d.archives.qa, d.lines(GOOD_LINE), "-o", nowhere], names=("model.answer_head.size",))


@book.case("predict_dataset_reader_truncated_json")
def _(d):
    dataset = d.write("dev.json", SQUAD.read_text()[:300])
    return Case(["predict", d.archives.qa, dataset, "--use-dataset-reader"], names=("dev.json",))


@book.case("predict_include_unknown_package")
def _(d):
    return Case(
        ["predict", d.archives.qa, d.lines(GOOD_LINE), "--include-package", "no_such_package_xyz"],
        names=("no_such_package_xyz",),
    )


@book.case("predict_silent_without_output")
def _(d):
    return Case(["predict", d.archives.qa, d.lines(GOOD_LINE), "--silent"], names=("--silent",))


@book.case("predict_weights_of_another_model")
def _(d):
    """``--weights-file`` holding the coreference model's weights, given to the QA archive."""
    weights = d.copy(d.archives.coref_run / "best.th", "coref_best.th")
    return Case(
        ["predict", d.archives.qa, d.lines(GOOD_LINE), "--weights-file", weights],
        names=(str(d.archives.qa), str(weights)),
        check=names_every(str(d.archives.qa), "coref_best.th"),
    )


@book.case("predict_input_integer_of_5000_digits")
def _(d):
    return Case(
        ["predict", d.archives.qa, d.lines('{"question": "Who?", "passage": ' + "7" * 5000 + "}")],
        names=("in.jsonl:1",),
    )


@book.case("predict_input_nested_100000_levels")
def _(d):
    return Case(["predict", d.archives.qa, d.lines("[" * 100_000 + "]" * 100_000)], names=("in.jsonl:1",))


@book.case("predict_input_passage_with_a_lone_surrogate")
def _(d):
    line = json.dumps({"question": "Who built it?", "passage": "The bridge \ud800 opened in March."})
    assert "\\ud800" in line  # escaped in the file: valid UTF-8, but no text a tokenizer can encode
    return Case(["predict", d.archives.qa, d.lines(line)], names=("in.jsonl:1",))
