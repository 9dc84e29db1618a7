"""
The individual repairs that let allennlp 2.10.1 run on the modern stack. Each entry of :data:`SHIMS` is
``(module, before, after)``:
``before(module)`` runs just before ``module`` executes, ``after(module)`` right after.
``after`` callbacks must be idempotent (they may run on an already imported module).

The library's own behaviour on top of allennlp (one-line errors, safe archives, atomic checkpoints,
exact resume) is not a repair: it lives in :mod:`spanbert_lib.safeguards` and is hooked in by the
same import hook (:data:`spanbert_lib.safeguards.hooks.SAFEGUARDS`).

What is *not* here, because a pin in ``requirements.lock`` answers it:

* setuptools >= 81 dropped ``pkg_resources``, which py-rouge imports; without it allennlp
  silently skips the whole allennlp_models plugin. Pinned ``setuptools<81``.
* huggingface_hub >= 1.0 removed ``HfFolder``/``Repository`` used by
  ``allennlp/common/push_to_hf.py``. Pinned ``huggingface_hub<1.0``.
* transformers 5.x removed ``encode_plus``/``batch_encode_plus``/
  ``build_inputs_with_special_tokens`` that allennlp calls. Pinned ``transformers<5``.
"""

import importlib.machinery
import sys
import types
from types import ModuleType
from typing import Any, Dict

# --- allennlp (package) ------------------------------------------------------------


def quiet_known_warnings(_: ModuleType) -> None:
    """
    Warnings about APIs that still work on the pinned stack and that users cannot act on:
    py-rouge (imported by allennlp-models on every start) imports ``pkg_resources``, which
    setuptools 80 deprecates; allennlp's trainer calls ``torch.cuda.amp.autocast(...)``,
    deprecated in torch 2.4 in favour of ``torch.amp.autocast("cuda", ...)``.
    """
    import warnings

    warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
    warnings.filterwarnings(
        "ignore", message=r"`torch\.cuda\.amp\.autocast\(args\.\.\.\)` is deprecated", category=FutureWarning
    )


def torchvision_placeholders(_: ModuleType) -> None:
    """
    ``allennlp/data/image_loader.py`` and ``allennlp/modules/vision`` import torchvision at
    top level. PyPI's torchvision wheels are CUDA builds that fail to load beside the CPU
    torch ("operator torchvision::nms does not exist"), and an unpinned install pulls a
    multi-GB CUDA torch. When torchvision cannot be imported we register empty placeholder
    modules; allennlp's vision components are then unusable (we have none), all else works.
    """
    if "torchvision" in sys.modules:
        return
    try:
        import torchvision  # noqa: F401

        return
    except Exception:
        for name in list(sys.modules):
            if name == "torchvision" or name.startswith("torchvision."):
                del sys.modules[name]
    for name in (
        "torchvision",
        "torchvision.ops",
        "torchvision.ops.boxes",
        "torchvision.models",
        "torchvision.models.detection",
        "torchvision.io",
    ):
        placeholder = types.ModuleType(name)
        placeholder.__doc__ = "Placeholder registered by spanbert_lib.compat: torchvision is not usable here."
        placeholder.__path__ = []  # lets `import torchvision.ops.boxes` resolve through the parents
        placeholder.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        sys.modules[name] = placeholder
    for name in ("ops", "models", "io"):
        setattr(sys.modules["torchvision"], name, sys.modules[f"torchvision.{name}"])
    for parent, child in (("torchvision.ops", "boxes"), ("torchvision.models", "detection")):
        setattr(sys.modules[parent], child, sys.modules[f"{parent}.{child}"])


def import_transformers_first(_: ModuleType) -> None:
    """
    transformers probes for torchvision when first imported; it must see the real state
    (unavailable), not our placeholders, or it would try to use them for image processing.
    """
    import transformers  # noqa: F401


def transformers_adamw(_: ModuleType) -> None:
    """
    transformers removed ``transformers.AdamW`` after 4.49 (deprecated in favour of
    ``torch.optim.AdamW``); ``allennlp/training/optimizers.py`` subclasses it for the
    ``huggingface_adamw`` optimizer. We provide it again, built on ``torch.optim.AdamW``,
    right before that module runs (transformers replaces its module object in
    ``sys.modules`` while importing submodules, so an attribute set earlier can be lost).
    """
    import transformers

    if "AdamW" not in vars(transformers):
        from spanbert_lib.compat.adamw import AdamW

        transformers.AdamW = AdamW  # type: ignore[attr-defined]  # why: puts back what transformers removed


# --- allennlp.common.cached_transformers --------------------------------------------


