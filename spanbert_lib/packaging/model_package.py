"""
What a model package holds and how it is built from a model archive: ``NAME/model.tar.gz``, the Hugging Face
folders the archive's config names (``NAME/encoders/N/``: the archive names them by the path they had where it
was trained, which the package cannot rely on), ``NAME/spanbert_lib_model.json`` (which config keys point at
which packaged folder) and ``NAME/__init__.py`` (``load()``, what ``spacy.load("NAME")`` calls).
"""

import json
import os
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.packaging.wheel_files import Content, write_wheel
from spanbert_lib.pipelines.model_source import MANIFEST_NAME, PACKAGE_NAME
from spanbert_lib.safeguards.archive_configs import check_archive_config, read_archive_config
from spanbert_lib.version import VERSION as LIBRARY_VERSION

VERSION = re.compile(r"^\d+(\.\d+)*$")
# the spaCy component of each model type (spacy.load of a package of another type says so)
SPACY_COMPONENTS = {"spanbert_coref": "spanbert_coref", "spanbert_span_ner": "spanbert_span_ner"}
PIPELINES = {"spanbert_coref": "Coreference", "spanbert_span_ner": "SpanNer"}

INIT_TEMPLATE = '''"""
{name} {version}: a {model_type} model packaged by spanbert_lib (allennlp package-model).

    from spanbert_lib import {pipeline}
    model = {pipeline}("{name}")
{spacy_usage}"""

from pathlib import Path

__version__ = "{version}"


def load(**overrides):
    """The spaCy pipeline of this model: what spacy.load("{name}") calls (vocab, disable, exclude, config)."""
    from spanbert_lib.packaging.spacy_loading import load_packaged_pipeline

    return load_packaged_pipeline(Path(__file__).parent, **overrides)
'''


def encoder_keys(config: Dict[str, Any]) -> List[Tuple[str, str]]:
    """``(dotted key, folder)`` of every ``model_name`` of ``config`` that names an existing local folder."""
    found: List[Tuple[str, str]] = []
    stack: List[Tuple[str, Any]] = [("", config)]
    while stack:
        where, value = stack.pop()
        if not isinstance(value, dict):
            continue
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            if key == "model_name" and isinstance(item, str) and os.path.isdir(item):
                found.append((path, item))
            elif isinstance(item, dict):
                stack.append((path, item))
    return sorted(found)


def package_files(archive: Path, name: str, version: str) -> Tuple[Dict[str, Content], Dict[str, Any]]:
    """
    The files of the package of ``archive`` (archive name -> content) and its manifest.

    # Raises

    UserInputError
        For an archive that cannot be read, names unregistered components, or whose encoder folder is missing.
    """
    config = read_archive_config(archive)
    check_archive_config(config, archive)
    model_type = (config.get("model") or {}).get("type")
    if not isinstance(model_type, str):
        raise UserInputError("the archive's config.json names no model type", path=archive)
    keys = encoder_keys(config)
    folders = sorted({os.path.realpath(folder) for _, folder in keys})
    if not folders:
        raise UserInputError(
            "the archive's config names no Hugging Face folder (model_name) that exists here: package it on the "
            "machine it was trained on, where its encoder folder is",
            path=archive,
        )
    packaged = {folder: f"encoders/{index}" for index, folder in enumerate(folders)}
    manifest = {
        "name": name,
        "version": version,
        "model_type": model_type,
        "archive": "model.tar.gz",
        "encoder_keys": {key: packaged[os.path.realpath(folder)] for key, folder in keys},
        "spacy_component": SPACY_COMPONENTS.get(model_type),
        "spanbert_lib_version": LIBRARY_VERSION,
        "packaged_from": os.path.basename(os.path.abspath(archive)),
    }
    files: Dict[str, Content] = {f"{name}/model.tar.gz": archive}
    for folder, relative in packaged.items():
        for directory, _, names in os.walk(folder):
            for file_name in sorted(names):
                source = Path(directory) / file_name
                inside = source.relative_to(folder).as_posix()
                files[f"{name}/{relative}/{inside}"] = source
    pipeline = PIPELINES.get(model_type, "Predictor")
    spacy_usage = f'\n    import spacy\n    nlp = spacy.load("{name}")\n' if model_type in SPACY_COMPONENTS else ""
    init = INIT_TEMPLATE.format(
        name=name, version=version, model_type=model_type, pipeline=pipeline, spacy_usage=spacy_usage
    )
    files[f"{name}/__init__.py"] = init.encode("utf-8")
    files[f"{name}/{MANIFEST_NAME}"] = (json.dumps(manifest, indent=2) + "\n").encode("utf-8")
    return files, manifest


def metadata(name: str, version: str, model_type: str, summary: str) -> str:
    """The wheel's core metadata: it needs spanbert_lib (which brings spaCy and the rest)."""
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {name}\n"
        f"Version: {version}\n"
        f"Summary: {summary or f'A {model_type} model packaged by spanbert_lib'}\n"
        f"Requires-Dist: spanbert_lib>={LIBRARY_VERSION}\n"
        "Requires-Python: >=3.11\n"
    )


def build_model_package(archive: Path, output_dir: Path, name: str, version: str = "0.1.0", summary: str = "") -> Path:
    """
    Writes ``output_dir/NAME-VERSION-py3-none-any.whl`` for ``archive`` and returns its path.

    # Parameters

    archive : `Path`
        A ``model.tar.gz`` (a serialization directory: its ``model.tar.gz``).
    output_dir : `Path`
        Where the wheel goes (created when missing).
    name : `str`
        The package's name: what ``Coreference(NAME)`` and ``spacy.load(NAME)`` take (lowercase letters, digits, _).
    version : `str`, optional (default = `"0.1.0"`)
        The package's version.
    summary : `str`, optional (default = `""`)
        One line for the package's metadata.
    """
    from spanbert_lib.safeguards.atomic_files import atomic_output_path

    if not PACKAGE_NAME.match(name):
        raise UserInputError(f"--name {name!r}: a package name is lowercase letters, digits and _ (not first digit)")
    if not VERSION.match(version):
        raise UserInputError(f"--version {version!r}: expected numbers separated by dots, e.g. 0.1.0")
    if archive.is_dir():
        archive = archive / "model.tar.gz"
    if not archive.is_file():
        raise UserInputError(
            "no such model archive (a model.tar.gz or a serialization directory holding one)", path=archive
        )
    files, manifest = package_files(archive, name, version)
    output_dir.mkdir(parents=True, exist_ok=True)
    wheel = output_dir / f"{name}-{version}-py3-none-any.whl"
    with atomic_output_path(wheel) as temporary:
        write_wheel(temporary, name, version, files, metadata(name, version, manifest["model_type"], summary))
    return wheel
