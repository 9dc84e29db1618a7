"""``evidence/coref_pronouns.py``: the passages file read mention by mention, pronouns judged by hand, and the
script end to end on a model trained on the fixtures."""

import json

import pytest
from allennlp.commands.train import train_model_from_file

from evidence.coref_pronouns import PassageFormatError, gold_pronouns, judge, main, parse_passages
from tests import REPO_ROOT

CONFIG = REPO_ROOT / "fixtures" / "configs" / "coref" / "spanbert_coref_tiny.jsonnet"


def test_the_passages_file_is_read_mention_by_mention():
    passages = parse_passages()
    assert len(passages) == 8
    first = passages[0]
    assert first.line == 6 and len(first.sentences) == 4
    assert first.words[:5] == ["Tom", "and", "his", "daughter", "Clara"]
    tom, clara = first.clusters[0], first.clusters[1]
    assert tom == [(0, 0), (2, 2), (10, 10), (32, 32), (37, 37)]  # Tom, his, He, Tom, he
    assert clara == [(2, 4), (15, 15), (24, 24), (27, 27)]  # his daughter Clara, she, Clara, her
    # three brackets opened on one token, closed innermost first: their / their grandfather / ... 's attic
    twins = passages[2]
    assert (7, 7) in twins.clusters[0] and (7, 8) in twins.clusters[4]
    assert [" ".join(twins.words[s : e + 1]) for s, e in twins.clusters[2]] == ["their grandfather 's attic"]
    assert sum(1 for passage in passages for _ in gold_pronouns(passage)) == 56


def test_judged_pronouns_are_those_with_an_earlier_gold_mention(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("[It]0 rained on [Anna]1 .\n[She]1 saw [Tom]2 and [he]2 saw [her]1 .\n")
    (passage,) = parse_passages(path)
    # "It" opens its cluster: nothing to resolve it to
    assert [passage.words[span[0]] for span, _ in gold_pronouns(passage)] == ["She", "he", "her"]
    predicted = [[(3, 3), (5, 5), (11, 11)], [(9, 9), (0, 0)]]  # Anna+She+her; "he" linked to "It"
    assert judge(passage, predicted) == {
        "right": ["She (word 5) -> Anna", "her (word 11) -> She"],
        "wrong": ["he (word 9) -> It"],
        "unlinked": [],
    }
    assert judge(passage, [])["unlinked"] == ["She (word 5)", "he (word 9)", "her (word 11)"]


def test_an_antecedent_is_read_by_the_gold_mention_it_heads(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("[Tom]0 and [[his]0 daughter Clara]1 left .\n[She]1 waved and [he]0 waved at [the old man]2 .\n")
    (passage,) = parse_passages(path)
    # "Clara" alone ends "his daughter Clara"; "daughter" ends no gold mention; "old man" ends "the old man"
    predicted = [[(4, 4), (7, 7)], [(3, 3), (10, 10)], [(14, 15), (0, 0)]]
    assert judge(passage, predicted) == {
        "right": ["She (word 7) -> Clara"],
        "wrong": ["he (word 10) -> daughter"],
        "unlinked": ["his (word 2)"],
    }


@pytest.mark.parametrize(
    "text, message",
    [
        ("[Anna]0 met [Tom .\n", r"passage at line 1: 1 mention\(s\) never closed"),
        ("Anna]0 met Tom .\n", "line 1: 'Anna]0' closes a mention never opened"),
        ("# header\n[Anna]0 met\n[Tom]x .\n", "line 3: cannot read the token '\\[Tom\\]x'"),
    ],
)
def test_a_malformed_file_names_its_line(tmp_path, text, message):
    path = tmp_path / "p.txt"
    path.write_text(text)
    with pytest.raises(PassageFormatError, match=message):
        parse_passages(path)
    assert main([str(tmp_path), "--passages", str(path)]) == 2


def test_end_to_end_on_a_model_trained_on_the_fixtures(tmp_path, capsys):
    folder = tmp_path / "side_by_side"
    overrides = {"trainer.num_epochs": 1, "model.singletons": True}
    train_model_from_file(str(CONFIG), str(folder / "ours_seed1"), overrides=json.dumps(overrides))
    results = tmp_path / "coref_pronouns.json"
    assert main([str(folder), "--results", str(results)]) == 0
    written = json.loads(results.read_text())
    (row,) = written["tables"]["pronouns"]["rows"]
    assert row[:2] == ["`spanbert_coref` (`litbank_minilm.jsonnet`)", "1"]
    verdicts = written["verdicts"]["ours"]["1"]
    assert sum(len(items) for items in verdicts.values()) == 56  # every judged pronoun has one verdict
    assert "ours seed 1:" in capsys.readouterr().out
    assert main([str(tmp_path / "empty")]) == 2