def tokenizer_without_add_special_tokens(module: ModuleType) -> None:
    """
    ``PretrainedTransformerTokenizer`` calls ``cached_transformers.get_tokenizer(name,
    add_special_tokens=...)``, which forwards the keyword to ``AutoTokenizer.from_pretrained``.
    transformers >= 4.44 rejects it as an init argument. It never had an effect at
    construction time (allennlp passes it again per call), so we drop it.
    """
    original = module.get_tokenizer
    if getattr(original, "_spanbert_lib_shim", False):
        return

    def get_tokenizer(model_name: str, **kwargs: Any):
        kwargs.pop("add_special_tokens", None)
        return original(model_name, **kwargs)

    get_tokenizer._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    get_tokenizer.__doc__ = original.__doc__
    module.get_tokenizer = get_tokenizer  # type: ignore[attr-defined]  # why: monkeypatch


# --- allennlp.training.learning_rate_schedulers.pytorch_lr_schedulers ---------------


def reduce_on_plateau_without_verbose(module: ModuleType) -> None:
    """
    torch 2.x removed the ``verbose`` argument of ``ReduceLROnPlateau`` (deprecated in
    2.2), which allennlp's ``reduce_on_plateau`` scheduler always passes. We keep
    ``verbose`` in allennlp's signature (old configs still parse) and no longer forward it.
    """
    import inspect

    import torch

    cls = module.ReduceOnPlateauLearningRateScheduler
    if getattr(cls.__init__, "_spanbert_lib_shim", False):
        return
    if "verbose" in inspect.signature(torch.optim.lr_scheduler.ReduceLROnPlateau.__init__).parameters:
        return
    base = module._PyTorchLearningRateSchedulerWithMetricsWrapper
    signature = inspect.signature(cls.__init__)

    def __init__(
        self,
        optimizer,
        mode="min",
        factor=0.1,
        patience=10,
        verbose=False,
        threshold_mode="rel",
        threshold=1e-4,
        cooldown=0,
        min_lr=0,
        eps=1e-8,
    ) -> None:
        lr_scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer=optimizer,
            mode=mode,
            factor=factor,
            patience=patience,
            threshold_mode=threshold_mode,
            threshold=threshold,
            cooldown=cooldown,
            min_lr=min_lr,
            eps=eps,
        )
        base.__init__(self, lr_scheduler)

    __init__.__signature__ = signature  # type: ignore[attr-defined]  # why: FromParams reads the annotated signature
    __init__._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    cls.__init__ = __init__


# --- allennlp_models.rc.tools.narrativeqa --------------------------------------------

_saved_nltk_download: Dict[str, Any] = {}


def silence_nltk_download(_: ModuleType) -> None:
    """
    Every ``allennlp`` command imports allennlp-models' ``narrativeqa.py``, which calls
    ``nltk.download("punkt")`` at import time when punkt is absent: offline that prints
    errors on every start. We skip the download during that import; NarrativeQA
    evaluation (not used by this library) would then need punkt installed by hand.
    """
    import nltk

    _saved_nltk_download["download"] = nltk.download
    nltk.download = lambda *args, **kwargs: False


def restore_nltk_download(_: ModuleType) -> None:
    import nltk

    if "download" in _saved_nltk_download:
        nltk.download = _saved_nltk_download.pop("download")


# --- allennlp.common.plugins (registration, not a repair) -----------------------------


def register_command_plugin(module: ModuleType) -> None:
    """
    allennlp finds plugin *subcommands* only among its default plugins and the modules
    listed in a ``.allennlp_plugins`` file of the current directory (``--include-package``
    is parsed after the subcommand). Adding ``spanbert_lib.commands`` to the default plugins
    makes ``allennlp coref-score`` etc. work from any directory. It only imports the command
    modules, which import their heavy dependencies lazily.
    """
    if "spanbert_lib.commands" not in module.DEFAULT_PLUGINS:
        plugins = tuple(module.DEFAULT_PLUGINS) + ("spanbert_lib.commands",)
        module.DEFAULT_PLUGINS = plugins  # type: ignore[attr-defined]  # why: monkeypatch


SHIMS = [
    ("allennlp", quiet_known_warnings, None),
    ("allennlp", import_transformers_first, None),
    ("allennlp", torchvision_placeholders, None),
    ("allennlp.training.optimizers", transformers_adamw, None),
    ("allennlp.common.cached_transformers", None, tokenizer_without_add_special_tokens),
    ("allennlp.training.learning_rate_schedulers.pytorch_lr_schedulers", None, reduce_on_plateau_without_verbose),
    ("allennlp_models.rc.tools.narrativeqa", silence_nltk_download, restore_nltk_download),
    ("allennlp.common.plugins", None, register_command_plugin),
]
