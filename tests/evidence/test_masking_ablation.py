"""evidence.masking_ablation: the corpus split, the fine-tune configs, one adaptation without SBO end to end, the
report from finished runs."""

import argparse
import json

import pytest

from evidence import external_data, masking_ablation
from tests import REPO_ROOT


def fake_data(root):
    """Two 'novels' (one with a LitBank document, one without) and a LitBank folder of three documents."""
    novels = root / "corpus" / "gutenberg"
    novels.mkdir(parents=True)
    paragraph = "The harbour was quiet and the ships were in . " * 6
    for name in ("11_first_novel.txt", "12_second_novel.txt"):
        (novels / name).write_text("\n\n".join(f"{index} {paragraph}" for index in range(40)), encoding="utf-8")
    litbank = root / "coref" / "litbank"
    litbank.mkdir(parents=True)
    for name in ("11_first_novel_brat.conll", "13_other_book_brat.conll", "14_another_brat.conll"):
        (litbank / name).write_text("", encoding="utf-8")
    return root


def test_corpus_holds_out_each_novels_tail_at_a_paragraph_and_names_the_litbank_overlap(tmp_path, monkeypatch):
    monkeypatch.setenv(external_data.EXTERNAL_DATA_ENV, str(fake_data(tmp_path / "data")))
    out = tmp_path / "out"
    corpus = masking_ablation.prepare_corpus(out, small=False)

    assert corpus["novels"] == ["11_first_novel.txt", "12_second_novel.txt"]
    assert corpus["litbank_documents_from_the_novels"] == ["11_first_novel_brat.conll"]
    assert corpus["their_litbank_split"] == {"11_first_novel_brat.conll": "train"}
    assert corpus["novels_without_a_litbank_document_here"] == ["12_second_novel.txt"]
    original = (tmp_path / "data" / "corpus" / "gutenberg" / "11_first_novel.txt").read_text()
    kept = (out / "corpus" / "train" / "11_first_novel.txt").read_text()
    heldout = (out / "corpus" / "heldout.txt").read_text()
    # the training part and the held-out tail are the novel, cut between paragraphs, nothing in both
    assert original.startswith(kept) and kept.endswith("ships were in . ")
    assert heldout.startswith(original[len(kept) :].strip())
    assert 0.03 < len(original[len(kept) :]) / len(original) < 0.08
    assert corpus["words"]["train"] + corpus["words"]["heldout"] == 2 * len(original.split())


@pytest.mark.parametrize("task", ["coref", "ner"])
def test_fine_tune_configs_are_the_shipped_ones_with_the_encoder_replaced(tmp_path, task):
    from allennlp.common import Params

    shipped = Params.from_file(str(REPO_ROOT / masking_ablation.TASKS[task].config)).as_dict(quiet=True)
    objective = masking_ablation.OBJECTIVES["whole_word"]
    path = masking_ablation.finetune_config(masking_ablation.TASKS[task], objective, tmp_path, small=False)
    config = json.loads(path.read_text())
    text = json.dumps(config)
    assert masking_ablation.BASE_ENCODER not in text
    encoder = str(tmp_path / "encoders" / "whole_word")
    assert text.count(encoder) == json.dumps(shipped).count(masking_ablation.BASE_ENCODER) >= 2
    # nothing else changed: same epochs, data, optimiser
    assert json.loads(text.replace(encoder, masking_ablation.BASE_ENCODER)) == shipped
    # the pretrained encoder itself, for "no adaptation"
    unchanged = masking_ablation.finetune_config(
        masking_ablation.TASKS[task], masking_ablation.OBJECTIVES["none"], tmp_path, small=False
    )
    assert json.loads(unchanged.read_text()) == shipped


def small_args(out, **more):
    return argparse.Namespace(
        out=str(out), steps=2, steps_per_point=1, batch_size=2, heldout_blocks=4, seeds=[1], small=True, **more
    )


