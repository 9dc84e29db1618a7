"""Choosing span_ner's outside_logit_bias: the sweep scores what the model itself would predict at each bias,
the choice by hand, and ``allennlp ner-outside-bias`` on a trained fixture archive."""

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models.archival import load_archive

from spanbert_lib.commands.ner_outside_bias import add_arguments, grid_from_arguments, outside_bias_from_args
from spanbert_lib.common.errors import UserInputError
from spanbert_lib.ner.outside_bias import (
    SentenceSpans,
    bias_grid,
    choose_outside_bias,
    default_grid,
    entities_at_bias,
    scores_at_bias,
    span_logits,
)
from tests import REPO_ROOT
from tests.entity_model_testing import build_model, tensors_of

CONFIG = REPO_ROOT / "fixtures" / "configs" / "ner" / "span_ner_tiny.jsonnet"
CONLL = REPO_ROOT / "fixtures" / "ner" / "conll2003_iob2.txt"
DEV = REPO_ROOT / "fixtures" / "ner" / "conll2003_iob1.txt"


@pytest.fixture(scope="module")
def instances_and_vocab():
    reader = DatasetReader.from_params(Params.from_file(str(CONFIG))["dataset_reader"])
    instances = list(reader.read(str(CONLL)))
    return instances, Vocabulary.from_instances(instances)


@pytest.fixture(scope="module")
def trained_archive(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("span_ner_tiny")
    overrides = json.dumps({"trainer.num_epochs": 2, "data_loader.shuffle": False})
    train_model_from_file(str(CONFIG), str(directory / "run"), overrides=overrides, include_package=["spanbert_lib"])
    return directory / "run" / "model.tar.gz"


def test_the_sweep_scores_what_the_model_predicts_at_each_bias(trained_archive):
    """span_logits keeps the logits at bias 0 in the data's order; re-decoding them at a bias gives the trained
    model's own metric with that bias set, and the model's bias is left as it was."""
    archive = load_archive(str(trained_archive), overrides=json.dumps({"model.outside_logit_bias": 0.75}))
    model, vocab = archive.model, archive.model.vocab
    instances = list(archive.validation_dataset_reader.read(str(DEV)))
    sentences = span_logits(model, instances, batch_size=3)
    assert model.outside_logit_bias == 0.75 and len(sentences) == len(instances)
    assert not model._metric._gold  # logits only: the model's own metric counted nothing (not even gold entities)
    model.outside_logit_bias = 0.0
    unbiased = model(**tensors_of(instances, vocab))["logits"]
    for row, sentence in enumerate(sentences):
        assert sentence.word_spans.tolist() == [list(span) for span in instances[row]["metadata"]["word_spans"]]
        assert sentence.gold == [tuple(entity) for entity in instances[row]["metadata"]["gold_entities"]]
        np.testing.assert_allclose(
            sentence.logits, unbiased[row, : len(sentence.word_spans)].detach().numpy(), atol=1e-5
        )
    counts = []
    for bias in (-10.0, -1.0, 0.0, 0.3, 1.0, 10.0):
        model.outside_logit_bias = bias
        model.get_metrics(reset=True)
        own_entities = model(**tensors_of(instances, vocab))["entities"]
        own = model.get_metrics(reset=True)
        assert entities_at_bias(model, sentences, bias) == own_entities
        swept = scores_at_bias(model, sentences, bias)
        assert (swept.precision, swept.recall, swept.f1) == pytest.approx(
            (own["precision"], own["recall"], own["f1"]), abs=1e-9
        )
        assert swept.predicted == sum(len(set(entities)) for entities in own_entities)
        counts.append(swept.predicted)
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1] == 0  # fewer entities as the bias grows


