"""
The main job's driver (evidence/main_job.py) end to end at test size: the tiny BERT with its weights in place of
MiniLM, a few steps per training; the frozen and adapted runs, the held-out comparison on the same masks, the
export of the encoder and SBO head and their reuse in span NER (``pretrained_span_boundary``) all run, and
summary.json holds every key the report has always had plus the new ones.
"""

import importlib
import json

import pytest
from allennlp.common import Params

from tests import REPO_ROOT, TINY_BERT_DIR

REPORT_KEYS = {  # the keys summary.json had before the main job compared frozen and adapted encoders
    "heldout_path",
    "heldout_blocks",
    "heldout_masking_seeds",
    "heldout_masked_tokens",
    "heldout_mlm_accuracy",
    "heldout_sbo_accuracy",
    "unigram_token",
    "unigram_mlm_accuracy",
    "heldout_mlm_accuracy_at_mask",
    "heldout_sbo_accuracy_at_mask",
    "unigram_mlm_accuracy_at_mask",
    "epochs",
    "optimizer_steps",
    "first_training_loss",
    "final_training_loss",
    "final_validation_loss",
    "training_seconds",
    "parameters",
    "fill_ins",
    "seconds",
    "cpu_seconds",
    "cpu_count",
}
NEW_KEYS = {
    "frozen_heldout_mlm_accuracy",
    "frozen_heldout_sbo_accuracy",
    "frozen_heldout_mlm_accuracy_at_mask",
    "frozen_heldout_sbo_accuracy_at_mask",
    "frozen_fill_ins",
    "trained_parameters",
    "frozen_trained_parameters",
    "ner_f1",
    "ner_precision",
    "ner_recall",
    "stage_seconds",
}


@pytest.fixture
def main_job(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    return importlib.import_module("evidence.main_job")


def tiny_configs(tmp_path):
    """The main job's two configs with the tiny BERT (weights loaded) in place of MiniLM, sized for a test."""
    pretraining = Params.from_file(str(REPO_ROOT / "training_configs/pretraining/minilm_adapt_cpu.jsonnet")).as_dict()
    for reader in ("dataset_reader", "validation_dataset_reader"):
        pretraining[reader].update(model_name=str(TINY_BERT_DIR), max_sequence_length=64)
    pretraining["validation_dataset_reader"]["max_instances"] = 16
    pretraining["model"]["encoder"]["model_name"] = str(TINY_BERT_DIR)
    pretraining["model"]["sbo_position_embedding_dim"] = 8
    pretraining["data_loader"]["batches_per_epoch"] = 2
    ner = Params.from_file(str(REPO_ROOT / "fixtures/configs/ner/span_ner_pretrained_sbo_minilm.jsonnet")).as_dict()
    ner["trainer"]["num_epochs"] = 2
    paths = tmp_path / "pretraining.json", tmp_path / "ner.json"
    for path, config in zip(paths, (pretraining, ner)):
        path.write_text(json.dumps(config))
    return [str(path) for path in paths]


def test_main_job_runs_every_stage(main_job, tmp_path, capsys):
    pretraining, ner = tiny_configs(tmp_path)
    out = tmp_path / "job"
    arguments = ["--config", pretraining, "--ner-config", ner, "--steps", "4", "--seeds", "2", "--out", str(out)]
    exit_code = main_job.main(arguments)

    summary = json.loads((out / "summary.json").read_text())
    assert REPORT_KEYS | NEW_KEYS <= set(summary)
    assert exit_code == (0 if summary["heldout_mlm_accuracy"] > summary["unigram_mlm_accuracy"] else 1)
    assert summary["optimizer_steps"] == summary["frozen_optimizer_steps"] == 4
    assert summary["frozen_trained_parameters"] < summary["trained_parameters"]
    assert 0.0 <= summary["ner_f1"] <= 1.0 and summary["ner_optimizer_steps"] == 6  # 3 batches of 2 sentences x 2
    assert summary["heldout_path"] == "fixtures/corpus/encyclopedia_tarrowby.txt"
    assert set(summary["stage_seconds"]) >= {"masking statistics", "held-out evaluation", "export", "summary"}
    assert summary["cpu_seconds"] > 0 and summary["seconds"] > 0
    # the exported encoder and SBO head are what the NER model read
    assert (out / "encoder" / "sbo_head.safetensors").is_file() and (out / "encoder" / "config.json").is_file()
    ner_config = json.loads((out / "ner" / "config.json").read_text())
    assert ner_config["model"]["span_extractor"] == {
        "type": "pretrained_span_boundary",
        "archive": str(out / "encoder"),
        "trainable": False,
    }
    assert ner_config["model"]["encoder"]["model_name"] == str(out / "encoder")
    for figure in ("training_curves.png", "span_lengths.png"):
        assert (out / figure).stat().st_size > 10_000
    # the configs the runs saved are the ones a user would train with (the progress bar's callback is not in them)
    assert json.loads((out / "model" / "config.json").read_text())["trainer"]["callbacks"] == [{"type": "tensorboard"}]
    printed = capsys.readouterr()
    # one bar over the job: 4 one-unit stages, 4 + 4 pre-training steps, 6 span NER steps, every one counted
    assert "18/18" in printed.err and "19/18" not in printed.err and "loss=" in printed.err
    assert "FROZEN encoder: MLM head" in printed.out and "span NER on fixtures/ner/litbank" in printed.out
    assert "allennlp" not in printed.out  # allennlp's own output went to the log
    assert "Epoch" in (out / "job.log").read_text() or "training" in (out / "job.log").read_text()


def test_steps_must_fill_whole_epochs(main_job, tmp_path):
    pretraining, ner = tiny_configs(tmp_path)
    with pytest.raises(SystemExit, match="multiple of 2"):
        main_job.main(["--config", pretraining, "--ner-config", ner, "--steps", "3", "--out", str(tmp_path / "x")])


def test_out_holding_an_input_is_refused_and_nothing_is_deleted(main_job, tmp_path):
    pretraining, ner = tiny_configs(tmp_path)
    corpus = tmp_path / "mine" / "corpus.txt"
    corpus.parent.mkdir()
    corpus.write_text("My own text.\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="holds the input .*corpus.txt; nothing was deleted"):
        main_job.main(["--config", pretraining, "--ner-config", ner, "--corpus", str(corpus), "--out", str(tmp_path)])
    assert corpus.read_text(encoding="utf-8") == "My own text.\n"
