"""
``allennlp export-encoder`` on a tiny trained archive of each task: ``huggingface_encoder(model)`` finds the
Hugging Face model inside every model's ``encoder``, and the exported directory loads with ``AutoModel`` /
``AutoTokenizer`` and gives the same hidden states.
"""

import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import load_archive
from transformers import AutoModel, AutoTokenizer, PreTrainedModel

from spanbert_lib.commands.export_encoder import export_encoder
from spanbert_lib.common.transformers_encoder import huggingface_encoder
from tests import REPO_ROOT, TINY_BERT_DIR

CONFIGS = REPO_ROOT / "fixtures" / "configs"
TASK_CONFIGS = {
    "coref": "coref/spanbert_coref_tiny.jsonnet",
    "qa": "qa/squad11_tiny.jsonnet",
    "relation": "relation/tiny_relation_classifier.jsonnet",
    "entity_pair_relation": "relation/tiny_entity_pair_classifier.jsonnet",
    "span_ner": "ner/span_ner_tiny.jsonnet",
    "entity_typing": "entity_typing/entity_typing_tiny.jsonnet",
}


@pytest.fixture(scope="module", params=sorted(TASK_CONFIGS))
def trained_archive(request, tmp_path_factory):
    serialization_dir = tmp_path_factory.mktemp(request.param)
    train_model_from_file(
        str(CONFIGS / TASK_CONFIGS[request.param]),
        str(serialization_dir),
        overrides=json.dumps({"trainer.num_epochs": 1}),
    )
    return serialization_dir / "model.tar.gz"


def test_exported_encoder_gives_the_hidden_states_of_the_model(trained_archive, tmp_path):
    output = export_encoder(str(trained_archive), str(tmp_path / "exported"))
    original = huggingface_encoder(load_archive(str(trained_archive)).model)
    assert isinstance(original, PreTrainedModel)
    exported = AutoModel.from_pretrained(str(output)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(output))
    encoded = tokenizer(
        ["Anna told Ben that she would call him.", "The river is cold"], padding=True, return_tensors="pt"
    )
    with torch.no_grad():
        expected = original.eval()(**encoded).last_hidden_state
        actual = exported(**encoded).last_hidden_state
    assert expected.shape == actual.shape
    assert torch.equal(expected, actual)
    # the tokenizer the encoder was trained with was written beside it
    assert tokenizer.get_vocab() == AutoTokenizer.from_pretrained(str(TINY_BERT_DIR)).get_vocab()
