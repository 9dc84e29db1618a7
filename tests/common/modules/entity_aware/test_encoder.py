"""The entity-aware encoder on the tiny BERT: equivalence with HF, attention by hand, masking, loading."""

import math

import pytest
import torch
import transformers
from allennlp.common import Params

from spanbert_lib.common.modules.entity_aware import (
    ENTITY_HEAD,
    ENTITY_MASK,
    ENTITY_PAD,
    ENTITY_TAIL,
    EntityAwareEncoder,
    EntityAwareSelfAttention,
    EntityAwareTransformer,
)


@pytest.fixture(scope="module")
def hf_model(tiny_bert_dir):
    return transformers.AutoModel.from_pretrained(tiny_bert_dir).eval()


def make_encoder(tiny_bert_dir, seed=0, **kwargs):
    torch.manual_seed(seed)
    return EntityAwareTransformer(str(tiny_bert_dir), **kwargs).eval()


@pytest.fixture(scope="module")
def encoder(tiny_bert_dir):
    return make_encoder(tiny_bert_dir, entity_vocab_size=10)


def batch():
    """Two examples: 9 and 6 wordpieces; 3 and 1 entities (entity padding in the second)."""
    generator = torch.Generator().manual_seed(1)
    token_ids = torch.randint(100, 500, (2, 9), generator=generator)
    token_ids[:, 0] = 2
    mask = torch.ones(2, 9, dtype=torch.bool)
    mask[1, 6:] = False
    token_ids[1, 6:] = 0
    entity_ids = torch.tensor([[ENTITY_HEAD, ENTITY_TAIL, 7], [ENTITY_MASK, ENTITY_PAD, ENTITY_PAD]])
    entity_spans = torch.tensor([[[1, 3], [5, 5], [6, 8]], [[2, 4], [0, 0], [0, 0]]])
    return token_ids, mask, entity_ids, entity_spans


def test_without_entities_the_words_are_the_plain_models(encoder, hf_model):
    token_ids, mask, _, _ = batch()
    expected = hf_model(input_ids=token_ids, attention_mask=mask.long()).last_hidden_state
    words, entities = encoder(token_ids, mask)
    assert entities is None
    assert torch.allclose(words, expected, atol=1e-5)
    type_ids = torch.zeros_like(token_ids)
    type_ids[:, 4:] = 1
    words, entities = encoder(
        token_ids,
        mask,
        type_ids=type_ids,
        entity_ids=token_ids.new_zeros(2, 0),
        entity_spans=token_ids.new_zeros(2, 0, 2),
    )
    expected = hf_model(input_ids=token_ids, attention_mask=mask.long(), token_type_ids=type_ids).last_hidden_state
    assert torch.allclose(words, expected, atol=1e-5)
    assert entities.shape == (2, 0, 32)
    assert encoder.get_output_dim() == 32
    assert encoder.word_embeddings is encoder.transformer.embeddings.word_embeddings


def test_extra_queries_are_copies_of_the_query_after_loading(encoder, hf_model):
    for hf_layer, attention in zip(hf_model.encoder.layer, encoder.self_attentions):
        query = hf_layer.attention.self.query
        for extra in (attention.word_to_entity_query, attention.entity_to_word_query, attention.entity_to_entity_query):
            assert torch.equal(extra.weight, query.weight) and torch.equal(extra.bias, query.bias)
            assert extra.weight.data_ptr() != query.weight.data_ptr()  # copies, not shared


def test_four_query_attention_by_hand(encoder):
    torch.manual_seed(3)
    attention = EntityAwareSelfAttention(encoder.layers[0].attention.self).eval()
    for extra in attention.extra_queries():
        torch.nn.init.normal_(extra.weight, std=0.3)
    module = encoder.layers[0].attention.self
    num_words, num_entities, heads, size = 5, 3, 2, 16
    hidden = torch.randn(2, num_words + num_entities, 32)
    key_mask = torch.ones(2, num_words + num_entities, dtype=torch.bool)
    key_mask[1, 3:5] = False  # padded words
    key_mask[1, 7] = False  # a padded entity
    context = attention(module, hidden, num_words, key_mask)
    assert context.shape == (2, 8, 32)

    def query_for(i, j):
        word_i, word_j = i < num_words, j < num_words
        return {
            (True, True): module.query,
            (True, False): attention.word_to_entity_query,
            (False, True): attention.entity_to_word_query,
            (False, False): attention.entity_to_entity_query,
        }[(word_i, word_j)]

    keys, values = module.key(hidden), module.value(hidden)
    for b in range(2):
        for h in range(heads):
            part = slice(h * size, (h + 1) * size)
            for i in range(num_words + num_entities):
                scores = torch.stack(
                    [
                        query_for(i, j)(hidden[b, i])[part] @ keys[b, j, part] / math.sqrt(size)
                        for j in range(num_words + num_entities)
                    ]
                )
                scores = scores.masked_fill(~key_mask[b], float("-inf"))
                expected = torch.softmax(scores, dim=0) @ values[b, :, part]
                assert torch.allclose(context[b, i, part], expected, atol=1e-5)


