"""
torch file I/O for checkpoints and weights: loads that never unpickle code, saves that are atomic.

allennlp calls ``torch.load(path, map_location=...)`` on checkpoints, ``best.th`` and archive
weights. Whether that may run code hidden in the file rests only on torch's *default*
(``weights_only=True`` since 2.6), which ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` switches off.
An explicit ``weights_only=True`` wins over that variable. allennlp also ``torch.save``\\ s
checkpoints straight to their final names, so a kill mid-write leaves a truncated file that
``--recover`` then picks as the newest checkpoint.

:func:`torch_with_safe_io` gives the allennlp modules that read or write these files a
``torch`` of their own whose ``load`` is :func:`load_weights_only` and whose ``save`` is
:func:`atomic_save`; everything else is the real torch.
"""

import functools
import os
import pickle
import tempfile
import types
from typing import Any, Callable, Union

import torch

from spanbert_lib.common.errors import UserInputError

PathOrFile = Union[str, os.PathLike, Any]

_torch_load = torch.load  # the real one, whatever is bound to torch.load later


class UnsafeCheckpointError(UserInputError):
    """A weights or checkpoint file that holds pickled Python objects beyond tensors and plain containers."""


def load_weights_only(f: PathOrFile, map_location: Any = None, **kwargs: Any) -> Any:
    """
    ``torch.load`` with ``weights_only=True`` whatever the caller or the environment asks for.

    # Parameters

    f : `Union[str, os.PathLike, IO]`
        The file (path or open binary file) to read.
    map_location : optional
        As for ``torch.load``.

    # Raises

    UnsafeCheckpointError
        Naming the file, when it holds objects that only a full unpickler could rebuild (for
        example a ``__reduce__`` payload): nothing of such a file is executed.
    """
    kwargs.pop("weights_only", None)
    try:
        return _torch_load(f, map_location=map_location, weights_only=True, **kwargs)
    except pickle.UnpicklingError as error:
        if "weights only load failed" not in str(error).lower():
            raise  # damaged, not unsafe (e.g. a truncated legacy-format file)
        name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file object>")
        # torch's message is a page long; its "WeightsUnpickler error: ..." line names what was refused.
        reasons = [line.strip() for line in str(error).splitlines() if "WeightsUnpickler error" in line]
        raise UnsafeCheckpointError(
            "refusing to load: the file holds pickled Python objects other than tensors and plain containers, "
            "which could run code when loaded; only load it with torch.load(weights_only=False) if you trust its "
            f"origin ({reasons[0].split('. Please use')[0] if reasons else 'the weights-only unpickler refused it'})",
            path=name,
        ) from error


def _fsync_directory(directory: str) -> None:
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:  # not supported on every platform / file system
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def partial_file_prefix(path: Union[str, os.PathLike]) -> str:
    """Name prefix of the temporary files :func:`atomic_save` writes for ``path`` (hidden, never ``*.th``)."""
    return f".{os.path.basename(os.fspath(path))}.partial-"


def atomic_save(obj: Any, f: PathOrFile, *args: Any, **kwargs: Any) -> None:
    """
    ``torch.save`` that leaves either the complete new file at ``f`` or no change at all: it writes
    a hidden temporary file in the same directory, flushes and fsyncs it, renames it over ``f``
    and fsyncs the directory. File objects (not paths) are written directly.
    """
    if not isinstance(f, (str, os.PathLike)):
        torch.save(obj, f, *args, **kwargs)
        return
    path = os.fspath(f)
    directory = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(prefix=partial_file_prefix(path), dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            torch.save(obj, handle, *args, **kwargs)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
    _fsync_directory(directory)


def torch_with_safe_io() -> types.ModuleType:
    """
    A module object that is ``torch`` except for ``load`` (:func:`load_weights_only`) and ``save``
    (:func:`atomic_save`), to be bound as the global ``torch`` of a module that reads or writes
    checkpoints. Attributes are copied, so attribute access costs what it costs on ``torch``.
    """
    safe_torch = _TorchWithSafeIO(torch.__name__, torch.__doc__)
    safe_torch.__dict__.update(
        {name: value for name, value in vars(torch).items() if name not in ("__name__", "__doc__")}
    )
    safe_torch.load = load_weights_only
    safe_torch.save = atomic_save
    return safe_torch


class _TorchWithSafeIO(types.ModuleType):
    load: Callable[..., Any]
    save: Callable[..., None]

    def __getattr__(self, name: str) -> Any:
        # torch's lazily imported submodules (torch._dynamo, ...) appear after the copy.
        return getattr(torch, name)


# Modules of allennlp that call torch.load / torch.save on user files.
MODULES_WITH_TORCH_FILE_IO = (
    "allennlp.nn.util",  # read_state_dict: archive weights, best.th
    "allennlp.training.checkpointer",  # model_state_* / training_state_*
    "allennlp.training.gradient_descent_trainer",  # best.th
    "allennlp.nn.initializers",  # the `pretrained` initializer
    "allennlp.common.file_utils",  # embeddings cached in tensor form
    "allennlp.nn.parallel.fairscale_fsdp_accelerator",  # sharded states
)


def use_safe_torch_io(module: types.ModuleType) -> None:
    """Shim: binds :func:`torch_with_safe_io` as ``module.torch``. Idempotent."""
    if isinstance(getattr(module, "torch", None), _TorchWithSafeIO):
        return
    module.torch = torch_with_safe_io()  # type: ignore[attr-defined]  # why: monkeypatch


def weights_only_override_weights(module: types.ModuleType) -> None:
    """
    Shim for ``allennlp.common.cached_transformers``: ``get(..., override_weights_file=F)`` (the
    ``pretrained_transformer`` embedder's ``override_weights_file``, also ours in
    ``segmented_transformer``) runs ``import torch; torch.load(F)`` inside the function, out of
    reach of a module-level binding. While such a call runs, ``torch.load`` is :func:`load_weights_only`.
    """
    original = module.get
    if getattr(original, "_spanbert_lib_shim", False):
        return

    @functools.wraps(original)
    def get(*args: Any, **kwargs: Any):
        override_weights_file = args[2] if len(args) > 2 else kwargs.get("override_weights_file")
        if override_weights_file is None:
            return original(*args, **kwargs)
        torch.load = load_weights_only  # type: ignore[assignment]  # why: monkeypatch for the call's duration
        try:
            return original(*args, **kwargs)
        finally:
            torch.load = _torch_load

    get._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    module.get = get  # type: ignore[attr-defined]  # why: monkeypatch