@pytest.mark.slow
def test_an_adaptation_without_sbo_records_its_mask_curve_and_exports_the_encoder(tmp_path, monkeypatch):
    """The real MiniLM, two steps of whole-word MLM on the fixture corpus: held-out figures at every point on the
    same geometric masks, beside the unigram baseline; the encoder exported for the fine-tunes."""
    corpus = tmp_path / "out" / "corpus"
    (corpus / "train").mkdir(parents=True)
    fixture = REPO_ROOT / "fixtures" / "corpus"
    for name in ("story_the_cartographers_daughter.txt", "miscellany.txt"):
        (corpus / "train" / name).write_text((fixture / name).read_text())
    (corpus / "heldout.txt").write_text((fixture / "encyclopedia_tarrowby.txt").read_text())
    monkeypatch.chdir(REPO_ROOT)
    masking_ablation.adapt(masking_ablation.OBJECTIVES["whole_word"], small_args(tmp_path / "out"))

    record = json.loads((tmp_path / "out" / "adapt" / "whole_word" / "adaptation.json").read_text())
    assert [point["step"] for point in record["curve"]] == [0, 1, 2]
    assert record["overrides"]["model.sbo_weight"] == 0.0
    assert record["overrides"]["model.masker"]["type"] == "whole_word"
    for point in [*record["curve"], record["final"]]:
        assert point["masked_at_mask"] > 0
        assert 0.0 <= point["mlm_accuracy_at_mask"] <= 1.0 and point["mlm_perplexity_at_mask"] > 1
    # the baseline is measured on the same masks: the same at every point of the curve (the final figures use
    # more blocks and masking seeds)
    assert len({point["unigram_accuracy_at_mask"] for point in record["curve"]}) == 1
    assert record["final"]["masked_at_mask"] > record["curve"][0]["masked_at_mask"]
    # the random MLM head starts far above the unigram perplexity and two steps bring it down
    assert record["curve"][0]["mlm_perplexity_at_mask"] > record["curve"][-1]["mlm_perplexity_at_mask"]
    encoder = tmp_path / "out" / "encoders" / "whole_word"
    assert (encoder / "config.json").exists() and (encoder / "vocab.txt").exists()
    assert not (encoder / "sbo_head.safetensors").exists()


def test_report_tables_every_objective_from_finished_runs(tmp_path):
    out = tmp_path / "out"
    (out).mkdir()
    (out / "corpus.json").write_text(
        json.dumps(
            {
                "novels": ["11_first_novel.txt"],
                "words": {"train": 1000, "heldout": 50},
                "litbank_documents_from_the_novels": ["11_first_novel_brat.conll"],
                "novels_without_a_litbank_document_here": [],
            }
        )
    )
    point = {
        "step": 0,
        "mlm_accuracy_at_mask": 0.25,
        "mlm_perplexity_at_mask": 90.0,
        "unigram_accuracy_at_mask": 0.05,
        "unigram_perplexity_at_mask": 900.0,
    }
    adaptation = {"curve": [point], "final": point, "unigram_token": ",", "device": "CPU (2 cores)"}
    adaptation["overrides"] = {"trainer.learning_rate_scheduler.warmup_steps": 1}
    adaptation["training_wall_seconds"] = 120.0
    (out / "adapt" / "spanbert").mkdir(parents=True)
    (out / "adapt" / "spanbert" / "adaptation.json").write_text(json.dumps(adaptation))
    for seed, f1 in ((1, 0.30), (2, 0.40)):
        run = out / "finetune" / f"ner_spanbert_seed{seed}"
        run.mkdir(parents=True)
        metrics = {"best_validation_f1": f1, "best_validation_precision": 0.2, "best_validation_recall": 0.6}
        (run / "metrics.json").write_text(json.dumps(metrics | {"training_duration": "0:01:40.5"}))
    args = argparse.Namespace(
        out=str(out),
        results=str(out / "results.json"),
        steps=2,
        steps_per_point=1,
        batch_size=2,
        heldout_blocks=4,
        seeds=[1, 2],
    )
    results = masking_ablation.report(args)

    table = results["tables"]["ablation"]
    # no coreference run finished: its columns are left out
    assert table["columns"] == [
        "objective",
        "held-out MLM accuracy at [MASK] %",
        "perplexity at [MASK]",
        "span NER F1",
        "adaptation minutes",
        "seeds",
    ]
    rows = {row[0]: row for row in table["rows"]}
    assert rows["unigram baseline (always `,`)"][1:3] == [5.0, 900.0]
    assert rows["geometric spans, MLM + SBO (SpanBERT)"][1:] == [25.0, 90.0, "35.0 ± 7.1", 2.0, 2]
    assert rows["whole words, MLM"][1:] == [None] * 5
    assert (out / masking_ablation.PLOT.name).exists()


def test_adaptation_overrides_set_the_objective_the_budget_and_optional_early_stopping(tmp_path):
    args = argparse.Namespace(steps=600, steps_per_point=50, batch_size=16, patience=None)
    objective = masking_ablation.OBJECTIVES["spanbert"]
    overrides = masking_ablation.adaptation_overrides(objective, tmp_path, args)
    assert overrides["model.masker"] == masking_ablation.GEOMETRIC and overrides["model.sbo_weight"] == 1.0
    assert overrides["trainer.num_epochs"] * overrides["data_loader.batches_per_epoch"] == 600
    assert overrides["data_loader.batch_size"] == 16
    assert "trainer.patience" not in overrides
    args.patience = 3
    stopping = masking_ablation.adaptation_overrides(objective, tmp_path, args)
    assert stopping["trainer.patience"] == 3 and stopping["trainer.validation_metric"] == "+mlm_accuracy"
