import argparse
import io
import json

import pytest

from spanbert_lib.commands.coref_score_cli import (
    CorefScoreError,
    coref_score_from_args,
    score_conll_files,
)
from spanbert_lib.common.errors import EmptyInputError
from spanbert_lib.coref.dataset_readers.conll_format import read_conll_documents, write_conll_documents
from tests import REPO_ROOT, require_external_data

FIXTURES = REPO_ROOT / "fixtures" / "coref"
GOLD_FIXTURE = FIXTURES / "multi_part.gold_conll"
RESPONSE_FIXTURE = FIXTURES / "multi_part.response_conll"
METRICS = ("muc", "bcub", "ceafm", "ceafe", "blanc")


def f1(recall, precision):
    return 2 * recall * precision / (recall + precision)


def assert_scores(scores, expected):
    for metric, (recall, precision, f) in expected.items():
        got = scores[metric]
        assert (got["recall"], got["precision"], got["f1"]) == pytest.approx((recall, precision, f), abs=1e-9), metric


# Key (fixtures/coref/multi_part.gold_conll), spans named by their words:
#   part 000: K1 {John a, his b, him c}  K2 {his sister d, She e}  K3 {Paris p}
#   part 001: K4 {the chief f, John Smith , the chief g, He h}  K5 {the board i}
#   bc part 000: K6 {Rain, It}
# Response (multi_part.response_conll, tab-separated, parts in another order):
#   part 000: R1 {a, c}  R2 {d, e}  R3 {b}  R4 {in Paris x} (twinless)
#   part 001: R5 {John Smith y (twinless), g, h}  R6 {i};  the bc document is missing;
#   an extra document not in the key is ignored.
FIXTURE_EXPECTED = {
    # links: key 3 + 2 + 1 = 6, response 2 + 2 + 0 = 4, correct a-c, d-e, g-h = 3
    "muc": (3 / 6, 3 / 4, 0.6),
    # recall: a,c 2/3 each + d,e 1 each + b 1/3 + g,h 2/3 each + i 1 = 6, over 12 key mentions
    # precision: a,c 1 each + d,e 1 each + b 1 + g,h 2/3 each + i 1 = 22/3, over 10
    "bcub": (0.5, 22 / 30, 22 / 37),
    # K1-R1 2 + K2-R2 2 + K4-R5 2 + K5-R6 1 = 7; 12 key, 10 response mentions
    "ceafm": (7 / 12, 7 / 10, 7 / 11),
    # K1-R1 2*2/5 + K2-R2 1 + K4-R5 2*2/6 + K5-R6 1 = 52/15; 6 key, 6 response entities
    "ceafe": (52 / 90, 52 / 90, 52 / 90),
    # coref links: correct 2 + 1 + 0 = 3, key 4 + 3 + 1 = 8, response 2 + 3 = 5;
    # non-coref: correct 6 + 2 = 8, key 11 + 3 + 0 = 14, response 13 + 3 = 16
    "blanc": ((3 / 8 + 8 / 14) / 2, (3 / 5 + 8 / 16) / 2, (f1(3 / 8, 3 / 5) + f1(8 / 14, 0.5)) / 2),
    "mentions": (8 / 12, 8 / 10, f1(8 / 12, 8 / 10)),
}


def test_fixture_scores_worked_out_by_hand():
    log = io.StringIO()
    accumulator = score_conll_files(str(GOLD_FIXTURE), str(RESPONSE_FIXTURE), log=log)
    scores = accumulator.scores()
    assert_scores(scores, FIXTURE_EXPECTED)
    assert scores["conll_f1"] == pytest.approx((0.6 + 22 / 37 + 52 / 90) / 3)
    notes = log.getvalue()
    assert "document 'bc/test/00/test_0002' part '000'" in notes
    assert "missing from the response" in notes and "empty response" in notes
    assert "ignored 1 response document(s) not in the key" in notes
    assert accumulator.counts["muc"] == [3, 6, 3, 4]


