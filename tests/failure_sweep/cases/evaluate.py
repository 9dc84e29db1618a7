"""``allennlp evaluate``: bad datasets, outputs over inputs or over each other, a failure keeping old metrics."""

from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.cases.inputs import GOOD_LINE, SQUAD
from tests.failure_sweep.grading import Case

book = CaseBook()


@book.case("evaluate_input_missing")
def _(d):
    return Case(["evaluate", d.archives.qa, d / "dev.json"], names=("dev.json",))


@book.case("evaluate_input_directory")
def _(d):
    return Case(["evaluate", d.archives.qa, d.path], names=(str(d.path),))


@book.case("evaluate_input_empty")
def _(d):
    return Case(["evaluate", d.archives.qa, d.write("dev.json", "")], names=("dev.json",))


@book.case("evaluate_input_truncated_json")
def _(d):
    return Case(["evaluate", d.archives.qa, d.write("dev.json", SQUAD.read_text()[:500])], names=("dev.json",))


@book.case("evaluate_input_bad_utf8")
def _(d):
    dataset = d.write("dev.json", b'{"data": [{"title": "\xff"}]}')
    return Case(["evaluate", d.archives.qa, dataset], names=("dev.json",))


@book.case("evaluate_input_not_squad")
def _(d):
    return Case(["evaluate", d.archives.qa, d.lines(GOOD_LINE, name="dev.json")], names=("dev.json",))


@book.case("evaluate_input_no_questions")
def _(d):
    return Case(["evaluate", d.archives.qa, d.write("dev.json", '{"data": []}')], names=("dev.json",))


@book.case("evaluate_output_is_input")
def _(d):
    dataset = d.copy(SQUAD, "dev.json")
    return Case(["evaluate", d.archives.qa, dataset, "--output-file", dataset], names=("dev.json",))


@book.case("evaluate_predictions_output_is_input_symlink")
def _(d):
    dataset = d.copy(SQUAD, "dev.json")
    link = d.link(dataset, "predictions.jsonl")
    return Case(["evaluate", d.archives.qa, dataset, "--predictions-output-file", link], names=("predictions.jsonl",))


@book.case("evaluate_output_is_archive")
def _(d):
    archive = d.copy(d.archives.qa_run, "run") / "model.tar.gz"
    return Case(["evaluate", archive, SQUAD, "--output-file", archive], names=("model.tar.gz",))


@book.case("evaluate_two_outputs_one_file")
def _(d):
    same = d / "out.json"
    return Case(
        ["evaluate", d.archives.qa, SQUAD, "--output-file", same, "--predictions-output-file", same],
        names=("out.json",),
    )


@book.case("evaluate_predictions_output_links_to_metrics_output")
def _(d):
    metrics = d.write("m.json", '{"f1": 91.0}\n')
    predictions = d.link(metrics, "p.json")
    return Case(
        ["evaluate", d.archives.qa, SQUAD, "--output-file", metrics, "--predictions-output-file", predictions],
        names=("p.json", "m.json"),
    )


@book.case("evaluate_failure_keeps_old_metrics")
def _(d):
    metrics = d.write("metrics.json", '{"f1": 91.0}')
    empty_context = d.write("dev.json", '{"data": [{"title": "t", "paragraphs": [{"context": "", "qas": []}]}]}')
    return Case(["evaluate", d.archives.qa, empty_context, "--output-file", metrics], names=("dev.json",))


@book.case("evaluate_batch_size_0")
def _(d):
    return Case(["evaluate", d.archives.qa, SQUAD, "--batch-size", "0"], names=("--batch-size",))


@book.case("evaluate_archive_truncated")
def _(d):
    truncated = d.damaged.truncated
    return Case(["evaluate", truncated, SQUAD], names=(str(truncated),), watch=(d.damaged.folder,))
