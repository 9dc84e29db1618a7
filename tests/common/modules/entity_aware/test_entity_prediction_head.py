"""The masked entity prediction head: tied decoder, loss on masked entities only."""

import math

import torch

from spanbert_lib.common.modules.entity_aware import EntityEmbeddings, EntityPredictionHead, masked_entity_loss


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def make_head():
    torch.manual_seed(0)
    embeddings = EntityEmbeddings(7, torch.nn.Embedding(10, 6), None, entity_embedding_dim=4)
    head = EntityPredictionHead(embeddings)
    for parameter in [head.bias, head.layer_norm.weight, head.layer_norm.bias]:
        torch.nn.init.normal_(parameter)
    return embeddings, head


def test_logits_use_the_entity_embedding_matrix():
    embeddings, head = make_head()
    assert head.entity_embeddings.weight is embeddings.entity_embeddings.weight  # tied, not copied
    states = torch.randn(2, 3, 6)
    logits = head(states)
    assert logits.shape == (2, 3, 7)
    h = gelu(states[1, 2] @ head.dense.weight.T + head.dense.bias)
    h = (h - h.mean()) / torch.sqrt(
        h.var(unbiased=False) + head.layer_norm.eps
    ) * head.layer_norm.weight + head.layer_norm.bias
    assert torch.allclose(logits[1, 2], embeddings.entity_embeddings.weight @ h + head.bias, atol=1e-5)


def test_loss_counts_the_masked_entities_only():
    _, head = make_head()
    states = torch.randn(2, 3, 6)
    labels = torch.tensor([[6, 3, 0], [2, 5, 1]])
    label_mask = torch.tensor([[True, False, False], [False, True, True]])
    logits = head(states)
    by_hand = (
        -(
            torch.log_softmax(logits[0, 0], -1)[6]
            + torch.log_softmax(logits[1, 1], -1)[5]
            + torch.log_softmax(logits[1, 2], -1)[1]
        )
        / 3
    )
    assert torch.allclose(masked_entity_loss(logits, labels, label_mask), by_hand, atol=1e-6)
    selected_logits, loss = head.loss(states, labels, label_mask)
    assert selected_logits.shape == (3, 7)
    assert torch.allclose(loss, by_hand, atol=1e-6)
    loss.backward()
    assert head.bias.grad.abs().sum() > 0


def test_no_masked_entities_gives_a_zero_loss_with_a_graph():
    _, head = make_head()
    states = torch.randn(1, 2, 6, requires_grad=True)
    nothing = torch.zeros(1, 2, dtype=torch.bool)
    loss = masked_entity_loss(head(states), torch.zeros(1, 2, dtype=torch.long), nothing)
    assert loss.item() == 0.0 and loss.requires_grad
    _, loss = head.loss(states, torch.zeros(1, 2, dtype=torch.long), nothing)
    assert loss.item() == 0.0
    loss.backward()
