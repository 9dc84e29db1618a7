"""``allennlp build-wordpiece-vocab``: missing, empty and undecodable text; outputs over the corpus; bad options."""

from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.cases.inputs import CORPUS
from tests.failure_sweep.grading import Case

book = CaseBook()


@book.case("build_vocab_text_missing")
def _(d):
    return Case(["build-wordpiece-vocab", d / "text.txt", d / "out"], names=("text.txt",))


@book.case("build_vocab_text_empty")
def _(d):
    return Case(["build-wordpiece-vocab", d.write("text.txt", ""), d / "out"], names=("text.txt",))


@book.case("build_vocab_text_only_nul")
def _(d):
    return Case(["build-wordpiece-vocab", d.write("text.txt", b"\x00" * 64), d / "out"], names=("text.txt",))


@book.case("build_vocab_text_bad_utf8")
def _(d):
    text = d.write("text.txt", b"good words\nbad \xff word\n")
    return Case(["build-wordpiece-vocab", text, d / "out"], names=("text.txt",))


@book.case("build_vocab_output_is_corpus_directory")
def _(d):
    corpus = d.copy(CORPUS, "corpus")
    return Case(["build-wordpiece-vocab", corpus, corpus], names=(str(corpus),))


@book.case("build_vocab_output_holds_input")
def _(d):
    corpus = d.copy(CORPUS, "corpus")
    return Case(["build-wordpiece-vocab", corpus / "miscellany.txt", corpus], names=(str(corpus),))


@book.case("build_vocab_output_is_a_file")
def _(d):
    target = d.write("vocab", "a file")
    return Case(["build-wordpiece-vocab", CORPUS, target], names=(str(target),))


for option, value in (("--vocab-size", "0"), ("--vocab-size", "abc"), ("--min-frequency", "-1")):

    def bad_option(d, option=option, value=value):
        return Case(["build-wordpiece-vocab", CORPUS, d / "out", option, value], names=(option,))

    book.add(f"build_vocab{option.replace('-', '_')}_{value}", bad_option)
