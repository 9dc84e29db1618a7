"""
Masked-language-model heads whose output layer is tied to the input embeddings.

Shapes: `...` any leading dimensions, `H` hidden size, `V` vocabulary size.
"""

import torch


class TiedVocabularyDecoder(torch.nn.Module):
    """
    logits = hidden @ E^T + b, with E the encoder's input embedding matrix (shared, not
    copied) and a bias of its own: `[..., H]` -> `[..., V]`.

    # Parameters

    embedding : `torch.nn.Embedding`
        The encoder's input embeddings `[V, H]`.
    """

    def __init__(self, embedding: torch.nn.Embedding) -> None:
        super().__init__()
        self.embedding = embedding
        self.bias = torch.nn.Parameter(torch.zeros(embedding.num_embeddings))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.linear(hidden, self.embedding.weight, self.bias)


class MaskedLanguageModelHead(torch.nn.Module):
    """
    BERT's MLM head: transform (dense -> GeLU -> LayerNorm) then the tied decoder, hidden
    states `[..., H]` -> logits `[..., V]`.

    # Parameters

    embedding : `torch.nn.Embedding`
        The encoder's input embeddings `[V, H]`, shared with the decoder.
    layer_norm_eps : `float`, optional (default = `1e-12`)
        Epsilon of the LayerNorm.
    """

    def __init__(self, embedding: torch.nn.Embedding, layer_norm_eps: float = 1e-12) -> None:
        super().__init__()
        hidden_size = embedding.embedding_dim
        self.dense = torch.nn.Linear(hidden_size, hidden_size)
        self.activation = torch.nn.GELU()
        self.layer_norm = torch.nn.LayerNorm(hidden_size, eps=layer_norm_eps)
        self.decoder = TiedVocabularyDecoder(embedding)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.layer_norm(self.activation(self.dense(hidden))))
