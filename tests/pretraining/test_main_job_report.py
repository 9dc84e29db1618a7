"""The main job's report: held-out evaluation with fixed masks, the unigram baseline, the frozen-encoder
run beside the adapted one on the same masks, fill-ins in whole words, training curves and summary.json,
on tiny trained archives."""

import json
import math
import re

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
    wordpiece_log_probabilities,
)
from tests import REPO_ROOT, TINY_BERT_DIR

CONFIG = REPO_ROOT / "fixtures" / "configs" / "pretraining" / "spanbert_tiny.jsonnet"
CORPUS = REPO_ROOT / "fixtures" / "corpus"
TRAIN = f"{CORPUS / 'story_the_cartographers_daughter.txt'},{CORPUS / 'biography_agnes_thornbury.txt'}"
HELDOUT = str(CORPUS / "encyclopedia_tarrowby.txt")


def _load_report_script():
    from evidence import main_job_report

    return main_job_report


def _train(serialization_dir, **more):
    overrides = {
        "train_data_path": TRAIN,
        "validation_data_path": HELDOUT,
        "trainer.num_epochs": 2,
        "data_loader.batches_per_epoch": 4,
        "validation_data_loader": {"batch_size": 16},
        **more,
    }
    train_model_from_file(str(CONFIG), str(serialization_dir), overrides=json.dumps(overrides))
    return serialization_dir


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    return _train(tmp_path_factory.mktemp("main_job") / "model")


@pytest.fixture(scope="module")
def frozen_run(tmp_path_factory):
    return _train(tmp_path_factory.mktemp("main_job") / "frozen", **{"model.freeze_encoder": True})


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


def test_heldout_evaluation_of_a_model_without_the_sbo_head(tmp_path):
    run = _train(tmp_path / "mlm_only", **{"model.sbo_weight": 0.0, "trainer.num_epochs": 1})
    archive = load_archive(str(run / "model.tar.gz"))
    instances = list(DatasetReader.from_params(archive.config["dataset_reader"]).read(HELDOUT))
    evaluation = evaluate_heldout(archive.model, instances, seeds=[0, 1], batch_size=8)
    assert evaluation.num_predictions > 100
    assert all(block.sbo_predictions is None and block.sbo_target_log_probs is None for block in evaluation.blocks)
    assert 0.0 <= evaluation.accuracy("mlm", replaced_by_mask=True) <= 1.0
    assert evaluation.perplexity("mlm") > 1.0
    with pytest.raises(ValueError, match="no SBO head"):
        evaluation.accuracy("sbo")


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


def test_report_compares_the_frozen_and_the_adapted_run_on_the_same_masks(trained_run, frozen_run, tmp_path, capsys):
    report = _load_report_script()
    out = tmp_path / "out"
    arguments = [str(trained_run), "--train", TRAIN, "--heldout", HELDOUT, "--out", str(out), "--seeds", "2"]
    report.main(arguments + ["--frozen", str(frozen_run), "--examples", "2"])
    summary = json.loads((out / "summary.json").read_text())
    # the keys the report has always had describe the adapted run; the frozen run's carry the prefix
    for key in (
        "heldout_mlm_accuracy",
        "heldout_sbo_accuracy",
        "heldout_mlm_accuracy_at_mask",
        "heldout_sbo_accuracy_at_mask",
        "final_training_loss",
        "trained_parameters",
    ):
        assert 0.0 <= summary["frozen_" + key] and "frozen_" + key != key
        assert summary[key] is not None
    assert summary["frozen_trained_parameters"] < summary["trained_parameters"] <= summary["parameters"]
    assert summary["frozen_optimizer_steps"] == summary["optimizer_steps"] == 8
    assert len(summary["frozen_fill_ins"]) == len(summary["fill_ins"]) == 2
    # same blocks and masks: the fill-ins differ only inside the brackets
    strip = lambda text: re.sub(r" -> [^\]]*\]", "]", text)  # noqa: E731
    assert [strip(t) for t in summary["frozen_fill_ins"]] == [strip(t) for t in summary["fill_ins"]]
    alone = tmp_path / "alone"
    report.main(arguments[:-4] + ["--out", str(alone), "--seeds", "2"])
    assert json.loads((alone / "summary.json").read_text())["heldout_mlm_accuracy"] == summary["heldout_mlm_accuracy"]
    printed = capsys.readouterr().out
    assert "FROZEN encoder: MLM head" in printed and "ADAPTED encoder: SBO head" in printed
    assert (out / "training_curves.png").stat().st_size > 10_000


