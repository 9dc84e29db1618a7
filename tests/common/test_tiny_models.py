"""The committed tiny model is exactly what the deterministic builder writes, and loads offline."""

import json

import torch
from safetensors.torch import load_file
from transformers import AutoModel, AutoTokenizer

from spanbert_lib.common.testing.tiny_models import build_tiny_bert


def test_committed_tiny_bert_is_reproducible(tmp_path, tiny_bert_dir):
    rebuilt = build_tiny_bert(tmp_path / "tiny")
    assert (rebuilt / "vocab.txt").read_text() == (tiny_bert_dir / "vocab.txt").read_text()
    ours, committed = load_file(str(rebuilt / "model.safetensors")), load_file(str(tiny_bert_dir / "model.safetensors"))
    assert ours.keys() == committed.keys()
    assert all(torch.equal(ours[k], committed[k]) for k in ours)
    assert json.loads((rebuilt / "config.json").read_text())["hidden_size"] == 32


def test_tiny_bert_loads_with_auto_classes(tiny_bert_dir):
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert_dir))
    model = AutoModel.from_pretrained(str(tiny_bert_dir))
    encoded = tokenizer("Alice said the film was wonderful.", return_tensors="pt")
    assert tokenizer.convert_ids_to_tokens(encoded["input_ids"][0])[:3] == ["[CLS]", "Alice", "said"]
    assert tokenizer.unk_token_id not in encoded["input_ids"][0].tolist()
    hidden = model(**encoded).last_hidden_state
    assert hidden.shape == (1, encoded["input_ids"].shape[1], 32)
