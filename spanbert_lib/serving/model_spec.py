"""The ``--model NAME=ARCHIVE[:PREDICTOR]`` and ``--overrides NAME=JSON`` arguments of ``allennlp serve``."""

import json
import os
import re
from dataclasses import dataclass, replace
from typing import Dict, Iterable, List, Optional

from spanbert_lib.common.config_overrides import overrides_object
from spanbert_lib.common.errors import UserInputError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_PREDICTOR = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class ModelSpec:
    """
    One model to serve.

    # Parameters

    name : `str`
        The name in ``POST /predict/NAME`` (letters, digits, ``_ . -``).
    path : `str`
        A ``model.tar.gz`` (or any archive ``load_archive`` reads), or a serialization directory:
        its ``model.tar.gz`` is served, and while that does not exist yet the page shows the
        training's progress.
    predictor : `str`, optional (default = `None`)
        A registered predictor name; by default the one the task uses (the model's
        ``default_predictor`` for other models).
    overrides : `str`, optional (default = `""`)
        A JSON object of settings of the archive's config changed when loading it (``--overrides
        NAME=JSON``, as ``allennlp predict -o``), e.g. a coreference model in bfloat16.
    """

    name: str
    path: str
    predictor: Optional[str] = None
    overrides: str = ""

    @classmethod
    def parse(cls, text: str) -> "ModelSpec":
        """
        One ``--model`` argument.

        # Parameters

        text : `str`
            ``NAME=PATH`` or ``NAME=PATH:PREDICTOR``; ``PATH`` alone names the model after its
            directory (or archive file).

        # Returns

        `ModelSpec`
            The model to serve; :class:`UserInputError` for a malformed argument.
        """
        name, separator, rest = text.partition("=")
        if not separator:
            name, rest = "", text
        path, predictor = rest, None
        head, colon, tail = rest.rpartition(":")
        if colon and head and _PREDICTOR.match(tail) and not os.path.exists(rest):
            path, predictor = head, tail
        if not path:
            raise UserInputError(f"--model {text!r}: expected NAME=ARCHIVE[:PREDICTOR]")
        if not name:
            name = _default_name(path)
        if not _NAME.match(name):
            raise UserInputError(f"--model {text!r}: the name {name!r} may hold only letters, digits, '_', '.' and '-'")
        return cls(name=name, path=path, predictor=predictor)


def _default_name(path: str) -> str:
    trimmed = path.rstrip("/")
    if os.path.basename(trimmed) in ("model.tar.gz", "model.tar") or trimmed.endswith(".tar.gz"):
        parent = os.path.basename(os.path.dirname(os.path.abspath(trimmed)))
        base = os.path.basename(trimmed)
        return parent if base.startswith("model.") else base[: -len(".tar.gz")]
    return os.path.basename(trimmed)


def parse_model_specs(texts: Iterable[str], overrides: Iterable[str] = ()) -> List[ModelSpec]:
    """
    Parses every ``--model`` argument, and the ``--overrides`` of some of them.

    # Parameters

    texts : `Iterable[str]`
        The ``--model`` arguments (see :meth:`ModelSpec.parse`).
    overrides : `Iterable[str]`, optional (default = `()`)
        ``--overrides`` arguments, ``NAME=JSON``: a JSON object for a model named by ``--model``,
        at most one per model.

    # Returns

    `List[ModelSpec]`
        The models; their names must be distinct (else :class:`UserInputError`).
    """
    specs = [ModelSpec.parse(text) for text in texts]
    seen = set()
    for spec in specs:
        if spec.name in seen:
            raise UserInputError(f"--model: the name {spec.name!r} is given twice")
        seen.add(spec.name)
    settings: Dict[str, str] = {}
    for text in overrides:
        name, separator, value = text.partition("=")
        if not separator or name not in seen:
            names = ", ".join(sorted(seen)) or "none given"
            raise UserInputError(f"--overrides {text!r}: expected NAME=JSON, NAME one of the --model names ({names})")
        if name in settings:
            raise UserInputError(f"--overrides: the model {name!r} is given overrides twice (put them in one object)")
        try:
            overrides_object(value)
        except json.JSONDecodeError as error:
            raise UserInputError(f"--overrides {name}: not JSON ({error.msg} at character {error.pos})") from None
        except TypeError as error:
            raise UserInputError(f"--overrides {name}: {error}") from None
        settings[name] = value
    return [replace(spec, overrides=settings.get(spec.name, "")) for spec in specs]
