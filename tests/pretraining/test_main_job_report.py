"""The main job's report: held-out evaluation with fixed masks, the unigram baseline, fill-ins,
training curves and summary.json, on a tiny trained archive."""

import importlib.util
import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.data.fields import TensorField
from allennlp.data.instance import Instance
from allennlp.models.archival import load_archive
from transformers import AutoTokenizer

from spanbert_lib.pretraining.heldout_evaluation import (
    HeldoutEvaluation,
    MaskedBlock,
    evaluate_heldout,
    format_fill_ins,
    most_frequent_wordpiece,
)
from tests.conftest import REPO_ROOT

CONFIG = REPO_ROOT / "fixtures" / "configs" / "pretraining" / "spanbert_tiny.jsonnet"
CORPUS = REPO_ROOT / "fixtures" / "corpus"
TRAIN = f"{CORPUS / 'story_the_cartographers_daughter.txt'},{CORPUS / 'biography_agnes_thornbury.txt'}"
HELDOUT = str(CORPUS / "encyclopedia_tarrowby.txt")


def _load_report_script():
    spec = importlib.util.spec_from_file_location("main_job_report", REPO_ROOT / "scripts" / "main_job_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    serialization_dir = tmp_path_factory.mktemp("main_job") / "model"
    overrides = {
        "train_data_path": TRAIN,
        "validation_data_path": HELDOUT,
        "trainer.num_epochs": 2,
        "data_loader.batches_per_epoch": 4,
        "validation_data_loader": {"batch_size": 16},
    }
    train_model_from_file(str(CONFIG), str(serialization_dir), overrides=json.dumps(overrides))
    return serialization_dir


def test_heldout_accuracy_is_the_models_own_metric_under_the_same_seed(trained_run):
    model = load_archive(str(trained_run / "model.tar.gz")).model.eval()
    reader = DatasetReader.from_params(load_archive(str(trained_run / "model.tar.gz")).config["dataset_reader"])
    instances = list(reader.read(HELDOUT))
    evaluation = evaluate_heldout(model, instances, seeds=[model.masking_seed], batch_size=8)

    model.get_metrics(reset=True)
    with torch.no_grad():
        for start in range(0, len(instances), 8):
            batch = Batch(instances[start : start + 8])
            batch.index_instances(Vocabulary())
            model(**batch.as_tensor_dict())
    metrics = model.get_metrics(reset=True)
    assert evaluation.num_predictions > 100
    assert evaluation.accuracy("mlm") == pytest.approx(metrics["mlm_accuracy"])
    assert evaluation.accuracy("sbo") == pytest.approx(metrics["sbo_accuracy"])
    # each seed is a fixed, different set of masks: the same seed twice gives the same predictions
    twice = evaluate_heldout(model, instances, seeds=[3, 3, 4], batch_size=8)
    per_seed = len(instances)
    first, second, third = (twice.blocks[i * per_seed : (i + 1) * per_seed] for i in range(3))
    assert all(
        torch.equal(a.positions, b.positions) and torch.equal(a.mlm_predictions, b.mlm_predictions)
        for a, b in zip(first, second)
    )
    assert any(not torch.equal(a.positions, c.positions) for a, c in zip(first, third))


def test_report_writes_summary_and_curves(trained_run, tmp_path, capsys):
    report = _load_report_script()
    out = tmp_path / "out"
    exit_code = report.main(
        [
            str(trained_run),
            "--train",
            TRAIN,
            "--heldout",
            HELDOUT,
            "--out",
            str(out),
            "--seeds",
            "2",
            "--examples",
            "2",
            "--job-cpu-seconds",
            "5",
        ]
    )
    summary = json.loads((out / "summary.json").read_text())
    assert {"heldout_mlm_accuracy", "heldout_sbo_accuracy", "unigram_mlm_accuracy", "seconds", "cpu_seconds"} <= set(
        summary
    )
    assert 0.0 <= summary["heldout_mlm_accuracy"] <= 1.0 and 0.0 < summary["unigram_mlm_accuracy"] < 1.0
    assert summary["cpu_seconds"] > 5 and summary["optimizer_steps"] == 8 and summary["epochs"] == 2
    assert summary["heldout_masked_tokens"] > 100
    assert len(summary["fill_ins"]) == 2 and all(" -> " in text for text in summary["fill_ins"])
    assert (out / "training_curves.png").stat().st_size > 10_000
    assert exit_code == (0 if summary["heldout_mlm_accuracy"] > summary["unigram_mlm_accuracy"] else 1)
    printed = capsys.readouterr().out
    assert "unigram baseline" in printed and "[" in printed


def test_most_frequent_wordpiece_ignores_special_tokens():
    def instance(ids):
        return Instance({"input_ids": TensorField(torch.tensor(ids))})

    assert most_frequent_wordpiece([instance([2, 7, 7, 3]), instance([2, 9, 7, 9, 9, 9, 3])], special_ids=[2, 3]) == 9
    with pytest.raises(ValueError, match="only special tokens"):
        most_frequent_wordpiece([instance([2, 3])], special_ids=[2, 3])


def test_fill_ins_show_each_masked_span_with_the_prediction():
    tokenizer = AutoTokenizer.from_pretrained(str(REPO_ROOT / "fixtures" / "tiny_bert"))
    ids = tokenizer("the harbour was in the town .")["input_ids"]  # [CLS] the harbour was in the town . [SEP]
    predicted = tokenizer.convert_tokens_to_ids(["in", "the", "harbour"])
    block = MaskedBlock(
        input_ids=torch.tensor(ids),
        positions=torch.tensor([2, 4, 5]),
        targets=torch.tensor([ids[2], ids[4], ids[5]]),
        mlm_predictions=torch.tensor(predicted),
        sbo_predictions=torch.tensor(predicted),
        seen_ids=torch.tensor([ids[2], 4, 4]),
    )
    assert format_fill_ins(block, tokenizer) == "the [harbour -> in] was [in the -> the harbour] town ."


def test_accuracy_over_all_targets_and_over_positions_seen_as_mask():
    mask = 4
    block = MaskedBlock(
        input_ids=torch.arange(6),
        positions=torch.tensor([1, 2, 3, 4]),
        targets=torch.tensor([5, 6, 7, 8]),
        seen_ids=torch.tensor([mask, mask, 7, 9]),  # masked, masked, kept, random
        mlm_predictions=torch.tensor([5, 0, 7, 8]),
        sbo_predictions=torch.tensor([0, 0, 0, 8]),
    )
    evaluation = HeldoutEvaluation(mask_token_id=mask, blocks=[block])
    assert evaluation.num_predictions == 4
    assert evaluation.accuracy("mlm") == 0.75
    assert evaluation.accuracy("mlm", replaced_by_mask=True) == 0.5
    assert evaluation.accuracy("mlm", replaced_by_mask=False) == 1.0
    assert evaluation.accuracy("sbo") == 0.25
    assert evaluation.constant_accuracy(5) == 0.25
    assert evaluation.constant_accuracy(5, replaced_by_mask=True) == 0.5
