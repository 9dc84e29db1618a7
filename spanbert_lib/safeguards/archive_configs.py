"""
Loading a model archive runs no code of the archive's choosing.

allennlp builds a config's objects through its registries, and a ``"type"`` that is not a registered name
but holds a dot (``"subprocess.Popen"``) is imported as ``module.attribute`` and called with the rest of
the object as its arguments. In a config the user writes that is a convenience (a class of one's own,
unregistered); in an archive someone else made it runs their command as the user. So whenever an archive
loads (``load_archive``: ``predict``, ``evaluate``, ``serve``, ``export-encoder``, ``export-onnx``, the spaCy
components, ``Coreference(...)``, a ``from_archive`` model):

* the parts of its ``config.json`` that loading builds (``dataset_reader``, ``validation_dataset_reader``,
  ``model``, ``vocabulary``; overrides included) are checked first: every ``"type"`` must be a registered
  name and no ``trust_remote_code`` may be set, or :class:`UnsafeArchiveConfigError` names the archive and
  the key (``model.encoder.type``) and nothing has been imported or built;
* while it loads, allennlp's registries resolve registered names only: a dotted name is refused, never
  imported (what the check above cannot see, e.g. a name resolved in another registry than its own).

Configs the user writes (``allennlp train CONFIG``) keep allennlp's behaviour.
"""

import contextlib
import functools
import json
import os
import tarfile
from contextvars import ContextVar
from types import ModuleType
from typing import Any, Dict, FrozenSet, Iterator, List, Mapping, Optional, Tuple, Union

from spanbert_lib.common.errors import UserInputError

CONFIG_NAME = "config.json"
# the sections of an archive's config that allennlp's load_archive builds objects from
LOADED_SECTIONS = ("dataset_reader", "validation_dataset_reader", "model", "vocabulary")
_REMOTE_CODE_KEY = "trust_remote_code"

_loading_archive: ContextVar[Optional[str]] = ContextVar("spanbert_lib_loading_archive", default=None)


class UnsafeArchiveConfigError(UserInputError):
    """An archive whose config names a component that is not registered, or asks to run remote code."""


def registered_names() -> FrozenSet[str]:
    """Every name registered in any of allennlp's registries (models, readers, embedders, ...)."""
    from allennlp.common.registrable import Registrable

    return frozenset(name for registry in Registrable._registry.values() for name in registry)


def _registered_names_with_plugins() -> FrozenSet[str]:
    """:func:`registered_names` once allennlp's plugins (allennlp-models, ``.allennlp_plugins``) are imported."""
    from allennlp.common.plugins import import_plugins

    import_plugins()
    return registered_names()


