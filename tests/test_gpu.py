"""
On a CUDA device (tests marked ``gpu``, skipped without one): every fixture config trains there and its
archive predicts there what it predicts on the CPU; the main job's chain (pre-train MLM + SBO, export, reuse the
span boundary head in span NER) runs there; mixed precision trains; bfloat16 prediction runs; the interactive
predictors answer from a GPU archive.
"""

import json
import math
from pathlib import Path
from typing import Any, Dict, List

import allennlp_models.pair_classification  # noqa: F401  (registers the "snli" reader)
import numpy
import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import Archive, load_archive
from allennlp.predictors import Predictor

from spanbert_lib.commands.export_encoder import export_encoder
from tests import REPO_ROOT
from tests.fixture_configs import CONFIGS_DIR, STANDALONE_CONFIGS

ON_GPU = {"trainer.cuda_device": 0, "trainer.num_epochs": 1}

pytestmark = pytest.mark.gpu


def train(config: Path, serialization_dir: Path, **overrides: Any) -> Path:
    """Trains ``config`` for one epoch on CUDA device 0; returns its model.tar.gz."""
    train_model_from_file(str(config), str(serialization_dir), overrides=json.dumps({**ON_GPU, **overrides}))
    return serialization_dir / "model.tar.gz"


def validation_instances(archive: Archive, limit: int = 4) -> List:
    reader = archive.validation_dataset_reader
    return list(reader.read(archive.config["validation_data_path"]))[:limit]


def numeric_array(value: Any):
    """``value`` as a numpy array of numbers, or None (text, ragged lists such as clusters)."""
    try:
        array = numpy.asarray(value)
    except ValueError:
        return None
    return array if array.dtype.kind in "biuf" else None


def assert_close(gpu_value: Any, cpu_value: Any, where: str) -> None:
    """Floats (also inside lists and dicts, such as QA's ``n_best``) agree to float32 rounding, the kernels
    differing; everything else is equal."""
    if isinstance(gpu_value, dict):
        assert gpu_value.keys() == cpu_value.keys(), where
        for key in gpu_value:
            assert_close(gpu_value[key], cpu_value[key], f"{where}.{key}")
        return
    gpu_array, cpu_array = numeric_array(gpu_value), numeric_array(cpu_value)
    if gpu_array is not None and gpu_array.dtype.kind == "f":
        numpy.testing.assert_allclose(gpu_array, cpu_array, rtol=1e-3, atol=1e-4, err_msg=where)
    elif gpu_array is not None:
        assert numpy.array_equal(gpu_array, cpu_array), where
    elif isinstance(gpu_value, (list, tuple)):
        assert len(gpu_value) == len(cpu_value), where
        for index, (gpu_item, cpu_item) in enumerate(zip(gpu_value, cpu_value)):
            assert_close(gpu_item, cpu_item, f"{where}[{index}]")
    else:
        assert gpu_value == cpu_value, where


def assert_same_outputs(on_gpu: List[Dict[str, Any]], on_cpu: List[Dict[str, Any]]) -> None:
    """The outputs agree (:func:`assert_close`) except the order of a coreference span's antecedent candidates,
    arbitrary among the masked ones (the decoded clusters are compared)."""
    assert len(on_gpu) == len(on_cpu)
    for index, (gpu_output, cpu_output) in enumerate(zip(on_gpu, on_cpu)):
        assert gpu_output.keys() == cpu_output.keys()
        for key in gpu_output.keys() - {"antecedent_indices", "predicted_antecedents"}:
            assert_close(gpu_output[key], cpu_output[key], f"instance {index}: {key}")