def test_most_frequent_wordpiece_ignores_special_tokens():
    def instance(ids):
        return Instance({"input_ids": TensorField(torch.tensor(ids))})

    assert most_frequent_wordpiece([instance([2, 7, 7, 3]), instance([2, 9, 7, 9, 9, 9, 3])], special_ids=[2, 3]) == 9
    with pytest.raises(ValueError, match="only special tokens"):
        most_frequent_wordpiece([instance([2, 3])], special_ids=[2, 3])


def test_unigram_log_probabilities_are_smoothed_counts_without_specials():
    def instance(ids):
        return Instance({"input_ids": TensorField(torch.tensor(ids))})

    log_probs = wordpiece_log_probabilities(
        [instance([2, 7, 7, 3]), instance([2, 9, 3])], special_ids=[2, 3], vocab_size=10
    )
    expected = torch.ones(10)
    expected[7] += 2
    expected[9] += 1
    assert torch.allclose(log_probs, (expected / expected.sum()).log())


def test_fill_ins_show_each_masked_span_with_the_prediction():
    tokenizer = AutoTokenizer.from_pretrained(str(TINY_BERT_DIR))
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


def test_fill_ins_are_whole_words_on_both_sides():
    tokenizer = AutoTokenizer.from_pretrained(str(TINY_BERT_DIR))
    ids = tokenizer("the mapped the harbour .")["input_ids"]
    tokens = tokenizer.convert_ids_to_tokens(ids)
    assert tokens[2:7] == ["m", "##a", "##p", "##p", "##ed"]  # the word is five wordpieces

    def block(positions, predicted_tokens):
        predicted = torch.tensor(tokenizer.convert_tokens_to_ids(predicted_tokens))
        return MaskedBlock(
            input_ids=torch.tensor(ids),
            positions=torch.tensor(positions),
            targets=torch.tensor([ids[p] for p in positions]),
            mlm_predictions=predicted,
            sbo_predictions=predicted.flip(0),
            seen_ids=torch.full((len(positions),), tokenizer.mask_token_id),
        )

    # "mapped" and "harbour" masked; the model's pieces glued at their ## as words
    whole = block([2, 3, 4, 5, 6, 8], ["s", "##a", "##w", "##e", "##d", "town"])
    assert format_fill_ins(whole, tokenizer) == "the [mapped -> sawed] the [harbour -> town] ."
    # a piece that does not continue a word starts a new one; a leading ## loses its marks
    assert format_fill_ins(block([2, 3, 4, 5, 6], ["##s", "##a", "w", "##e", "##d"]), tokenizer) == (
        "the [mapped -> sa wed] the harbour ."
    )
    # one masked piece of a word: the whole word is shown, the model's piece in its place
    assert format_fill_ins(block([4], ["##t"]), tokenizer) == "the [mapped -> matped] the harbour ."
    assert format_fill_ins(block([4], ["##t"]), tokenizer, head="sbo") == "the [mapped -> matped] the harbour ."


def test_accuracy_over_all_targets_and_over_positions_seen_as_mask():
    mask = 4
    block = MaskedBlock(
        input_ids=torch.arange(6),
        positions=torch.tensor([1, 2, 3, 4]),
        targets=torch.tensor([5, 6, 7, 8]),
        seen_ids=torch.tensor([mask, mask, 7, 9]),  # masked, masked, kept, random
        mlm_predictions=torch.tensor([5, 0, 7, 8]),
        sbo_predictions=torch.tensor([0, 0, 0, 8]),
        mlm_target_log_probs=torch.tensor([-1.0, -3.0, -0.5, -0.5]),
        sbo_target_log_probs=torch.tensor([-2.0, -2.0, -2.0, -2.0]),
    )
    evaluation = HeldoutEvaluation(mask_token_id=mask, blocks=[block])
    assert evaluation.perplexity("mlm") == pytest.approx(math.exp(1.25))
    assert evaluation.perplexity("mlm", replaced_by_mask=True) == pytest.approx(math.exp(2.0))
    assert evaluation.perplexity("sbo", replaced_by_mask=False) == pytest.approx(math.exp(2.0))
    unigram = torch.full((10,), -5.0).index_fill(0, torch.tensor([5]), -1.0)
    assert evaluation.unigram_perplexity(unigram, replaced_by_mask=True) == pytest.approx(math.exp(3.0))
    assert evaluation.num_predictions == 4
    assert evaluation.accuracy("mlm") == 0.75
    assert evaluation.accuracy("mlm", replaced_by_mask=True) == 0.5
    assert evaluation.accuracy("mlm", replaced_by_mask=False) == 1.0
    assert evaluation.accuracy("sbo") == 0.25
    assert evaluation.constant_accuracy(5) == 0.25
    assert evaluation.constant_accuracy(5, replaced_by_mask=True) == 0.5
