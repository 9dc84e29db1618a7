"""
Span NER with the entity-aware attention gives the outputs (and gradients) of the implementation before
it was sped up (commit e7f7b08), kept here as the reference: CoNLL and LitBank fixtures, several passes
per sentence, padded words and entities, distinct extra queries so that every block of the attention counts.
"""

import json
import math

import pytest
import torch
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary

from spanbert_lib.common.modules.entity_aware.entity_aware_attention import EntityAwareSelfAttention
from tests import REPO_ROOT
from tests.entity_model_testing import build_model, tensors_of

CONFIG = REPO_ROOT / "fixtures" / "configs" / "ner" / "span_ner_tiny.jsonnet"
DATA = {
    "conll": ({}, REPO_ROOT / "fixtures" / "ner" / "conll2003_iob2.txt"),
    "litbank": (
        {"dataset_reader.type": "spanbert_span_ner_litbank", "dataset_reader.max_span_width": 8},
        REPO_ROOT / "fixtures" / "ner" / "litbank",
    ),
}


def reference_attention(self, self_attention, hidden, num_words, key_mask):
    """``EntityAwareSelfAttention.forward`` as of commit e7f7b08."""
    batch_size, length, _ = hidden.shape
    keys = self._heads(self_attention.key(hidden))
    values = self._heads(self_attention.value(hidden))
    if self.entity_aware and length > num_words:
        words, entities = hidden[:, :num_words], hidden[:, num_words:]
        word_queries = torch.cat(
            [self._heads(self_attention.query(words)), self._heads(self.word_to_entity_query(words))], dim=-1
        )
        entity_queries = torch.cat(
            [self._heads(self.entity_to_word_query(entities)), self._heads(self.entity_to_entity_query(entities))],
            dim=-1,
        )
        queries = torch.cat([word_queries, entity_queries], dim=2)
        keys = torch.cat(
            [
                torch.nn.functional.pad(keys[:, :, :num_words], (0, self.head_size)),
                torch.nn.functional.pad(keys[:, :, num_words:], (self.head_size, 0)),
            ],
            dim=2,
        )
    else:
        queries = self._heads(self_attention.query(hidden))
    if queries.size(-1) != values.size(-1):
        values = torch.nn.functional.pad(values, (0, self.head_size))
    attn_mask = None if key_mask is None else key_mask[:, None, None, :].bool()
    dropout = self_attention.dropout.p if self.training else 0.0
    context = torch.nn.functional.scaled_dot_product_attention(
        queries, keys, values, attn_mask=attn_mask, dropout_p=dropout, scale=1.0 / math.sqrt(self.head_size)
    )
    context = context[..., : self.head_size]
    return context.transpose(1, 2).reshape(batch_size, length, self.num_heads * self.head_size)


def model_and_batch(data: str, entity_aware: bool):
    reader_changes, path = DATA[data]
    params = Params.from_file(str(CONFIG), params_overrides=json.dumps(reader_changes))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(str(path)))[:6]
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(0)
    encoder = {"type": "entity_aware_transformer", "model_name": "fixtures/tiny_bert"}
    encoder["entity_aware_attention"] = entity_aware
    model = build_model(CONFIG, vocab, max_entities_per_pass=8, encoder=encoder)
    with torch.no_grad():
        for attention in model.encoder.self_attentions:
            for extra in attention.extra_queries():
                extra.weight.add_(torch.randn_like(extra.weight) * 0.3)
                extra.bias.add_(torch.randn_like(extra.bias) * 0.3)
    return model, tensors_of(instances, vocab)


def run(model, tensors, reference: bool, monkeypatch):
    with monkeypatch.context() as patch:
        if reference:
            patch.setattr(EntityAwareSelfAttention, "forward", reference_attention)
        model.zero_grad()
        output = model(**tensors)
        output["loss"].backward()
        gradients = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    return output, gradients


@pytest.mark.parametrize("data", sorted(DATA))
@pytest.mark.parametrize("entity_aware", [True, False])
def test_span_ner_outputs_and_gradients_equal_the_previous_implementation(data, entity_aware, monkeypatch):
    model, tensors = model_and_batch(data, entity_aware)
    spans = (tensors["spans"][..., 0] >= 0).sum(dim=1)
    assert int(spans.max()) > 8 and int(spans.min()) < int(spans.max())  # several passes, padded entities
    assert not bool(tensors["tokens"]["tokens"]["mask"].all())  # padded words
    expected, expected_gradients = run(model, tensors, True, monkeypatch)
    actual, gradients = run(model, tensors, False, monkeypatch)
    mask = expected["span_mask"]
    torch.testing.assert_close(actual["logits"][mask], expected["logits"][mask], atol=1e-5, rtol=1e-4)
    assert torch.equal(actual["predicted_labels"][mask], expected["predicted_labels"][mask])
    assert actual["entities"] == expected["entities"]
    assert gradients.keys() == expected_gradients.keys()
    for name, gradient in gradients.items():
        torch.testing.assert_close(gradient, expected_gradients[name], atol=1e-5, rtol=1e-3, msg=name)