def test_human_readable_report_and_json_output(capsys):
    args = argparse.Namespace(key_file=str(GOLD_FIXTURE), response_file=str(RESPONSE_FIXTURE), json=False)
    coref_score_from_args(args)
    out = capsys.readouterr().out
    for metric in METRICS:
        assert f"METRIC {metric}:" in out
    # percentages truncated to two decimals as the reference scorer prints them
    assert "Coreference: Recall: (3 / 6) 50%\tPrecision: (3 / 4) 75%\tF1: 60%" in out
    assert "Coreference: Recall: (7 / 12) 58.33%\tPrecision: (7 / 10) 70%\tF1: 63.63%" in out
    assert "Identification of Mentions: Recall: (8 / 12) 66.66%" in out
    assert "Coreference links: Recall: (3 / 8) 37.5%\tPrecision: (3 / 5) 60%" in out
    assert "Non-coreference links: Recall: (8 / 14) 57.14%\tPrecision: (8 / 16) 50%" in out
    assert "CoNLL F1 (mean of MUC, B-cubed and CEAFe F1): 59.08%" in out

    args.json = True
    coref_score_from_args(args)
    captured = capsys.readouterr()
    scores = json.loads(captured.out)
    assert set(scores) == set(METRICS) | {"mentions", "conll_f1"}
    assert_scores(scores, FIXTURE_EXPECTED)
    assert "missing from the response" in captured.err


@pytest.mark.external_data
def test_ontonotes_sample_against_itself_is_perfect():
    key = require_external_data("coref", "ontonotes_sample", "coref.gold_conll")
    scores = score_conll_files(str(key), str(key), log=io.StringIO()).scores()
    assert_scores(scores, {metric: (1, 1, 1) for metric in METRICS + ("mentions",)})
    assert scores["conll_f1"] == 1.0


def conll(doc_id="(d); part 000", cells=("(1", "1)", "-", "(1)"), words=None):
    """A one-document CoNLL text with five tab-separated columns."""
    words = words or [f"w{index}" for index in range(len(cells))]
    lines = [f"#begin document {doc_id}"]
    lines += ["\t".join(["d", "0", str(index), word, cell]) for index, (word, cell) in enumerate(zip(words, cells))]
    return "\n".join(lines + ["#end document", ""])


GOOD = conll()

# name: (key text or bytes, response text or bytes, extra arguments,
#        (file the message names: "key"/"response", line or None), message after the location)
SCORE_ERRORS = {
    "empty_key": (
        "",
        GOOD,
        [],
        ("key", None),
        "the key file holds no document (no '#begin document' line); nothing to score",
    ),
    "key_without_documents": (
        "\n  \n",
        GOOD,
        [],
        ("key", None),
        "the key file holds no document (no '#begin document' line); nothing to score",
    ),
    "empty_response": (
        GOOD,
        "",
        [],
        ("response", None),
        "the response shares no document with the key (1 documents, e.g. (d) part '000'): it "
        "holds no document (no '#begin document' line)",
    ),
    "no_document_in_common": (
        GOOD,
        conll("(d); part 0"),
        [],
        ("response", None),
        "the response shares no document with the key (1 documents, e.g. (d) part '000'): its "
        "documents are (d) part '0'",
    ),
    "fewer_tokens": (
        GOOD,
        conll(cells=("(1", "1)", "-")),
        [],
        ("response", 1),
        "document 'd' part '000' has 3 tokens but 4 in the key (KEY:1); key and response "
        "tokens are aligned by position",
    ),
    "invalid_utf8_key": (
        GOOD.replace("w1", "caf\u00e9").encode("latin-1"),
        GOOD,
        [],
        ("key", 3),
        "invalid UTF-8 byte(s) b'\\xe9' at byte offset 51; convert the file to UTF-8",
    ),
    "invalid_utf8_response": (
        GOOD,
        GOOD.replace("w3", "\u00e9t\u00e9").encode("latin-1"),
        [],
        ("response", 5),
        "invalid UTF-8 byte(s) b'\\xe9' at byte offset",
    ),
    "closing_never_opened": (
        GOOD,
        conll(cells=("(1", "1)", "2)", "(1)")),
        [],
        ("response", 4),
        "unbalanced coreference brackets: '2)' closes a mention of cluster 2 that was never opened",
    ),
    "mention_left_open": (
        conll(cells=("(1", "(2", "1)", "-")),
        GOOD,
        [],
        ("key", 6),
        "unbalanced coreference brackets: a mention of cluster 2 opened on line 3 is still "
        "open at the end of document 'd'",
    ),
    "one_column_line": (
        GOOD,
        GOOD.replace("d\t0\t2\tw2\t-", "-"),
        [],
        ("response", 4),
        "expected at least 2 columns (the document id, then coreference in the last), found 1 in document 'd'",
    ),
    "document_twice": (GOOD + GOOD, GOOD, [], ("key", 7), "document 'd' part '000' appears twice (first on line 1)"),
    "too_many_repeated_mentions": (
        conll(cells=["(1)"] * 12),
        conll(cells=["(1)|(2)"] * 12),
        [],
        ("response", None),
        "found 12 repeated mentions (> 10) in the response; the reference scorer refuses to "
        "score it: please fix the output",
    ),
    "different_words_with_check_words": (
        GOOD,
        conll(words=["w0", "W1", "w2", "w3"]),
        ["--check-words"],
        ("response", 3),
        "token 1 of document 'd' part '000' is 'W1' but 'w1' in the key (KEY:3)",
    ),
    "missing_key_file": (None, GOOD, [], ("key", None), "No such file or directory"),
}


