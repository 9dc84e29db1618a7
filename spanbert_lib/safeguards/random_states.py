"""
Capture and reinstate every random state a training run draws from, in a form that
``torch.load(weights_only=True)`` reads back (tensors, numbers, tuples, lists, dicts only).

* the global generators: Python's ``random``, numpy's legacy global ``RandomState``, torch's CPU
  generator and, once CUDA is initialised, every CUDA generator;
* generators owned by a model: any submodule may define ``random_state_dict()`` (a dict of
  tensors / plain values) and ``load_random_state_dict(state)``, as the SpanBERT pre-training
  model does for its masking ``torch.Generator``;
* the running state of the model's ``allennlp`` ``Metric`` objects (sums and counts of the
  epoch so far), found among the attributes of the model's submodules.
"""

import logging
import random
from typing import Any, Dict, Iterator, Set, Tuple, cast

import numpy as np
import torch

logger = logging.getLogger(__name__)

_PLAIN_SCALARS = (bool, int, float, str, type(None))


def capture_global_random_states() -> Dict[str, Any]:
    """The states of Python's, numpy's and torch's global generators."""
    # numpy's global generator is a MT19937 RandomState, whose legacy state is this tuple (a dict is for other ones).
    legacy_state = cast(Tuple[str, np.ndarray, int, int, float], np.random.get_state(legacy=True))
    kind, keys, position, has_gauss, cached_gaussian = legacy_state
    states: Dict[str, Any] = {
        "python": random.getstate(),
        "numpy": {
            "kind": kind,
            "keys": torch.from_numpy(keys.astype(np.int64)),
            "position": int(position),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached_gaussian),
        },
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["torch_cuda"] = torch.cuda.get_rng_state_all()
    return states


def restore_global_random_states(states: Dict[str, Any]) -> None:
    """Reinstates what :func:`capture_global_random_states` returned."""
    random.setstate(_as_python_random_state(states["python"]))
    numpy_state = states["numpy"]
    np.random.set_state(
        (
            numpy_state["kind"],
            numpy_state["keys"].numpy().astype(np.uint32),
            numpy_state["position"],
            numpy_state["has_gauss"],
            numpy_state["cached_gaussian"],
        )
    )
    torch.set_rng_state(states["torch"])
    if "torch_cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["torch_cuda"])


def _as_python_random_state(state: Any) -> tuple:
    # (version, tuple of 625 ints, gauss_next); a round trip through a file may turn tuples into lists.
    version, internal, gauss_next = state
    return version, tuple(internal), gauss_next


def capture_model_random_states(model: torch.nn.Module) -> Dict[str, Any]:
    """``random_state_dict()`` of every submodule that has one, by submodule name."""
    return {
        name: module.random_state_dict()
        for name, module in model.named_modules()
        if callable(getattr(module, "random_state_dict", None))
    }


def restore_model_random_states(model: torch.nn.Module, states: Dict[str, Any]) -> None:
    modules = dict(model.named_modules())
    for name, state in states.items():
        module = modules.get(name)
        if module is None or not callable(getattr(module, "load_random_state_dict", None)):
            logger.warning("checkpoint holds random states for %r, which this model has no place for", name)
            continue
        module.load_random_state_dict(state)


def named_metrics(model: torch.nn.Module, max_depth: int = 3) -> Iterator[Tuple[str, Any]]:
    """
    ``(path, metric)`` for every ``allennlp.training.metrics.Metric`` held by the model's submodules,
    directly or inside dicts, lists, tuples or plain helper objects (up to ``max_depth`` levels).
    """
    from allennlp.training.metrics import Metric

    seen = set()

    def visit(value: Any, path: str, depth: int) -> Iterator[Tuple[str, Any]]:
        if isinstance(value, Metric):
            if id(value) not in seen:
                seen.add(id(value))
                yield path, value
            return
        if depth == 0 or isinstance(value, (torch.nn.Module, torch.Tensor, np.ndarray) + _PLAIN_SCALARS):
            return
        if isinstance(value, dict):
            items = list(value.items()) if len(value) <= 1000 else []
        elif isinstance(value, (list, tuple)):
            items = list(enumerate(value)) if len(value) <= 1000 else []
        elif hasattr(value, "__dict__") and not isinstance(value, type):
            items = list(vars(value).items())
        else:
            return
        for key, item in items:
            yield from visit(item, f"{path}.{key}", depth - 1)

    for module_name, module in model.named_modules():
        for attribute, value in vars(module).items():
            if attribute in ("_parameters", "_buffers", "_modules"):
                continue
            yield from visit(value, f"{module_name}.{attribute}" if module_name else attribute, max_depth)


_NOT_SAVED = object()
_warned_attributes: Set[Tuple[str, str]] = set()


def _as_plain(value: Any) -> Any:
    """``value`` as tensors, Python scalars and containers of them (numpy scalars become Python
    scalars: a weights-only load refuses numpy objects), or ``_NOT_SAVED``."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, _PLAIN_SCALARS):
        return value
    if isinstance(value, (list, tuple)):
        items = [_as_plain(item) for item in value]
        return _NOT_SAVED if any(item is _NOT_SAVED for item in items) else type(value)(items)
    if isinstance(value, dict) and all(isinstance(key, _PLAIN_SCALARS) for key in value):
        entries = {key: _as_plain(item) for key, item in value.items()}
        return _NOT_SAVED if any(item is _NOT_SAVED for item in entries.values()) else entries
    return _NOT_SAVED


def capture_metric_states(model: torch.nn.Module) -> Dict[str, Dict[str, Any]]:
    """
    The attributes of each of the model's metrics that are plain values (their running sums and
    counts); an attribute of another type cannot be saved and is left out (with one warning).
    """
    states = {}
    for path, metric in named_metrics(model):
        state = {}
        for attribute, value in vars(metric).items():
            plain = _as_plain(value)
            if plain is not _NOT_SAVED:
                state[attribute] = plain
            elif (path, attribute) not in _warned_attributes:
                _warned_attributes.add((path, attribute))
                logger.warning(
                    "metric %s: attribute %r (%s) is not saved in checkpoints; after a resume "
                    "mid-epoch it covers only the batches since",
                    path,
                    attribute,
                    type(value).__name__,
                )
        states[path] = state
    return states


def restore_metric_states(model: torch.nn.Module, states: Dict[str, Dict[str, Any]]) -> None:
    metrics = dict(named_metrics(model))
    for path, state in states.items():
        metric = metrics.get(path)
        if metric is None:
            logger.warning("checkpoint holds the state of metric %s, which this model does not have", path)
            continue
        vars(metric).update(state)
