"""
LUKE's masked entity prediction (the entity MLM of its pre-training, Yamada et al. 2020, sec. 3.4).

Some entities of the input are replaced by ``ENTITY_MASK``; the head predicts the original ids
from the encoder's entity states:

    logits = LayerNorm(GeLU(W h + b)) @ B^T + bias        h: entity state [H], W: H -> D_e

``B`` is the entity embedding matrix ``[V_e, D_e]`` of the encoder's ``EntityEmbeddings``
(shared, not copied: the decoder is tied to the input embeddings); ``bias`` is the head's own.
``masked_entity_loss`` is the mean cross-entropy over the masked entities only.

Shapes: `B` batch, `E` entities per example, `H` hidden size, `V_e` entity vocabulary size,
`N` masked entities of a batch.
"""

import torch

from spanbert_lib.common.modules.entity_aware.entity_embeddings import EntityEmbeddings


def masked_entity_loss(logits: torch.Tensor, labels: torch.Tensor, label_mask: torch.Tensor) -> torch.Tensor:
    """
    The mean cross-entropy over the masked entities.

    # Parameters

    logits : `torch.FloatTensor`
        `[B, E, V_e]`.
    labels : `torch.LongTensor`
        `[B, E]` the original ids.
    label_mask : `torch.BoolTensor`
        `[B, E]`; True: a masked entity to predict.

    # Returns

    `torch.Tensor`
        Scalar loss; 0 (still attached to the graph) when no entity is masked.
    """
    selected = label_mask.bool()
    if not bool(selected.any()):
        return logits.sum() * 0.0
    return torch.nn.functional.cross_entropy(logits[selected].float(), labels[selected])


class EntityPredictionHead(torch.nn.Module):
    """
    ``forward(entity_states [B, E, H]) -> logits [B, E, V_e]``; ``loss(entity_states, labels,
    label_mask)`` -> ``(logits, scalar loss)``.

    # Parameters

    entity_embeddings : `EntityEmbeddings`
        The encoder's entity embeddings; the decoder uses its ``entity_embeddings.weight`` (``B``).
    layer_norm_eps : `float`, optional (default = `1e-12`)
        Epsilon of the LayerNorm.
    """

    def __init__(self, entity_embeddings: EntityEmbeddings, layer_norm_eps: float = 1e-12) -> None:
        super().__init__()
        hidden_size = entity_embeddings.projection.out_features
        embedding_dim = entity_embeddings.entity_embeddings.embedding_dim
        self.dense = torch.nn.Linear(hidden_size, embedding_dim)
        self.activation = torch.nn.GELU()
        self.layer_norm = torch.nn.LayerNorm(embedding_dim, eps=layer_norm_eps)
        self.entity_embeddings = entity_embeddings.entity_embeddings
        self.bias = torch.nn.Parameter(torch.zeros(self.entity_embeddings.num_embeddings))

    def forward(self, entity_states: torch.Tensor) -> torch.Tensor:
        transformed = self.layer_norm(self.activation(self.dense(entity_states)))
        return torch.nn.functional.linear(transformed, self.entity_embeddings.weight, self.bias)

    def loss(self, entity_states: torch.Tensor, labels: torch.Tensor, label_mask: torch.Tensor):
        """
        Logits and loss of the masked entities only.

        # Parameters

        entity_states : `torch.Tensor`
            `[B, E, H]` the encoder's entity states.
        labels : `torch.Tensor`
            `[B, E]` the original ids.
        label_mask : `torch.Tensor`
            `[B, E]`; True: a masked entity to predict.

        # Returns

        `Tuple[torch.Tensor, torch.Tensor]`
            ``(logits [N, V_e], scalar loss)``.
        """
        selected = label_mask.bool()
        logits = self(entity_states[selected])  # [N, V_e]
        if logits.size(0) == 0:
            return logits, entity_states.sum() * 0.0 + self.bias.sum() * 0.0
        return logits, torch.nn.functional.cross_entropy(logits.float(), labels[selected])