def run_coref_score(argv):
    """``allennlp coref-score ARGV`` in-process through the real argument parser."""
    from spanbert_lib.commands.coref_score import CorefScore

    parser = argparse.ArgumentParser()
    CorefScore().add_subparser(parser.add_subparsers())
    args = parser.parse_args(["coref-score", *argv])
    args.func(args)


@pytest.mark.parametrize("name", sorted(SCORE_ERRORS))
def test_errors_are_one_line_naming_file_and_line(tmp_path, capsys, monkeypatch, name):
    monkeypatch.delenv("SPANBERT_LIB_DEBUG", raising=False)
    key_content, response_content, extra, (which, line), message = SCORE_ERRORS[name]
    paths = {"key": tmp_path / "key.conll", "response": tmp_path / "response.conll"}
    for path, content in ((paths["key"], key_content), (paths["response"], response_content)):
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        elif content is not None:
            path.write_bytes(content)
    with pytest.raises(SystemExit) as exit_info:
        run_coref_score([str(paths["key"]), str(paths["response"]), *extra])
    assert exit_info.value.code == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    location = f"{paths[which]}:{line}: " if line else f"{paths[which]}: "
    [error_line] = captured.err.splitlines()
    assert error_line.startswith("error: " + location), error_line
    assert message.replace("KEY", str(paths["key"])) in error_line


def test_debug_variable_shows_the_exception(tmp_path, monkeypatch):
    key = tmp_path / "key.conll"
    key.write_text("")
    monkeypatch.setenv("SPANBERT_LIB_DEBUG", "1")
    with pytest.raises(EmptyInputError, match="holds no document"):
        run_coref_score([str(key), str(key)])


def test_words_may_differ_and_trailing_tabs_are_fine_by_default(tmp_path):
    key, response = tmp_path / "key.conll", tmp_path / "response.conll"
    key.write_text(GOOD)
    response.write_text(conll(words=["a", "b", "c", "d"]).replace("\n", "\t\n"))
    scores = score_conll_files(str(key), str(response), log=io.StringIO()).scores()
    assert_scores(scores, {metric: (1, 1, 1) for metric in METRICS + ("mentions",)})
    with pytest.raises(CorefScoreError, match="token 0 of document 'd' part '000' is 'a'"):
        score_conll_files(str(key), str(response), log=io.StringIO(), check_words=True)


