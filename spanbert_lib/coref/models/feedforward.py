"""
A scoring feed-forward network (ReLU hidden layers, then a linear layer to one score) whose
input is a concatenation of named parts, so the first layer can be applied part by part.

The first layer is linear: ``W [a; b; c] = W_a a + W_b b + W_c c``. Computing ``W_a a`` once per
span (or per wordpiece) and summing gathered rows is what lets the coreference model score
hundreds of thousands of candidate spans or span pairs without ever concatenating their inputs.

Shapes: `...` any leading dimensions, `I` the input size (``sum(part_dims)``), `H` the hidden
size, `N` the columns of one part given to :meth:`FeedForwardScorer.part_projection`.
"""

from typing import Sequence

import torch
import torch.nn.functional as F

from spanbert_lib.coref.models.aligned_matmul import aligned_size, pad_rows


class FeedForwardScorer(torch.nn.Module):
    """
    `[..., I]` inputs -> `[...]` scores: ``depth`` hidden layers of ``hidden_dim`` units (ReLU,
    then dropout, as in Lee et al.'s ``ffnn``) and a linear output.

    # Parameters

    part_dims : `Sequence[int]`
        Sizes of the input's parts, in concatenation order; `I` is their sum.
    hidden_dim : `int`
        Units `H` of each hidden layer.
    depth : `int`, optional (default = `1`)
        Number of hidden layers (at least one).
    dropout : `float`, optional (default = `0.0`)
        Dropout after each hidden layer.
    """

    def __init__(self, part_dims: Sequence[int], hidden_dim: int, depth: int = 1, dropout: float = 0.0) -> None:
        super().__init__()
        if depth < 1:
            raise ValueError(f"a scorer needs at least one hidden layer, got depth {depth}")
        if any(dim < 0 for dim in part_dims) or not part_dims:
            raise ValueError(f"bad part dimensions {list(part_dims)}")
        self.part_dims = tuple(int(dim) for dim in part_dims)
        bounds = [0]
        for dim in self.part_dims:
            bounds.append(bounds[-1] + dim)
        self._bounds = tuple(bounds)
        self.first_layer = torch.nn.Linear(bounds[-1], hidden_dim)
        self.hidden_layers = torch.nn.ModuleList(torch.nn.Linear(hidden_dim, hidden_dim) for _ in range(depth - 1))
        self.output_layer = torch.nn.Linear(hidden_dim, 1)
        self.dropout = torch.nn.Dropout(dropout)

    @property
    def input_dim(self) -> int:
        return self._bounds[-1]

    @property
    def hidden_dim(self) -> int:
        return self.first_layer.out_features

    def part_projection(self, values: torch.Tensor, part: int, offset: int = 0) -> torch.Tensor:
        """
        The share of the first layer of some input columns, WITHOUT the bias.

        # Parameters

        values : `torch.Tensor`
            `[..., N]` the inputs of ``N`` consecutive columns of one part.
        part : `int`
            Which part (index into ``part_dims``) the columns belong to.
        offset : `int`, optional (default = `0`)
            Where the columns start inside the part (by default ``values`` is the whole part).

        # Returns

        `torch.Tensor`
            `[..., H]`.
        """
        start = self._bounds[part] + offset
        end = start + values.size(-1)
        if end > self._bounds[part + 1]:
            raise ValueError(
                f"{values.size(-1)} columns from offset {offset} overflow part {part} of size {self.part_dims[part]}"
            )
        return values.matmul(self.first_layer.weight[:, start:end].t())

    def from_first_layer(
        self, pre_activation: torch.Tensor, apply_dropout: bool = True, in_place: bool = False
    ) -> torch.Tensor:
        """
        The rest of the network, from the first layer's output without its bias.

        # Parameters

        pre_activation : `torch.Tensor`
            `[..., H]` the first layer's output without bias.
        apply_dropout : `bool`, optional (default = `True`)
            False skips dropout even in training mode (used for non-differentiable pruning
            passes).
        in_place : `bool`, optional (default = `False`)
            Reuse ``pre_activation``'s memory (only without autograd).

        # Returns

        `torch.Tensor`
            `[...]` scores.
        """
        if in_place:
            hidden = pre_activation.add_(self.first_layer.bias).relu_()
        else:
            hidden = F.relu(pre_activation + self.first_layer.bias)
        if apply_dropout:
            hidden = self.dropout(hidden)
        for layer in self.hidden_layers:
            hidden = F.relu(layer(hidden))
            if apply_dropout:
                hidden = self.dropout(hidden)
        return self.output_layer(hidden).squeeze(-1)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """
        # Parameters

        inputs : `torch.Tensor`
            `[..., I]` concatenated parts.

        # Returns

        `torch.Tensor`
            `[...]` scores.
        """
        return self.from_first_layer(inputs.matmul(self.first_layer.weight.t()))

    def aligned(self) -> "AlignedScorer":
        """The same network for gradient-free passes, its hidden size padded to a multiple of 16."""
        return AlignedScorer(self)


class AlignedScorer:
    """
    A :class:`FeedForwardScorer` without dropout or gradients whose first layer has ``H'``
    (:func:`~spanbert_lib.coref.models.aligned_matmul.aligned_size` of `H`) outputs: the extra
    units have zero weights and bias, so they are 0 after the ReLU and add nothing to the score,
    while every product with the first layer is faster (see ``aligned_matmul``). Built per pass
    from the current weights (a copy of the first layer, no cache to go stale).

    # Parameters

    scorer : `FeedForwardScorer`
        The network.
    """

    def __init__(self, scorer: FeedForwardScorer) -> None:
        self.scorer = scorer
        self.hidden_dim = aligned_size(scorer.hidden_dim)
        self.first_weight = pad_rows(scorer.first_layer.weight.detach(), self.hidden_dim)  # [H', I]
        self.first_bias = pad_rows(scorer.first_layer.bias.detach(), self.hidden_dim)  # [H']
        self.output_weight = pad_rows(scorer.output_layer.weight.detach()[0], self.hidden_dim)  # [H']

    def part_projection(self, values: torch.Tensor, part: int, offset: int = 0) -> torch.Tensor:
        """As :meth:`FeedForwardScorer.part_projection`, `[..., N]` -> `[..., H']`."""
        start = self.scorer._bounds[part] + offset
        end = start + values.size(-1)
        if end > self.scorer._bounds[part + 1]:
            raise ValueError(f"{values.size(-1)} columns from offset {offset} overflow part {part}")
        return values.matmul(self.first_weight[:, start:end].t())

    def from_first_layer(self, pre_activation: torch.Tensor, with_bias: bool = False) -> torch.Tensor:
        """
        As :meth:`FeedForwardScorer.from_first_layer` without dropout, IN PLACE on
        ``pre_activation`` `[..., H']` -> `[...]` scores; ``with_bias``: the first layer's bias
        (:attr:`first_bias`) is already in it.
        """
        hidden = pre_activation if with_bias else pre_activation.add_(self.first_bias)
        hidden = hidden.relu_()
        if not self.scorer.hidden_layers:
            return hidden.matmul(self.output_weight) + self.scorer.output_layer.bias[0]
        hidden = hidden[..., : self.scorer.hidden_dim]
        for layer in self.scorer.hidden_layers:
            hidden = F.relu(layer(hidden))
        return self.scorer.output_layer(hidden).squeeze(-1)
