"""
Old registered names and constructor arguments that keep working, with a warning logged once.

Registered names follow one prefix policy (models, dataset readers and predictors are
``spanbert_<what>``; see the README's "Conventions"). Configs and archives written before a rename
still name the old type, so :func:`register_deprecated_alias` keeps the old name resolvable: it maps
to the same class and constructor as the new name, and the first time it is resolved (by a config's
``"type"``, ``Predictor.by_name`` or a model's ``default_predictor``) it logs one warning naming the
new name.

allennlp resolves every registered name through ``Registrable._registry[base][name]``
(``Registrable.resolve_class_name``), so the aliases live in a ``dict`` subclass that replaces the
base class's registry and warns when an aliased key is read. Everything else about the registry
(``list_available``, ``in``, new registrations) is unchanged.
"""

import logging
from typing import Any, Dict, Mapping, Optional, Set, Tuple, Type

from allennlp.common.checks import ConfigurationError
from allennlp.common.registrable import Registrable

logger = logging.getLogger(__name__)

_warned: Set[Tuple[str, str]] = set()


class _RegistryWithDeprecatedAliases(dict):
    """A base class's name -> (subclass, constructor) registry that knows which names are old."""

    def __init__(self, base_name: str, entries: Mapping[str, Any]) -> None:
        super().__init__(entries)
        self.base_name = base_name
        self.new_names: Dict[str, str] = {}

    def __getitem__(self, name: str) -> Any:
        new_name = self.new_names.get(name)
        if new_name is not None:
            warn_once(f"{self.base_name} type", name, new_name)
        return super().__getitem__(name)


def warn_once(kind: str, old_name: str, new_name: str) -> None:
    """
    Logs ``old_name`` is deprecated, the first time per (``kind``, ``old_name``) in a process.

    # Parameters

    kind : `str`
        What was named, e.g. ``"Model type"`` or ``"SpanNer argument"``.
    old_name : `str`
        The deprecated name that was used.
    new_name : `str`
        The name to use instead.
    """
    key = (kind, old_name)
    if key in _warned:
        return
    _warned.add(key)
    logger.warning("%s %r is deprecated and will be removed; use %r instead.", kind, old_name, new_name)


def register_deprecated_alias(base: Type[Registrable], old_name: str, new_name: str) -> None:
    """
    Registers ``old_name`` under ``base`` as a deprecated alias of the registered ``new_name``.

    # Parameters

    base : `Type[Registrable]`
        The registrable base class both names belong to (``Model``, ``DatasetReader``,
        ``Predictor``, ...).
    old_name : `str`
        The name configs and archives used before the rename.
    new_name : `str`
        The registered name it now stands for; must already be registered.
    """
    registry = Registrable._registry[base]
    if new_name not in registry:
        raise ValueError(f"cannot alias {old_name!r}: {new_name!r} is not a registered {base.__name__}")
    if not isinstance(registry, _RegistryWithDeprecatedAliases):
        registry = _RegistryWithDeprecatedAliases(base.__name__, registry)
        Registrable._registry[base] = registry
    existing = dict.get(registry, old_name)
    if existing is not None and registry.new_names.get(old_name) != new_name:
        raise ValueError(f"cannot alias {old_name!r}: it is already a registered {base.__name__}")
    registry.new_names[old_name] = new_name
    dict.__setitem__(registry, old_name, dict.__getitem__(registry, new_name))


def deprecated_aliases(base: Type[Registrable]) -> Dict[str, str]:
    """
    The deprecated names registered under a base class.

    # Parameters

    base : `Type[Registrable]`
        The registrable base class (``Model``, ``DatasetReader``, ``Predictor``, ...).

    # Returns

    `Dict[str, str]`
        Each deprecated name mapped to the name it stands for.
    """
    registry = Registrable._registry.get(base)
    if isinstance(registry, _RegistryWithDeprecatedAliases):
        return dict(registry.new_names)
    return {}


def current_name(base: Type[Registrable], name: Optional[str]) -> Optional[str]:
    """
    The current registered name for a name that may be a deprecated alias.

    # Parameters

    base : `Type[Registrable]`
        The registrable base class the name belongs to.
    name : `Optional[str]`
        A registered name, or None.

    # Returns

    `Optional[str]`
        ``name``, or the name it stands for if it is a deprecated alias registered under ``base``.
    """
    if name is None:
        return None
    return deprecated_aliases(base).get(name, name)


def renamed_argument(owner: str, new_name: str, new_value: Any, old_name: str, old_value: Any) -> Any:
    """
    The value of an argument that may still be given under its former name (warning once).

    # Parameters

    owner : `str`
        The class whose constructor takes the argument (named in the warning and in errors).
    new_name : `str`
        The argument's name.
    new_value : `Any`
        The value given under it (None: not given).
    old_name : `str`
        Its deprecated former name.
    old_value : `Any`
        The value given under that (None: not given).

    # Returns

    `Any`
        The value given, under whichever name.

    # Raises

    `ConfigurationError`
        Both names were given, or neither.
    """
    if old_value is not None:
        if new_value is not None:
            raise ConfigurationError(f"{owner}: give {new_name} only ({old_name} is its deprecated former name)")
        warn_once(f"{owner} argument", old_name, new_name)
        return old_value
    if new_value is None:
        raise ConfigurationError(f"{owner}: {new_name} is required")
    return new_value
