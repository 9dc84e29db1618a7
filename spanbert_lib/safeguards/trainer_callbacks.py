"""
Adds this library's trainer callbacks to every ``GradientDescentTrainer`` (no configuration needed).

Imports nothing from allennlp at module level: it runs as the shim of
``allennlp.training.gradient_descent_trainer``, possibly while ``allennlp.training`` is still
being imported (e.g. when a user imports :mod:`spanbert_lib.safeguards.exact_resume` first).
"""

from types import ModuleType


def add_exact_resume_callback(module: ModuleType) -> None:
    """
    Shim for ``allennlp.training.gradient_descent_trainer``: every trainer gets an
    :class:`~spanbert_lib.safeguards.exact_resume.ExactResumeCallback`, last among its callbacks, and (with a
    serialization directory) the warning of :mod:`~spanbert_lib.safeguards.empty_predictions`, first. Idempotent.
    """
    trainer_class = module.GradientDescentTrainer
    original = trainer_class.__init__
    if getattr(original, "_spanbert_lib_shim", False):
        return

    def __init__(self, *args, **kwargs) -> None:
        from spanbert_lib.safeguards.empty_predictions import empty_predictions_callback
        from spanbert_lib.safeguards.exact_resume import ExactResumeCallback

        original(self, *args, **kwargs)
        if self._serialization_dir is not None:
            self._callbacks.insert(0, empty_predictions_callback(self._serialization_dir))
        if not any(isinstance(callback, ExactResumeCallback) for callback in self._callbacks):
            self._callbacks.append(ExactResumeCallback(self._serialization_dir))

    __init__._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    __init__.__wrapped__ = original  # type: ignore[attr-defined]  # why: as functools.wraps sets it
    __init__.__doc__ = original.__doc__
    trainer_class.__init__ = __init__
