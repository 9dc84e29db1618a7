import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from spanbert_lib.commands.coref_score import (
    CorefScoreError,
    coref_score_from_args,
    score_conll_files,
)
from spanbert_lib.common.testing import require_external_data
from spanbert_lib.coref.conll_format import read_conll_documents, write_conll_documents

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "fixtures" / "coref"
GOLD_FIXTURE = FIXTURES / "multi_part.gold_conll"
RESPONSE_FIXTURE = FIXTURES / "multi_part.response_conll"
METRICS = ("muc", "bcub", "ceafm", "ceafe", "blanc")


def f1(recall, precision):
    return 2 * recall * precision / (recall + precision)


def assert_scores(scores, expected):
    for metric, (recall, precision, f) in expected.items():
        got = scores[metric]
        assert (got["recall"], got["precision"], got["f1"]) == pytest.approx(
            (recall, precision, f), abs=1e-9), metric


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
    args = argparse.Namespace(key_file=str(GOLD_FIXTURE), response_file=str(RESPONSE_FIXTURE),
                              json=False)
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


def test_different_words_or_word_counts_are_errors(tmp_path, capsys):
    changed = tmp_path / "changed_word.conll"
    text = GOLD_FIXTURE.read_text()
    assert text.count("       met   VBD") == 1
    changed.write_text(text.replace("       met   VBD", "   greeted   VBD"))
    with pytest.raises(CorefScoreError) as error:
        score_conll_files(str(GOLD_FIXTURE), str(changed), log=io.StringIO())
    message = str(error.value)
    assert "document 'nw/test/00/test_0001' part '001'" in message
    assert "word 8 differs: key 'met', response 'greeted'" in message

    shorter = tmp_path / "shorter.conll"
    lines = GOLD_FIXTURE.read_text().splitlines(keepends=True)
    shorter.write_text("".join(line for line in lines if " Paris " not in line))
    with pytest.raises(CorefScoreError, match="the key has 12 words but the response .* has 11"):
        score_conll_files(str(GOLD_FIXTURE), str(shorter), log=io.StringIO())

    # the command turns it into a message on stderr and exit status 1
    args = argparse.Namespace(key_file=str(GOLD_FIXTURE), response_file=str(shorter), json=True)
    with pytest.raises(SystemExit) as exit_info:
        coref_score_from_args(args)
    assert exit_info.value.code == 1
    assert "coref-score: error:" in capsys.readouterr().err


def test_malformed_response_and_duplicate_documents_are_errors(tmp_path, capsys):
    broken = tmp_path / "broken.conll"
    broken.write_text(GOLD_FIXTURE.read_text().replace("   (3)\n", "   3)\n"))
    args = argparse.Namespace(key_file=str(GOLD_FIXTURE), response_file=str(broken), json=False)
    with pytest.raises(SystemExit):
        coref_score_from_args(args)
    assert f"{broken}, line 13: unbalanced coreference brackets" in capsys.readouterr().err

    doubled = tmp_path / "doubled.conll"
    doubled.write_text(GOLD_FIXTURE.read_text() * 2)
    with pytest.raises(CorefScoreError, match="twice"):
        score_conll_files(str(doubled), str(GOLD_FIXTURE), log=io.StringIO())


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


@pytest.mark.slow
@pytest.mark.external_data
def test_cli_json_on_perturbed_ontonotes_response(tmp_path):
    key = require_external_data("coref", "ontonotes_sample", "coref.gold_conll")
    response = tmp_path / "perturbed.conll"
    _perturbed_ontonotes_response(key, response)
    allennlp = Path(sys.executable).with_name("allennlp")
    result = subprocess.run([str(allennlp), "coref-score", str(key), str(response), "--json"],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    scores = json.loads(result.stdout.strip().splitlines()[-1])
    assert_scores(scores, ONTONOTES_EXPECTED)
    conll_f1 = (5 / 6 + f1(11.5 / 13, 0.8) + f1(65 / 84, 65 / 72)) / 3
    assert scores["conll_f1"] == pytest.approx(conll_f1)


def test_subcommand_is_registered_and_parses_its_arguments():
    from allennlp.commands.subcommand import Subcommand

    from spanbert_lib.commands.coref_score import CorefScore

    assert Subcommand.by_name("coref-score") is CorefScore
    parser = argparse.ArgumentParser()
    CorefScore().add_subparser(parser.add_subparsers())
    args = parser.parse_args(["coref-score", "key.conll", "response.conll", "--json",
                              "--min-columns", "5"])
    assert (args.key_file, args.response_file, args.json, args.min_columns) == (
        "key.conll", "response.conll", True, 5)
    assert args.func is coref_score_from_args
    assert parser.parse_args(["coref-score", "k", "r"]).min_columns == 12
