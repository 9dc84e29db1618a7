"""
spanbert_lib: SpanBERT and span/entity tasks as an AllenNLP plugin.

This top-level module is deliberately light: it must not import allennlp, because
:mod:`spanbert_lib.compat` (loaded from a ``.pth`` file at interpreter start) lives
inside this package (its safeguards, :mod:`spanbert_lib.safeguards`, too). Registered components are imported by
``--include-package spanbert_lib`` or by the ``.allennlp_plugins`` file, which both
import every submodule, or explicitly (``import spanbert_lib.pretraining``). ``Coreference`` and ``SpanNer``
(:mod:`spanbert_lib.pipelines`) are imported on first use.
"""

from spanbert_lib.version import VERSION as __version__  # noqa: F401

_PIPELINES = ("Coreference", "CorefDoc", "SpanNer", "NerDoc")


def __getattr__(name: str):
    """``from spanbert_lib import Coreference, SpanNer``, imported when first asked for (this module stays light)."""
    if name in _PIPELINES:
        import spanbert_lib.pipelines as pipelines

        return getattr(pipelines, name)
    raise AttributeError(f"module 'spanbert_lib' has no attribute {name!r}")
