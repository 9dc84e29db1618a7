"""export-encoder and masking-stats, in process and through the allennlp CLI."""

import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import load_archive
from transformers import AutoModel, AutoTokenizer

from spanbert_lib.commands.export_encoder import export_encoder
from spanbert_lib.commands.masking_stats import format_statistics, masking_statistics
from tests import REPO_ROOT, run_allennlp

CONFIG = REPO_ROOT / "fixtures" / "configs" / "pretraining" / "spanbert_tiny.jsonnet"
CORPUS = REPO_ROOT / "fixtures" / "corpus"


@pytest.fixture(scope="module")
def trained_archive(tmp_path_factory):
    serialization_dir = tmp_path_factory.mktemp("pretrained")
    train_model_from_file(str(CONFIG), str(serialization_dir))
    return serialization_dir / "model.tar.gz"


def test_export_round_trip_gives_identical_hidden_states(trained_archive, tmp_path):
    output = export_encoder(str(trained_archive), str(tmp_path / "exported"))
    original = load_archive(str(trained_archive)).model.encoder.eval()
    exported = AutoModel.from_pretrained(str(output)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(output))
    encoded = tokenizer(["Alice said the film was wonderful.", "The river is cold"], padding=True, return_tensors="pt")
    with torch.no_grad():
        expected = original(**encoded).last_hidden_state
        actual = exported(**encoded).last_hidden_state
    assert torch.equal(expected, actual)
    assert tokenizer.convert_ids_to_tokens(encoded["input_ids"][0])[1] == "Alice"


def test_export_writes_the_span_boundary_head_beside_the_encoder(trained_archive, tmp_path):
    from spanbert_lib.common.modules import load_span_boundary_head

    output = export_encoder(str(trained_archive), str(tmp_path / "exported"))
    assert (output / "sbo_head.safetensors").is_file()
    assert json.loads((output / "sbo_head_config.json").read_text()) == {
        "input_dim": 16,
        "position_embedding_dim": 8,
        "max_span_width": 32,
        "layer_norm_eps": 1e-12,
    }
    original = load_archive(str(trained_archive)).model.sbo_head.state_dict()
    exported = load_span_boundary_head(output).state_dict()
    assert original.keys() == exported.keys()
    assert all(torch.equal(original[name], exported[name]) for name in original)


def test_export_of_a_model_of_another_package_takes_the_transformer_inside_it(tmp_path):
    serialization_dir = tmp_path / "classifier"
    train_model_from_file(
        str(REPO_ROOT / "fixtures" / "configs" / "tiny_classifier.jsonnet"),
        str(serialization_dir),
        overrides=json.dumps({"trainer.num_epochs": 1}),
    )
    output = export_encoder(str(serialization_dir / "model.tar.gz"), str(tmp_path / "out"))
    assert AutoModel.from_pretrained(str(output)).config.hidden_size == 32  # fixtures/tiny_bert


def test_export_of_a_model_without_transformer_is_a_clear_error(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from allennlp.common.checks import ConfigurationError
    from allennlp.models import archival

    monkeypatch.setattr(archival, "load_archive", lambda *args, **kwargs: SimpleNamespace(model=torch.nn.Linear(2, 2)))
    with pytest.raises(ConfigurationError, match="model Linear holds no Hugging Face model to export"):
        export_encoder(str(tmp_path / "model.tar.gz"), str(tmp_path / "out"))


def test_masking_statistics_of_the_default_scheme(tmp_path):
    plot = tmp_path / "histogram.png"
    statistics = masking_statistics(str(CONFIG), str(CORPUS), seed=3, plot=str(plot))
    assert statistics["num_tokens"] > 10000
    assert abs(statistics["masked_fraction"] - 0.15) < 0.02
    assert 2.5 < statistics["mean_span_length_words"] < 5.0
    assert statistics["spans_start_at_word_start"] == 1.0
    assert set(statistics["replacement"]) == {"mask", "random", "keep"}
    assert sum(statistics["replacement"].values()) == pytest.approx(1.0)
    assert max(int(length) for length in statistics["span_length_histogram"]) <= 10
    assert plot.stat().st_size > 1000


def test_masking_statistics_from_reader_params_with_masker(tmp_path):
    reader_params = tmp_path / "reader.json"
    reader_params.write_text(
        json.dumps(
            {
                "type": "spanbert_pretraining_corpus",
                "model_name": "fixtures/tiny_bert",
                "max_sequence_length": 128,
                "masker": {"type": "subword"},
            }
        )
    )
    statistics = masking_statistics(str(reader_params), str(CORPUS), seed=0)
    assert set(statistics["span_length_histogram"]) == {1}  # subword masking: one-token units


@pytest.mark.parametrize("separator, fill_range", [("file", (0.9, 1.0)), ("blank_line", (0.1, 0.3))])
def test_masking_statistics_block_fill_rate_of_a_book(tmp_path, separator, fill_range):
    paragraph = "the harbour was in the town and the river ran to the sea ."  # 18 wordpieces
    book = tmp_path / "book.txt"
    book.write_text("\n\n".join([paragraph] * 40) + "\n", encoding="utf-8")
    reader_params = tmp_path / "reader.json"
    reader_params.write_text(
        json.dumps(
            {
                "type": "spanbert_pretraining_corpus",
                "model_name": "fixtures/tiny_bert",
                "max_sequence_length": 128,
                "document_separator": separator,
            }
        )
    )
    statistics = masking_statistics(str(reader_params), str(book), seed=0)
    # one 720-piece document in blocks of up to 126 + 2, or 40 blocks of 18 + 2
    expected_blocks = {"file": 6, "blank_line": 40}[separator]
    assert statistics["num_blocks"] == expected_blocks
    assert statistics["mean_block_length"] * expected_blocks == 40 * 18 + 2 * expected_blocks
    assert fill_range[0] <= statistics["block_fill_rate"] <= fill_range[1]
    assert "block fill rate" in format_statistics(statistics)


@pytest.mark.slow
def test_cli_commands(trained_archive, tmp_path):
    completed = run_allennlp(["masking-stats", str(CONFIG), str(CORPUS), "--json"])
    statistics = json.loads(completed.stdout.strip().splitlines()[-1])
    assert {
        "masked_fraction",
        "mean_span_length_words",
        "span_length_histogram",
        "replacement",
        "spans_start_at_word_start",
        "num_tokens",
    } <= set(statistics)
    run_allennlp(["export-encoder", str(trained_archive), str(tmp_path / "hf")])
    assert (tmp_path / "hf" / "config.json").exists() and (tmp_path / "hf" / "tokenizer.json").exists()
    assert (tmp_path / "hf" / "sbo_head.safetensors").exists()


@pytest.mark.slow
def test_distributed_training_on_cpu_with_two_processes(tmp_path):
    """allennlp's DDP (gloo, two CPU workers): each worker reads its own shard and training completes."""
    overrides = json.dumps({"distributed": {"cuda_devices": [-1, -1]}, "data_loader.batch_size": 8})
    run_allennlp(["train", str(CONFIG), "-s", str(tmp_path / "ddp"), "-o", overrides])
    metrics = json.loads((tmp_path / "ddp" / "metrics.json").read_text())
    assert "peak_worker_1_memory_MB" in metrics and metrics["training_loss"] > 0
    assert (tmp_path / "ddp" / "model.tar.gz").exists()
