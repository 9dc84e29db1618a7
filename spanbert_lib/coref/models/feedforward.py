"""
A scoring feed-forward network (ReLU hidden layers, then a linear layer to one score) whose
input is a concatenation of named parts, so the first layer can be applied part by part.

The first layer is linear: ``W [a; b; c] = W_a a + W_b b + W_c c``. Computing ``W_a a`` once per
span (or per wordpiece) and summing gathered rows is what lets the coreference model score
hundreds of thousands of candidate spans or span pairs without ever concatenating their inputs.
"""
from typing import Sequence

import torch
import torch.nn.functional as F


class FeedForwardScorer(torch.nn.Module):
    """
    ``x`` ``(..., sum(part_dims))`` -> ``(...,)`` scores: ``depth`` hidden layers of
    ``hidden_dim`` units (ReLU, then dropout, as in Lee et al.'s ``ffnn``) and a linear output.
    """

    def __init__(self, part_dims: Sequence[int], hidden_dim: int, depth: int = 1,
                 dropout: float = 0.0) -> None:
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
        self.hidden_layers = torch.nn.ModuleList(
            torch.nn.Linear(hidden_dim, hidden_dim) for _ in range(depth - 1))
        self.output_layer = torch.nn.Linear(hidden_dim, 1)
        self.dropout = torch.nn.Dropout(dropout)

    @property
    def input_dim(self) -> int:
        return self._bounds[-1]

    @property
    def hidden_dim(self) -> int:
        return self.first_layer.out_features

    def part_projection(self, values: torch.Tensor, part: int, offset: int = 0) -> torch.Tensor:
        """``values`` ``(..., n)`` -> ``(..., hidden_dim)``: the share of the first layer of the
        ``n`` inputs starting ``offset`` columns into part ``part`` (by default the whole part),
        WITHOUT the bias."""
        start = self._bounds[part] + offset
        end = start + values.size(-1)
        if end > self._bounds[part + 1]:
            raise ValueError(f"{values.size(-1)} columns from offset {offset} overflow part "
                             f"{part} of size {self.part_dims[part]}")
        return values.matmul(self.first_layer.weight[:, start:end].t())

    def from_first_layer(self, pre_activation: torch.Tensor, apply_dropout: bool = True,
                         in_place: bool = False) -> torch.Tensor:
        """The rest of the network: ``pre_activation`` ``(..., hidden_dim)`` is the first
        layer's output without bias; returns ``(...,)`` scores. ``apply_dropout=False`` skips
        dropout even in training mode (used for non-differentiable pruning passes);
        ``in_place=True`` reuses ``pre_activation``'s memory (only without autograd)."""
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

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        """``inputs`` ``(..., input_dim)`` -> ``(...,)``."""
        return self.from_first_layer(inputs.matmul(self.first_layer.weight.t()))