def test_the_choice_by_hand(instances_and_vocab):
    """Two one-word spans, the first a gold PER: it needs entity logit - O logit > bias, the second is a false
    entity until the bias passes its margin of 1; ties go to the bias closest to 0."""
    _, vocab = instances_and_vocab
    model = build_model(CONFIG, vocab)
    per, outside = vocab.get_token_index("PER", "labels"), model.outside_index
    logits = np.full((3, vocab.get_vocab_size("labels")), -10.0, dtype=np.float32)
    logits[:, outside] = 0.0
    logits[:, per] = [2.0, 1.0, -3.0]  # spans (0, 0), (1, 1), (0, 1)
    sentence = SentenceSpans(logits, np.array([[0, 0], [1, 1], [0, 1]]), [(0, 0, "PER")])
    at = {bias: scores_at_bias(model, [sentence], bias) for bias in (0.0, 1.5, 3.0)}
    assert (at[0.0].precision, at[0.0].recall) == (0.5, 1.0)
    assert (at[1.5].precision, at[1.5].recall, at[1.5].f1) == (1.0, 1.0, 1.0)
    assert at[3.0].f1 == 0.0
    best, table = choose_outside_bias(model, [sentence], [-1.0, 0.0, 1.75, 1.25, 3.0])
    assert best.bias == 1.25 and [row.bias for row in table] == [-1.0, 0.0, 1.75, 1.25, 3.0]
    with pytest.raises(ValueError, match="empty"):
        choose_outside_bias(model, [sentence], [])


def test_bias_grid():
    assert bias_grid(-1, 1, 0.5) == [-1.0, -0.5, 0.0, 0.5, 1.0]
    assert bias_grid(0, 0.3, 0.25) == [0.0, 0.25]
    assert default_grid()[0] == -2.0 and default_grid()[-1] == 6.0 and len(default_grid()) == 33
    with pytest.raises(ValueError, match="positive STEP"):
        bias_grid(0, 1, 0)
    with pytest.raises(UserInputError, match="^--grid needs START <= STOP"):
        grid_from_arguments(1, 0, 0.5)


def run_command(*arguments) -> None:
    args = add_arguments(argparse.ArgumentParser()).parse_args([str(argument) for argument in arguments])
    outside_bias_from_args(args)


def test_the_command_chooses_on_heldout_and_scores_the_evaluated_data(trained_archive, tmp_path, capsys):
    output = tmp_path / "bias.json"
    run_command(
        trained_archive, CONLL, "--evaluate", DEV, "--grid", "-1", "1", "0.5", "--json", "--output-file", output
    )
    result = json.loads(capsys.readouterr().out)
    assert json.loads(output.read_text()) == result
    assert [row["bias"] for row in result["grid"]] == [-1.0, -0.5, 0.0, 0.5, 1.0]
    assert result["best"] == max(result["grid"], key=lambda row: (row["f1"], -abs(row["bias"]), -row["bias"]))
    assert result["at_zero"] == result["grid"][2]
    assert json.loads(result["override"]) == {"model.outside_logit_bias": result["best"]["bias"]}
    assert result["heldout"]["sentences"] > 0 and result["heldout"]["gold_entities"] > 0
    evaluated = result["evaluate"][str(DEV)]
    assert evaluated["at_best"]["bias"] == result["best"]["bias"] and evaluated["at_zero"]["bias"] == 0.0
    run_command(trained_archive, CONLL, "--grid", "0", "0.5", "0.5")
    text = capsys.readouterr().out
    assert "  bias  precision  recall     f1" in text and 'apply it: -o \'{"model.outside_logit_bias": ' in text


def test_the_command_refuses_bad_input_in_one_line(trained_archive, tmp_path, capsys):
    entity_typing = tmp_path / "entity_typing"
    train_model_from_file(
        str(REPO_ROOT / "fixtures" / "configs" / "entity_typing" / "entity_typing_tiny.jsonnet"),
        str(entity_typing),
        overrides=json.dumps({"trainer.num_epochs": 1}),
        include_package=["spanbert_lib"],
    )
    capsys.readouterr()
    empty = tmp_path / "empty.txt"
    empty.write_text("-DOCSTART- -X- -X- O\n\n")
    cases = [
        ([trained_archive, empty], "empty.txt"),
        ([entity_typing / "model.tar.gz", CONLL], "not a span NER model"),
        ([tmp_path / "missing.tar.gz", CONLL], "missing.tar.gz"),
        ([trained_archive, CONLL, "--grid", "1", "0", "0.5"], "--grid needs START <= STOP"),
        ([trained_archive, CONLL, "--evaluate", DEV, "--output-file", DEV], "--output-file"),
    ]
    before = DEV.read_bytes()
    for arguments, expected in cases:
        with pytest.raises(SystemExit) as exit_info:
            run_command(*arguments)
        assert exit_info.value.code == 1
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and error[0].startswith("error: ") and expected in error[0]
    assert DEV.read_bytes() == before
