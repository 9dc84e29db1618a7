"""``allennlp coref-predict-conll`` and ``allennlp coref-score``: keys as outputs, bad CoNLL files, wrong archives."""

from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.cases.inputs import COREF_KEY, MULTI_PART_KEY, MULTI_PART_RESPONSE
from tests.failure_sweep.grading import Case

book = CaseBook()

# ---- coref-predict-conll ----

for how in ("same", "symlink", "hardlink"):

    def key_as_output(d, how=how):
        gold = d.copy(COREF_KEY, "key.conll")
        output = gold if how == "same" else d.link(gold, "out.conll", hard=how == "hardlink")
        return Case(["coref-predict-conll", d.archives.coref, gold, output], names=(str(output),))

    book.add(f"coref_predict_conll_key_as_output_{how}", key_as_output)


@book.case("coref_predict_conll_output_is_archive")
def _(d):
    archive = d.copy(d.archives.coref_run, "run") / "model.tar.gz"
    return Case(["coref-predict-conll", archive, COREF_KEY, archive], names=("model.tar.gz",))


@book.case("coref_predict_conll_input_missing")
def _(d):
    return Case(["coref-predict-conll", d.archives.coref, d / "in.conll", d / "out.conll"], names=("in.conll",))


@book.case("coref_predict_conll_input_empty")
def _(d):
    return Case(
        ["coref-predict-conll", d.archives.coref, d.write("in.conll", ""), d / "out.conll"], names=("in.conll",)
    )


@book.case("coref_predict_conll_input_bad_utf8")
def _(d):
    data = d.write("in.conll", COREF_KEY.read_bytes().replace(b" ", b" \xff", 1))
    return Case(["coref-predict-conll", d.archives.coref, data, d / "out.conll"], names=("in.conll",))


@book.case("coref_predict_conll_directory_without_conll")
def _(d):
    return Case(["coref-predict-conll", d.archives.coref, d.path, d / "out.conll"], names=(str(d.path),))


@book.case("coref_predict_conll_qa_archive")
def _(d):
    return Case(["coref-predict-conll", d.archives.qa, COREF_KEY, d / "out.conll"], names=(str(d.archives.qa),))


@book.case("coref_predict_conll_truncated_archive")
def _(d):
    truncated = d.damaged.truncated
    return Case(
        ["coref-predict-conll", truncated, COREF_KEY, d / "out.conll"],
        names=(str(truncated),),
        watch=(d.damaged.folder,),
    )


@book.case("coref_predict_conll_batch_size_0")
def _(d):
    return Case(
        ["coref-predict-conll", d.archives.coref, COREF_KEY, d / "out.conll", "--batch-size", "0"],
        names=("--batch-size",),
    )


@book.case("coref_predict_conll_output_directory_missing")
def _(d):
    return Case(["coref-predict-conll", d.archives.coref, COREF_KEY, d / "no" / "out.conll"], names=("out.conll",))


@book.case("coref_predict_conll_failure_keeps_old_output")
def _(d):
    old = d.write("out.conll", "#begin document (old); part 000\nold 0 0 x - - - - - - - - (0)\n#end document\n")
    damaged = d.write("in.conll", COREF_KEY.read_text() + "#begin document (broken); part 000\nbroken 0\n")
    return Case(["coref-predict-conll", d.archives.coref, damaged, old], names=("in.conll",))


# ---- coref-score ----


@book.case("coref_score_key_missing")
def _(d):
    return Case(["coref-score", d / "key.conll", MULTI_PART_RESPONSE], names=("key.conll",))


@book.case("coref_score_response_missing")
def _(d):
    return Case(["coref-score", MULTI_PART_KEY, d / "response.conll"], names=("response.conll",))


@book.case("coref_score_key_empty")
def _(d):
    return Case(["coref-score", d.write("key.conll", ""), MULTI_PART_RESPONSE], names=("key.conll",))


@book.case("coref_score_key_bad_utf8")
def _(d):
    key = d.write("key.conll", MULTI_PART_KEY.read_bytes().replace(b" ", b"\xff ", 1))
    return Case(["coref-score", key, MULTI_PART_RESPONSE], names=("key.conll",))


@book.case("coref_score_no_shared_document")
def _(d):
    other = d.write("response.conll", COREF_KEY.read_text())
    return Case(["coref-score", MULTI_PART_KEY, other], names=("response.conll",))


@book.case("coref_score_key_directory")
def _(d):
    return Case(["coref-score", d.path, MULTI_PART_RESPONSE], names=(str(d.path),))


@book.case("coref_score_min_columns_0")
def _(d):
    return Case(["coref-score", MULTI_PART_KEY, MULTI_PART_RESPONSE, "--min-columns", "0"], names=("--min-columns",))


@book.case("coref_score_response_truncated")
def _(d):
    text = MULTI_PART_RESPONSE.read_text()
    response = d.write("response.conll", text[: len(text) // 2])
    return Case(["coref-score", MULTI_PART_KEY, response], names=("response.conll",))
