"""An ``AdamW`` with transformers' old signature (``correct_bias``), built on ``torch.optim.AdamW``."""

from typing import Callable, Iterable, Optional, Tuple

import torch


class AdamW(torch.optim.AdamW):
    """
    Drop-in for the removed ``transformers.AdamW``. With ``correct_bias=True`` (the default)
    it is exactly ``torch.optim.AdamW``. With ``correct_bias=False`` the moments are used
    without bias correction, as in the original BERT optimizer: the update is
    ``lr * m / (sqrt(v) + eps)`` followed by decoupled weight decay ``p -= lr * wd * p``.

    # Parameters

    params : `Iterable`
        Parameters or parameter groups, as ``torch.optim.AdamW`` takes them.
    lr : `float`, optional (default = `1e-3`)
        Learning rate.
    betas : `Tuple[float, float]`, optional (default = `(0.9, 0.999)`)
        Decay rates of the first and second moments.
    eps : `float`, optional (default = `1e-6`)
        Added to ``sqrt(v)`` (transformers' default, not torch's 1e-8).
    weight_decay : `float`, optional (default = `0.0`)
        Decoupled weight decay.
    correct_bias : `bool`, optional (default = `True`)
        False: no bias correction of the moments (BERT's optimizer).
    no_deprecation_warning : `bool`, optional (default = `False`)
        Accepted for compatibility with ``transformers.AdamW``; unused.
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        correct_bias: bool = True,
        no_deprecation_warning: bool = False,
    ) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        self.correct_bias = correct_bias

    @torch.no_grad()
    def step(self, closure: Optional[Callable] = None):
        if self.correct_bias:
            return super().step(closure)
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                if param.grad.is_sparse:
                    raise RuntimeError("AdamW does not support sparse gradients")
                state = self.state[param]
                if "exp_avg" not in state:
                    state["step"] = torch.tensor(0.0)
                    state["exp_avg"] = torch.zeros_like(param)
                    state["exp_avg_sq"] = torch.zeros_like(param)
                state["step"] += 1
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.mul_(beta1).add_(param.grad, alpha=1.0 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(param.grad, param.grad, value=1.0 - beta2)
                param.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(group["eps"]), value=-group["lr"])
                if group["weight_decay"] > 0.0:
                    param.add_(param, alpha=-group["lr"] * group["weight_decay"])
        return loss