def _key(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def unsafe_entries(config: Any, names: FrozenSet[str], path: str = "") -> Iterator[Tuple[str, str]]:
    """
    ``(key, what is wrong)`` for every ``"type"`` of ``config`` that is not in ``names`` and every
    ``trust_remote_code`` that is set, depth first (no recursion: any nesting depth).

    # Parameters

    config : `Any`
        A parsed JSON value.
    names : `FrozenSet[str]`
        The registered names (:func:`registered_names`).
    path : `str`, optional (default = `""`)
        The key of ``config`` itself, e.g. ``"model"``.
    """
    stack: List[Tuple[str, Any]] = [(path, config)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, Mapping):
            children = []
            for key, item in value.items():
                key_path = _key(where, key)
                if key == "type" and isinstance(item, str) and item not in names:
                    dotted = " (a dotted name would be imported and run)" if "." in item else ""
                    yield key_path, f"names {item!r}, not a registered component{dotted}"
                elif key == _REMOTE_CODE_KEY and item not in (False, None, 0, "false", "False"):
                    yield key_path, "asks to run the code of a Hugging Face model (trust_remote_code)"
                else:
                    children.append((key_path, item))
            stack.extend(reversed(children))  # document order
        elif isinstance(value, list):
            stack.extend((f"{where}[{index}]", item) for index, item in reversed(list(enumerate(value))))


def check_archive_config(config: Mapping[str, Any], archive: Union[str, os.PathLike]) -> None:
    """
    Raises :class:`UnsafeArchiveConfigError` naming ``archive`` and the first offending key when the
    sections of ``config`` that loading builds name an unregistered component or set ``trust_remote_code``.

    # Parameters

    config : `Mapping[str, Any]`
        The archive's config (with any overrides applied).
    archive : `Union[str, os.PathLike]`
        The archive, for the message.
    """
    sections = [(section, config[section]) for section in LOADED_SECTIONS if section in config]
    names = registered_names()
    if any(True for section, value in sections for _ in unsafe_entries(value, names, section)):
        names = _registered_names_with_plugins()
    for section, value in sections:
        for key, problem in unsafe_entries(value, names, section):
            raise UnsafeArchiveConfigError(
                f"{CONFIG_NAME} key {key!r} {problem}: an archive may name registered components only; nothing "
                "was loaded (register the class and import its package, e.g. with --include-package)",
                path=archive,
            )


def read_archive_config(archive_file: Union[str, os.PathLike]) -> Dict[str, Any]:
    """
    The ``config.json`` of a model archive (``.tar.gz``, member ``config.json`` or ``./config.json``) or
    of a serialization directory, read without extracting anything else or building anything.

    # Raises

    UserInputError
        Naming ``archive_file`` when it does not exist, is no archive, has no ``config.json`` or holds one
        that is not a UTF-8 JSON object.
    """
    path = os.fspath(archive_file)
    try:
        if os.path.isdir(path):
            with open(os.path.join(path, CONFIG_NAME), "rb") as handle:
                data = handle.read()
        else:
            with tarfile.open(path, "r:*") as archive:
                member = next((m for m in archive if m.isfile() and os.path.normpath(m.name) == CONFIG_NAME), None)
                if member is None:
                    raise UserInputError(f"not a model archive: it holds no {CONFIG_NAME}", path=path)
                extracted = archive.extractfile(member)
                assert extracted is not None  # None only for members that are not regular files
                data = extracted.read()
        config = json.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise UserInputError(
            f"no such model archive (a model.tar.gz or a serialization directory with {CONFIG_NAME})", path=path
        ) from None
    except (tarfile.TarError, EOFError, OSError) as error:
        detail = (str(error).strip().splitlines() or [type(error).__name__])[0].rstrip(":")
        raise UserInputError(
            f"not a model archive (a model.tar.gz or a serialization directory with {CONFIG_NAME}): {detail}", path=path
        ) from None
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise UserInputError(f"the archive's {CONFIG_NAME} is not a UTF-8 JSON object ({error})", path=path) from None
    if not isinstance(config, dict):
        raise UserInputError(f"the archive's {CONFIG_NAME} is not a JSON object", path=path)
    return config


def archive_model_type(archive_file: Union[str, os.PathLike]) -> str:
    """
    The ``model.type`` of an archive, read and checked (:func:`check_archive_config`) without loading it.

    # Raises

    UserInputError
        Naming the archive when it cannot be read, names no model type or names an unregistered component.
    """
    config = read_archive_config(archive_file)
    check_archive_config(config, archive_file)
    model = config.get("model")
    model_type = model.get("type") if isinstance(model, dict) else None
    if not isinstance(model_type, str):
        raise UserInputError(f"the archive's {CONFIG_NAME} names no model type", path=archive_file)
    return model_type


@contextlib.contextmanager
def loading_archive(archive: Union[str, os.PathLike]) -> Iterator[None]:
    """While open, registries resolve registered names only, and errors name ``archive``."""
    token = _loading_archive.set(os.fspath(archive))
    try:
        yield
    finally:
        _loading_archive.reset(token)


def registered_names_only(module: ModuleType) -> None:
    """
    Safeguard for ``allennlp.common.registrable``: while an archive loads (:func:`loading_archive`),
    ``Registrable.resolve_class_name`` refuses a name its registry does not hold that allennlp would import
    as a dotted ``module.attribute``; otherwise allennlp's own resolution and errors.
    """
    registrable = module.Registrable
    original = registrable.__dict__["resolve_class_name"].__func__
    if getattr(original, "_spanbert_lib_shim", False):
        return

    @functools.wraps(original)
    def resolve_class_name(cls, name):
        archive = _loading_archive.get()
        if archive is not None and "." in name and name not in registrable._registry[cls]:
            raise UnsafeArchiveConfigError(
                f"its config names {name!r}, not a registered {cls.__name__}: an archive may name registered "
                "components only; it was not imported",
                path=archive,
            )
        return original(cls, name)

    resolve_class_name._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    registrable.resolve_class_name = classmethod(resolve_class_name)


def checked_archive_loading(module: ModuleType) -> None:
    """
    Safeguard for ``allennlp.models.archival``: ``load_archive`` loads inside :func:`loading_archive`, and
    the config it builds from is checked (:func:`check_archive_config`) before its readers and model are.
    """
    if getattr(module.load_archive, "_spanbert_lib_registered_only", False):
        return
    load_archive = module.load_archive

    @functools.wraps(load_archive)
    def load_archive_registered_only(archive_file, *args, **kwargs):
        with loading_archive(archive_file):
            return load_archive(archive_file, *args, **kwargs)

    load_archive_registered_only._spanbert_lib_registered_only = True  # type: ignore[attr-defined]  # why: shim marker
    module.load_archive = load_archive_registered_only  # type: ignore[attr-defined]  # why: monkeypatch
    for builder in ("_load_dataset_readers", "_load_model"):
        setattr(module, builder, _checking_config_first(getattr(module, builder)))


def _checking_config_first(build):
    """``build(config, ...)`` of ``allennlp.models.archival`` that checks ``config`` first."""
    if getattr(build, "_spanbert_lib_registered_only", False):
        return build

    @functools.wraps(build)
    def checked(config, *args, **kwargs):
        archive = _loading_archive.get()
        if archive is not None:
            check_archive_config(config.as_dict(quiet=True), archive)
        return build(config, *args, **kwargs)

    checked._spanbert_lib_registered_only = True  # type: ignore[attr-defined]  # why: shim marker
    return checked