def test_entity_aware_and_ordinary_attention(tiny_bert_dir):
    aware = make_encoder(tiny_bert_dir, entity_vocab_size=10, entity_aware_attention=True)
    plain = make_encoder(tiny_bert_dir, entity_vocab_size=10, entity_aware_attention=False)
    assert len(list(plain.self_attentions.parameters())) == 0
    token_ids, mask, entity_ids, entity_spans = batch()
    inputs = dict(entity_ids=entity_ids, entity_spans=entity_spans)
    aware_words, aware_entities = aware(token_ids, mask, **inputs)
    plain_words, plain_entities = plain(token_ids, mask, **inputs)
    assert aware_words.shape == plain_words.shape == (2, 9, 32)
    assert aware_entities.shape == plain_entities.shape == (2, 3, 32)
    # identical weights (copied queries): identical outputs
    assert torch.allclose(aware_words, plain_words, atol=1e-5)
    assert torch.allclose(aware_entities, plain_entities, atol=1e-5)
    with torch.no_grad():
        for attention in aware.self_attentions:
            for extra in attention.extra_queries():
                extra.weight.add_(torch.randn_like(extra.weight) * 0.5)
    aware_words, aware_entities = aware(token_ids, mask, **inputs)
    assert not torch.allclose(aware_words[mask], plain_words[mask], atol=1e-3)
    assert not torch.allclose(aware_entities, plain_entities, atol=1e-3)


def test_entities_change_the_words(encoder, hf_model):
    token_ids, mask, entity_ids, entity_spans = batch()
    words, entities = encoder(token_ids, mask, entity_ids=entity_ids, entity_spans=entity_spans)
    expected = hf_model(input_ids=token_ids, attention_mask=mask.long()).last_hidden_state
    assert not torch.allclose(words[mask], expected[mask], atol=1e-3)
    assert torch.equal(entities[1, 1:], torch.zeros(2, 32))  # padded entities are zero


def test_padding_changes_no_real_output(tiny_bert_dir):
    encoder = make_encoder(tiny_bert_dir, entity_vocab_size=10)
    with torch.no_grad():  # distinct extra queries, so that every block matters
        for attention in encoder.self_attentions:
            for extra in attention.extra_queries():
                extra.weight.add_(torch.randn_like(extra.weight) * 0.5)
    token_ids, mask, entity_ids, entity_spans = batch()
    entity_mask = entity_ids != ENTITY_PAD
    words, entities = encoder(
        token_ids, mask, entity_ids=entity_ids, entity_spans=entity_spans, entity_mask=entity_mask
    )
    for b in range(2):
        length, count = int(mask[b].sum()), int(entity_mask[b].sum())
        alone_words, alone_entities = encoder(
            token_ids[b : b + 1, :length],
            None,
            entity_ids=entity_ids[b : b + 1, :count],
            entity_spans=entity_spans[b : b + 1, :count],
        )
        assert torch.allclose(words[b, :length], alone_words[0], atol=1e-5)
        assert torch.allclose(entities[b, :count], alone_entities[0], atol=1e-5)
    # padded entities with garbage ids/spans still change nothing
    garbage_ids = entity_ids.masked_fill(~entity_mask, 9)
    garbage_spans = entity_spans.masked_fill(~entity_mask.unsqueeze(-1), 7)
    words2, entities2 = encoder(
        token_ids, mask, entity_ids=garbage_ids, entity_spans=garbage_spans, entity_mask=entity_mask
    )
    assert torch.allclose(words2[mask], words[mask], atol=1e-6)
    assert torch.allclose(entities2, entities, atol=1e-6)