@pytest.mark.parametrize("config", STANDALONE_CONFIGS)
def test_trains_on_the_gpu_and_predicts_as_on_the_cpu(config, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)  # the configs name their data relative to the repository
    archive_file = train(CONFIGS_DIR / config, tmp_path / "run")
    on_gpu = load_archive(str(archive_file), cuda_device=0)
    on_cpu = load_archive(str(archive_file), cuda_device=-1)
    assert all(parameter.is_cuda for parameter in on_gpu.model.parameters())
    # Each archive indexes its own instances: a transformer indexer adds its vocabulary to the first
    # Vocabulary that indexes with it, and the two archives hold two.
    outputs = {}
    for name, archive in (("gpu", on_gpu), ("cpu", on_cpu)):
        instances = validation_instances(archive)
        assert instances, f"{config}: no validation instances"
        archive.model.eval()
        outputs[name] = archive.model.forward_on_instances(instances)
    assert_same_outputs(outputs["gpu"], outputs["cpu"])


def test_main_job_chain_pretrains_exports_and_reuses_the_head_on_the_gpu(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    pretraining = tmp_path / "pretraining"
    archive_file = train(CONFIGS_DIR / "pretraining" / "spanbert_tiny.jsonnet", pretraining)
    metrics = json.loads((pretraining / "metrics.json").read_text())
    assert math.isfinite(metrics["training_loss"])
    exported = export_encoder(str(archive_file), str(tmp_path / "exported"))
    reuse = {"model.encoder.model_name": str(exported), "model.span_extractor.archive": str(exported)}
    span_ner = train(CONFIGS_DIR / "ner" / "span_ner_pretrained_sbo_tiny.jsonnet", tmp_path / "span_ner", **reuse)
    archive = load_archive(str(span_ner), cuda_device=0)
    assert all(parameter.is_cuda for parameter in archive.model.parameters())


def test_mixed_precision_training(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    serialization_dir = tmp_path / "amp"
    train(CONFIGS_DIR / "coref" / "spanbert_coref_tiny.jsonnet", serialization_dir, **{"trainer.use_amp": True})
    metrics = json.loads((serialization_dir / "metrics.json").read_text())
    assert math.isfinite(metrics["training_loss"])


def test_bfloat16_coreference_prediction(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    archive_file = train(CONFIGS_DIR / "coref" / "spanbert_coref_tiny.jsonnet", tmp_path / "run")
    bf16 = {"model.encoder.token_embedders.tokens.autocast_dtype": "bfloat16", "model.pair_product_dtype": "bfloat16"}
    fp32 = load_archive(str(archive_file), cuda_device=0)
    bfloat16 = load_archive(str(archive_file), cuda_device=0, overrides=json.dumps(bf16))
    dtypes = []
    transformer = bfloat16.model.encoder.token_embedder_tokens.segment_encoder.transformer_model
    first_linear = next(module for module in transformer.modules() if isinstance(module, torch.nn.Linear))
    first_linear.register_forward_hook(lambda module, args, output: dtypes.append(output.dtype))
    reference, outputs = [], []
    for archive, collected in ((fp32, reference), (bfloat16, outputs)):
        archive.model.eval()
        collected.extend(archive.model.forward_on_instances(validation_instances(archive)))
    assert dtypes and set(dtypes) == {torch.bfloat16}
    for fp32_output, bf16_output in zip(reference, outputs):
        assert fp32_output.keys() == bf16_output.keys()
        assert bf16_output["top_spans"].shape == fp32_output["top_spans"].shape


@pytest.mark.parametrize(
    "config, predictor, inputs",
    [
        (
            "coref/spanbert_coref_tiny.jsonnet",
            "spanbert_coref",
            {
                "document": [
                    ["Alice", "met", "Bob", "in", "Paris", "."],
                    ["She", "told", "him", "the", "city", "was", "hers", "."],
                ]
            },
        ),
        (
            "qa/squad11_tiny.jsonnet",
            "spanbert_qa",
            {"question": "Where did Alice go?", "passage": "Alice went to Paris in the spring."},
        ),
    ],
)
def test_demo_predictors_answer_from_a_gpu_archive(config, predictor, inputs, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    archive_file = str(train(CONFIGS_DIR / config, tmp_path / "run"))
    answers = [
        Predictor.from_archive(load_archive(archive_file, cuda_device=device), predictor).predict_json(inputs)
        for device in (0, -1)
    ]
    assert answers[0] and json.dumps(answers[0])
    assert_same_outputs([answers[0]], [answers[1]])
