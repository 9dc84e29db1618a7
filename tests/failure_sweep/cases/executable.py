"""Two data-loss cases through the installed ``allennlp`` executable, as a real process (not a fork)."""

from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.cases.inputs import COREF_KEY, GOOD_LINE
from tests.failure_sweep.grading import Case

book = CaseBook()


@book.case("executable_predict_output_is_input")
def _(d):
    source = d.lines(GOOD_LINE)
    return Case(
        ["predict", d.archives.qa, source, "--output-file", source, "--silent"], names=(str(source),), executable=True
    )


@book.case("executable_coref_predict_conll_key_as_output")
def _(d):
    gold = d.copy(COREF_KEY, "key.conll")
    return Case(["coref-predict-conll", d.archives.coref, gold, gold], names=(str(gold),), executable=True)
