"""Builders of model archives for the compat tests: a loadable one, and crafted ones."""

import io
import json
import tarfile
from pathlib import Path
from typing import Any, Callable, Dict, Optional

from tests import REPO_ROOT

TINY_CLASSIFIER_CONFIG = REPO_ROOT / "fixtures" / "configs" / "tiny_classifier.jsonnet"


def add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


def add_symlink(archive: tarfile.TarFile, name: str, target: str) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    archive.addfile(info)


def write_model_archive(
    path: Path,
    weights: Optional[Any] = None,
    weights_bytes: Optional[bytes] = None,
    edit_config: Optional[Callable[[Dict[str, Any]], None]] = None,
) -> Path:
    """
    A ``model.tar.gz`` of the tiny classifier (config, vocabulary with two labels) whose ``weights.th``
    holds ``torch.save(weights)`` (or ``weights_bytes`` as they are). Loading builds the model and
    then reads the weights. ``edit_config`` changes the config (a dict) in place before it is written.
    """
    import torch
    from allennlp.common import Params
    from allennlp.data import Vocabulary

    config = Params.from_file(str(TINY_CLASSIFIER_CONFIG)).as_dict(quiet=True)
    if edit_config is not None:
        edit_config(config)
    vocabulary_dir = path.parent / f"{path.name}.vocabulary"
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["positive", "negative"], namespace="labels")
    vocab.save_to_files(str(vocabulary_dir))
    if weights_bytes is None:
        buffer = io.BytesIO()
        torch.save(weights, buffer)
        weights_bytes = buffer.getvalue()
    with tarfile.open(path, "w:gz") as archive:
        add_bytes(archive, "config.json", json.dumps(config).encode("utf-8"))
        add_bytes(archive, "weights.th", weights_bytes)
        archive.add(str(vocabulary_dir), arcname="vocabulary")
    return path
