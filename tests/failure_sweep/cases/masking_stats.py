"""``allennlp masking-stats``: the wrong config, missing text, the plot over an input, bad options and model paths."""

import json

from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.cases.inputs import CORPUS, PRETRAINING_CONFIG, QA_CONFIG
from tests.failure_sweep.grading import Case

book = CaseBook()
TEXT = CORPUS / "miscellany.txt"


@book.case("masking_stats_not_a_pretraining_config")
def _(d):
    return Case(["masking-stats", QA_CONFIG, TEXT], names=(str(QA_CONFIG),))


@book.case("masking_stats_config_missing")
def _(d):
    return Case(["masking-stats", d / "config.jsonnet", TEXT], names=("config.jsonnet",))


@book.case("masking_stats_text_missing")
def _(d):
    return Case(["masking-stats", PRETRAINING_CONFIG, d / "text.txt"], names=("text.txt",))


@book.case("masking_stats_text_empty")
def _(d):
    return Case(["masking-stats", PRETRAINING_CONFIG, d.write("text.txt", "")], names=("text.txt",))


@book.case("masking_stats_plot_is_text")
def _(d):
    text = d.copy(TEXT, "text.txt")
    return Case(["masking-stats", PRETRAINING_CONFIG, text, "--plot", text], names=("text.txt",))


@book.case("masking_stats_plot_is_config_symlink")
def _(d):
    config = d.copy(PRETRAINING_CONFIG, "config.jsonnet")
    return Case(["masking-stats", config, TEXT, "--plot", d.link(config, "plot.png")], names=("plot.png",))


@book.case("masking_stats_plot_directory_missing")
def _(d):
    return Case(["masking-stats", PRETRAINING_CONFIG, TEXT, "--plot", d / "no" / "plot.png"], names=("plot.png",))


for option, value in (("--batch-size", "0"), ("--max-blocks", "-1"), ("--seed", "x")):

    def bad_option(d, option=option, value=value):
        return Case(["masking-stats", PRETRAINING_CONFIG, TEXT, option, value], names=(option,))

    book.add(f"masking_stats{option.replace('-', '_')}_{value}", bad_option)


@book.case("masking_stats_model_path_missing")
def _(d):
    missing = d / "tokenizer"
    overrides = json.dumps({"dataset_reader.model_name": str(missing)})
    return Case(["masking-stats", PRETRAINING_CONFIG, TEXT, "-o", overrides], names=(str(missing),))
