"""``allennlp squad-eval``: missing and broken files, outputs over inputs, bad options."""

import json

from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.cases.inputs import SQUAD
from tests.failure_sweep.grading import Case

book = CaseBook()
PREDICTIONS = json.dumps({"q1": "March 1932"})


@book.case("squad_eval_dataset_missing")
def _(d):
    return Case(["squad-eval", d / "dev.json", d.write("p.json", PREDICTIONS)], names=("dev.json",))


@book.case("squad_eval_predictions_missing")
def _(d):
    return Case(["squad-eval", SQUAD, d / "p.json"], names=("p.json",))


@book.case("squad_eval_no_shared_question_id")
def _(d):
    return Case(["squad-eval", SQUAD, d.write("p.json", json.dumps({"elsewhere-1": "x"}))], names=("p.json",))


@book.case("squad_eval_predictions_not_json")
def _(d):
    return Case(["squad-eval", SQUAD, d.write("p.json", "{not json")], names=("p.json",))


@book.case("squad_eval_predictions_bad_utf8")
def _(d):
    return Case(["squad-eval", SQUAD, d.write("p.json", b'{"a": "\xff"}')], names=("p.json",))


@book.case("squad_eval_output_is_dataset")
def _(d):
    dataset = d.copy(SQUAD, "dev.json")
    return Case(["squad-eval", dataset, d.write("p.json", PREDICTIONS), "--output-file", dataset], names=("dev.json",))


@book.case("squad_eval_output_is_predictions_symlink")
def _(d):
    predictions = d.write("p.json", PREDICTIONS)
    return Case(
        ["squad-eval", SQUAD, predictions, "--output-file", d.link(predictions, "scores.json")],
        names=("scores.json",),
    )


@book.case("squad_eval_dataset_directory")
def _(d):
    return Case(["squad-eval", d.path, d.write("p.json", "{}")], names=(str(d.path),))


@book.case("squad_eval_threshold_nan")
def _(d):
    return Case(["squad-eval", SQUAD, d.write("p.json", "{}"), "--na-prob-thresh", "nan"], names=("--na-prob-thresh",))


@book.case("squad_eval_na_prob_with_v1")
def _(d):
    return Case(
        [
            "squad-eval",
            SQUAD,
            d.write("p.json", PREDICTIONS),
            "--na-prob-file",
            d.write("na.json", "{}"),
            "--version",
            "1.1",
        ],
        names=("--na-prob-file",),
    )


@book.case("squad_eval_dataset_truncated")
def _(d):
    dataset = d.write("dev.json", SQUAD.read_text()[:400])
    return Case(["squad-eval", dataset, d.write("p.json", PREDICTIONS)], names=("dev.json",))
