"""The optional packages of the ONNX export, and the one-line message when they are missing."""

import importlib
from types import ModuleType
from typing import List, Tuple

OPTIONAL_PACKAGES = ("onnx", "onnxruntime")
INSTALL_HINT = "pip install onnx onnxruntime (or, from a checkout of spanbert_lib: pip install '.[onnx]')"


def missing_packages() -> List[str]:
    """The optional packages that cannot be imported."""
    missing = []
    for name in OPTIONAL_PACKAGES:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return missing


def require_onnx() -> Tuple[ModuleType, ModuleType]:
    """
    ``(onnx, onnxruntime)``, or a one-line ``ConfigurationError`` naming what to install.

    # Returns

    `Tuple[ModuleType, ModuleType]`
        The two modules.
    """
    missing = missing_packages()
    if missing:
        from allennlp.common.checks import ConfigurationError

        raise ConfigurationError(
            f"ONNX export needs the optional package{'s' if len(missing) > 1 else ''} "
            f"{' and '.join(missing)}, not installed: {INSTALL_HINT}"
        )
    return importlib.import_module("onnx"), importlib.import_module("onnxruntime")
