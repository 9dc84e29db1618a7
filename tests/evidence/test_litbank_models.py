"""``bash scripts/models.sh``'s driver on a tiny config: the cost said first, one progress bar, the dev scores after."""

import json

import pytest

import evidence.litbank_models as litbank_models
from tests import REPO_ROOT


@pytest.fixture
def tiny_model(tmp_path, monkeypatch):
    model = litbank_models.LitBankModel(
        "coref", "coreference", "fixtures/configs/coref/spanbert_coref_tiny.jsonnet", "coref", {"conll_f1": "CoNLL F1"}
    )
    monkeypatch.setitem(litbank_models.MODELS, "coref", model)
    monkeypatch.setattr(litbank_models, "MODELS_DIR", tmp_path / "models")
    monkeypatch.setattr(litbank_models, "RESULTS_FILE", tmp_path / "results.json")
    monkeypatch.setattr(litbank_models, "external_path", lambda relative: REPO_ROOT / "fixtures" / relative)
    monkeypatch.chdir(REPO_ROOT)
    return model


def test_one_command_trains_says_the_cost_and_reports_the_dev_scores(tiny_model, tmp_path, capsys):
    tiny_model_config = REPO_ROOT / tiny_model.config
    assert tiny_model_config.is_file()
    assert litbank_models.main(["coref", "--record-results"]) == 0
    out, err = capsys.readouterr()
    assert "this takes a quarter of an hour on a CPU" in out  # nothing measured yet
    assert "dev (LitBank documents 70-79): CoNLL F1" in out and "took" in out
    assert " INFO " not in out and " INFO " not in err  # allennlp's log went to out.log only
    assert err.count("coreference:") >= 1 and "batch" in err  # the one bar (tqdm writes to stderr)
    assert (tmp_path / "models" / "litbank_coref" / "model.tar.gz").is_file()
    record = json.loads((tmp_path / "models" / "litbank_coref" / "training.json").read_text())
    assert record["seconds"] > 0 and "CoNLL F1" in record["dev"]
    assert json.loads((tmp_path / "results.json").read_text())["runs"]["coref"]["seconds"] == record["seconds"]
    # the next run says the time of this one, and does not train again without --force
    assert litbank_models.main(["coref"]) == 0
    out, _ = capsys.readouterr()
    assert "(the last run on this machine" in out and "exists; --force trains it again" in out


def test_missing_litbank_is_one_line_saying_where_to_get_it(tiny_model, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(litbank_models, "external_path", lambda relative: tmp_path / "nowhere" / relative)
    assert litbank_models.main(["all"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: LitBank not found at") and "github.com/dbamman/litbank" in err
    assert len(err.strip().splitlines()) == 1
