"""
Where a model comes from: a model archive (``model.tar.gz`` or a serialization directory) or the name of an
installed model package (built by ``allennlp package-model``), resolved to the archive and the config overrides
that point it at the Hugging Face folders packaged beside it.
"""

import importlib.util
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Union

from spanbert_lib.common.errors import UserInputError

MANIFEST_NAME = "spanbert_lib_model.json"
PACKAGE_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


@dataclass
class ModelSource:
    """
    A model to load.

    # Parameters

    archive : `Path`
        The ``model.tar.gz`` (or serialization directory).
    overrides : `Dict[str, Any]`
        Settings of the archive's config to change when loading it (a packaged model's encoder folders).
    package : `str`, optional (default = `None`)
        The installed package it came from.
    manifest : `Dict[str, Any]`
        A package's ``spanbert_lib_model.json`` (empty for an archive).
    """

    archive: Path
    overrides: Dict[str, Any] = field(default_factory=dict)
    package: Optional[str] = None
    manifest: Dict[str, Any] = field(default_factory=dict)


def installed_package_dir(name: str) -> Optional[Path]:
    """The folder of the installed model package ``name`` (one holding ``spanbert_lib_model.json``), or None."""
    if not PACKAGE_NAME.match(name):
        return None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        if (Path(location) / MANIFEST_NAME).is_file():
            return Path(location)
    return None


def packaged_model(directory: Path) -> ModelSource:
    """The archive and the overrides of the model package in ``directory`` (its manifest's paths made absolute)."""
    manifest_path = directory / MANIFEST_NAME
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        archive = directory / manifest["archive"]
        overrides = {key: str(directory / relative) for key, relative in manifest.get("encoder_keys", {}).items()}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UserInputError(f"not a model package manifest: {error}", path=manifest_path) from error
    return ModelSource(archive, overrides, directory.name, manifest)


def resolve_model(model: Union[str, os.PathLike]) -> ModelSource:
    """
    The model ``model`` names: an existing archive path, else an installed model package of that name.

    # Raises

    UserInputError
        When it is neither, naming what was looked for.
    """
    text = os.fspath(model)
    if os.path.exists(text):
        path = Path(text)
        return ModelSource(path / "model.tar.gz" if path.is_dir() and (path / "model.tar.gz").exists() else path)
    directory = installed_package_dir(text)
    if directory is not None:
        return packaged_model(directory)
    raise UserInputError(
        "no such model archive, and no installed model package of that name (a model.tar.gz, the serialization "
        "directory of allennlp train, or a package built by allennlp package-model; bash scripts/models.sh trains "
        "the LitBank models)",
        path=text,
    )