def _perturbed_ontonotes_response(key_path, out_path):
    """Gold clusters except: part 003 merges its two clusters, part 005 drops (28, 29)."""
    documents = read_conll_documents(key_path)
    clusters = [document.clusters for document in documents]
    assert clusters[2] == [[(3, 4), (29, 30), (42, 43)], [(27, 31), (36, 36)]]
    assert clusters[3] == [[(0, 9)], [(20, 24), (28, 29)]]
    clusters[2] = [clusters[2][0] + clusters[2][1]]
    clusters[3] = [[(0, 9)], [(20, 24)]]
    write_conll_documents(out_path, documents, clusters)


# Gold: P000 A{2} B{2}, P001 C{1}, P003 D{3} E{2}, P005 F{1} G{(20,24),(28,29)}: 13 mentions.
# Response: same but DE merged (5 mentions) and G' = {(20,24)}: 12 mentions.
ONTONOTES_EXPECTED = {
    # key links 1+1+0+2+1+0+1 = 6; response 1+1+0+4+0+0 = 6; correct 1+1+(2+1) = 5
    "muc": (5 / 6, 5 / 6, 5 / 6),
    # recall: 4 (P000) + 1 + D 3*(3/3) + E 2*(2/2) + F 1 + G' 1/2 = 11.5 over 13;
    # precision: 4 + 1 + D 3*(3/5) + E 2*(2/5) + F 1 + G' 1/1 = 9.6 over 12
    "bcub": (11.5 / 13, 0.8, f1(11.5 / 13, 0.8)),
    # 4 + 1 + DE-D 3 + F 1 + G-G' 1 = 10
    "ceafm": (10 / 13, 10 / 12, f1(10 / 13, 10 / 12)),
    # 2 + 1 + DE-D 2*3/8 + F 1 + G-G' 2*1/3 = 65/12 over 7 key, 6 response entities
    "ceafe": (65 / 84, 65 / 72, f1(65 / 84, 65 / 72)),
    # coref: correct 2 + 4 = 6, key 2 + 4 + 1 = 7, response 2 + 10 = 12;
    # non-coref: correct 4 + 0 + 1 = 5, key 4 + 6 + 2 = 12, response 4 + 0 + 1 = 5
    "blanc": ((6 / 7 + 5 / 12) / 2, (0.5 + 1) / 2, (f1(6 / 7, 0.5) + f1(5 / 12, 1)) / 2),
    "mentions": (12 / 13, 1, f1(12 / 13, 1)),
}


@pytest.mark.external_data
def test_ontonotes_perturbed_response_in_process(tmp_path):
    key = require_external_data("coref", "ontonotes_sample", "coref.gold_conll")
    response = tmp_path / "perturbed.conll"
    _perturbed_ontonotes_response(key, response)
    scores = score_conll_files(str(key), str(response), log=io.StringIO()).scores()
    assert_scores(scores, ONTONOTES_EXPECTED)


def test_subcommand_is_registered_and_parses_its_arguments():
    from allennlp.commands.subcommand import Subcommand

    from spanbert_lib.commands.coref_score import CorefScore

    assert Subcommand.by_name("coref-score") is CorefScore
    parser = argparse.ArgumentParser()
    CorefScore().add_subparser(parser.add_subparsers())
    args = parser.parse_args(
        [
            "coref-score",
            "key.conll",
            "response.conll",
            "--json",
            "--min-columns",
            "5",
            "--check-words",
            "--include-package",
            "my_package",
        ]
    )
    assert (args.key_file, args.response_file, args.json, args.min_columns, args.check_words, args.include_package) == (
        "key.conll",
        "response.conll",
        True,
        5,
        True,
        ["my_package"],
    )
    assert args.func is coref_score_from_args
    defaults = parser.parse_args(["coref-score", "k", "r"])
    assert (defaults.min_columns, defaults.check_words, defaults.include_package) == (2, False, [])
    with pytest.raises(SystemExit):
        parser.parse_args(["coref-score", "k", "r", "--min-columns", "1"])