def test_gradients_reach_the_new_parameters(tiny_bert_dir):
    encoder = make_encoder(tiny_bert_dir, entity_vocab_size=10).train()
    token_ids, mask, entity_ids, entity_spans = batch()
    words, entities = encoder(token_ids, mask, entity_ids=entity_ids, entity_spans=entity_spans)
    (words.pow(2).sum() + entities.pow(3).sum()).backward()
    new = [
        encoder.entity_embeddings.entity_embeddings.weight,
        encoder.entity_embeddings.projection.weight,
        encoder.entity_embeddings.layer_norm.weight,
    ]
    for attention in encoder.self_attentions:
        new += [extra.weight for extra in attention.extra_queries()]
    for parameter in new:
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0
    used = encoder.entity_embeddings.entity_embeddings.weight.grad
    assert used[[ENTITY_HEAD, ENTITY_TAIL, 7, ENTITY_MASK]].abs().sum(-1).gt(0).all()
    assert used[[ENTITY_PAD, 6, 8, 9]].abs().sum() == 0


def test_frozen_transformer_still_trains_the_new_parameters(tiny_bert_dir):
    encoder = make_encoder(tiny_bert_dir, train_parameters=False)
    assert not any(p.requires_grad for p in encoder.transformer.parameters())
    trainable = {name for name, p in encoder.named_parameters() if p.requires_grad}
    assert "entity_embeddings.entity_embeddings.weight" in trainable
    assert "self_attentions.1.entity_to_entity_query.weight" in trainable


def test_from_params_with_the_registered_name(tiny_bert_dir):
    for params in ({"type": "entity_aware_transformer"}, {}):  # also the default implementation
        encoder = EntityAwareEncoder.from_params(
            Params(
                {
                    **params,
                    "model_name": str(tiny_bert_dir),
                    "entity_vocab_size": 12,
                    "entity_embedding_dim": 8,
                    "load_weights": False,
                }
            )
        )
        assert isinstance(encoder, EntityAwareTransformer)
        assert encoder.entity_vocab_size == 12
        assert encoder.entity_embeddings.entity_embeddings.weight.shape == (12, 8)


def test_state_dict_round_trip(tiny_bert_dir, tmp_path):
    encoder = make_encoder(tiny_bert_dir, entity_vocab_size=10)
    with torch.no_grad():
        for attention in encoder.self_attentions:
            for extra in attention.extra_queries():
                extra.weight.add_(0.1)
    torch.save(encoder.state_dict(), tmp_path / "weights.th")
    restored = make_encoder(tiny_bert_dir, seed=5, entity_vocab_size=10, load_weights=False)
    restored.load_state_dict(torch.load(tmp_path / "weights.th"))
    token_ids, mask, entity_ids, entity_spans = batch()
    expected = encoder(token_ids, mask, entity_ids=entity_ids, entity_spans=entity_spans)
    actual = restored(token_ids, mask, entity_ids=entity_ids, entity_spans=entity_spans)
    assert torch.equal(expected[0], actual[0]) and torch.equal(expected[1], actual[1])
    # the shared position embeddings are the HF model's own module
    assert restored.entity_embeddings.position_embeddings is restored.transformer.embeddings.position_embeddings


def test_roberta_numbering_of_positions(tmp_path):
    config = transformers.RobertaConfig(
        vocab_size=50,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=40,
        pad_token_id=1,
    )
    config.save_pretrained(tmp_path)
    encoder = EntityAwareTransformer(str(tmp_path), load_weights=False, entity_embedding_dim=4).eval()
    assert encoder.entity_embeddings.position_offset == 2
    reference = transformers.RobertaModel(config, add_pooling_layer=False).eval()
    reference.load_state_dict(encoder.transformer.state_dict())
    token_ids = torch.tensor([[0, 10, 11, 12, 2, 1, 1]])
    mask = token_ids != 1
    words, _ = encoder(token_ids, mask)
    assert torch.allclose(
        words[mask], reference(token_ids, attention_mask=mask.long()).last_hidden_state[mask], atol=1e-5
    )
    table = encoder.transformer.embeddings.position_embeddings.weight
    mean = encoder.entity_embeddings.span_position_embeddings(torch.tensor([[[1, 3]]]), torch.tensor([[True]]), 7)
    assert torch.allclose(mean[0, 0], table[3:6].mean(0), atol=1e-6)


def test_unsupported_models_are_refused(tmp_path):
    config = transformers.DistilBertConfig(vocab_size=50, dim=16, n_layers=1, n_heads=2, hidden_dim=32)
    config.save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="BERT/RoBERTa-style model.*distilbert"):
        EntityAwareTransformer(str(tmp_path), load_weights=False)


def test_entities_need_spans(encoder):
    token_ids, mask, entity_ids, _ = batch()
    with pytest.raises(ValueError, match="entity_spans"):
        encoder(token_ids, mask, entity_ids=entity_ids)
