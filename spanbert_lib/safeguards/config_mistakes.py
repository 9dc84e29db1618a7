"""
Configuration mistakes that allennlp reports as a bare ``TypeError``, ``ValueError`` or jsonnet error.

Three of them reach the user as a traceback otherwise, the fourth as a line that does not say where:

- **a setting the class does not take**, in a class whose constructor passes ``**kwargs`` on to its
  base class (``spanbert_coref`` and most of our models): allennlp hands the unknown key through,
  and the base constructor fails with ``Model.__init__() got an unexpected keyword argument 'k'``.
  (A class without ``**kwargs`` already gets allennlp's ``ConfigurationError``.)
- **a value of the wrong type** for an ``int``, ``bool``, ``str`` or ``float`` setting:
  ``Expected coref_depth to be a int.``
- **an override whose dotted key leads nowhere** (``-o '{"model.span_extractor.x": 1}'`` where the
  model has no ``span_extractor``): allennlp's ``with_overrides`` raises
  ``ValueError: overrides dict contains unused keys: [...]``.
- **``-o`` text that does not parse**: jsonnet's ``STATIC ERROR: 1:5: ...`` names neither the option nor a file.

:func:`configuration_mistake` recognises them from the error's traceback (the frames of
``allennlp/common/from_params.py`` / ``params.py`` and their local variables) and rebuilds each as
one :class:`~spanbert_lib.common.errors.UserInputError` naming the setting's full key::

    model.pair_product_dtpye: not a setting of 'spanbert_coref' (SpanBertCoreference); did you mean
        'pair_product_dtype'?
    model.coref_depth: expected an int, got "two" (SpanBertCoreference)
    model.span_extractor.x: no such place in the configuration to override (...)
    --overrides: not a JSON object (jsonnet: 1:5: expected token OPERATOR but got end of file)

Any other error (a bug, also a ``TypeError`` raised inside a constructor) gives None.
"""

import ast
import difflib
import json
import os
import re
from traceback import walk_tb
from types import FrameType, TracebackType
from typing import Any, Iterable, Iterator, List, Optional

_FROM_PARAMS_FILE = os.path.join("allennlp", "common", "from_params.py")
_PARAMS_FILE = os.path.join("allennlp", "common", "params.py")
JSONNET_ERROR_PREFIXES = ("STATIC ERROR:", "RUNTIME ERROR:")  # how jsonnet's errors begin
_UNUSED_OVERRIDES = re.compile(r"^overrides dict contains unused keys: (?P<keys>\[.*\])$")
_NOT_AN_OBJECT = re.compile(r"^overrides for '(?P<parent>[^']+)\.\*' expected list or dict in original")
_UNEXPECTED_KEYWORD = re.compile(r"got an unexpected keyword argument '(?P<key>\w+)'$")
_EXPECTED_TYPE = re.compile(r"^Expected (?P<argument>[\w.]+) to be (?P<what>.+?)\.?$")
_TYPE_WORDS = {"a int": "an int", "a bool": "a bool (true or false)", "a string": "a string", "numeric": "a number"}


def _frames(traceback: Optional[TracebackType]) -> Iterator[FrameType]:
    """The frames of ``traceback``, outermost first."""
    return (frame for frame, _ in walk_tb(traceback))


def _allennlp_frames(error: BaseException, function_name: str, file: str = _FROM_PARAMS_FILE) -> List[FrameType]:
    """The frames of ``error``'s traceback that run ``function_name`` in allennlp's ``file``."""
    return [
        frame
        for frame in _frames(error.__traceback__)
        if frame.f_code.co_name == function_name and frame.f_code.co_filename.endswith(file)
    ]


def _raised_in(error: BaseException, frame: FrameType) -> bool:
    """True when ``frame`` is the one that raised ``error`` (the innermost of its traceback)."""
    return list(_frames(error.__traceback__))[-1] is frame


def _history(params: Any) -> str:
    """``"model."``: where a ``Params`` object sits in the configuration (allennlp's ``history``)."""
    history = getattr(params, "history", "")
    return history if isinstance(history, str) else ""


def registered_name(cls: type) -> Optional[str]:
    """The name ``cls`` is registered under with allennlp (``spanbert_coref``), or None."""
    from allennlp.common.registrable import Registrable

    for registry in Registrable._registry.values():
        for name, (registered_class, _constructor) in registry.items():
            if registered_class is cls:
                return name
    return None


def accepted_settings(cls: type, given_by_allennlp: Iterable[str] = ()) -> List[str]:
    """
    Every key ``cls.from_params`` takes, its base classes' included where it passes ``**kwargs``
    on, but for ``given_by_allennlp`` (the ``extras`` such as ``vocab`` that allennlp fills in).
    """
    from allennlp.common.from_params import infer_params

    skipped = {"self", *given_by_allennlp}
    return [
        name
        for name, parameter in infer_params(cls).items()
        if name not in skipped and parameter.kind not in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL)
    ]


def _unknown_setting_error(error: TypeError) -> Optional[Exception]:
    match = _UNEXPECTED_KEYWORD.search(str(error))
    calls = _allennlp_frames(error, "from_params")
    if match is None or not calls:
        return None
    frame = calls[-1]  # the innermost construction: the class whose constructor got the key
    cls, kwargs, key = frame.f_locals.get("cls"), frame.f_locals.get("kwargs"), match["key"]
    if not isinstance(cls, type) or not isinstance(kwargs, dict) or key not in kwargs:
        return None  # the key did not come from the configuration: a bug
    extras = frame.f_locals.get("extras")
    accepted = accepted_settings(cls, extras if isinstance(extras, dict) else ())
    if key in accepted:
        return None
    from spanbert_lib.common.errors import UserInputError

    name = registered_name(cls)
    owner = f"'{name}' ({cls.__name__})" if name else cls.__name__
    message = f"{_history(frame.f_locals.get('params'))}{key}: not a setting of {owner}"
    close = difflib.get_close_matches(key, accepted, n=1)
    if close:
        message += f"; did you mean '{close[0]}'?"
    else:
        message += f" (it takes: {', '.join(sorted(accepted))})"
    return UserInputError(message)


def _wrong_type_error(error: TypeError) -> Optional[Exception]:
    constructs = _allennlp_frames(error, "construct_arg")
    pops = _allennlp_frames(error, "pop_and_construct_arg")
    match = _EXPECTED_TYPE.match(str(error))
    if match is None or not constructs or not pops or not _raised_in(error, constructs[-1]):
        return None  # not raised by allennlp's own type check
    from spanbert_lib.common.errors import UserInputError

    construct = constructs[-1].f_locals
    value = construct.get("popped_params")
    where = f"{_history(pops[-1].f_locals.get('params'))}{match['argument']}"
    what = _TYPE_WORDS.get(match["what"], match["what"])
    try:
        shown = json.dumps(value)
    except (TypeError, ValueError):
        shown = repr(value)
    return UserInputError(f"{where}: expected {what}, got {shown} ({construct.get('class_name')})")


def _override_nowhere_error(error: ValueError) -> Optional[Exception]:
    merges = _allennlp_frames(error, "with_overrides", _PARAMS_FILE)
    if not merges or not _raised_in(error, merges[-1]):
        return None
    from spanbert_lib.common.errors import UserInputError

    unused = _UNUSED_OVERRIDES.match(str(error))
    if unused is not None:
        try:
            keys = ", ".join(sorted(ast.literal_eval(unused["keys"])))
        except (ValueError, SyntaxError, TypeError):
            keys = unused["keys"]
        return UserInputError(
            f"{keys}: no such place in the configuration to override (every part of a dotted key but the "
            'last must already be there; give a missing object whole, e.g. {"model.new_part": {...}})'
        )
    not_an_object = _NOT_AN_OBJECT.match(str(error))
    if not_an_object is not None:
        return UserInputError(
            f"{not_an_object['parent']}.*: cannot override inside {not_an_object['parent']}, a single value in the "
            "configuration (not an object or a list)"
        )
    return None


def _overrides_syntax_error(error: RuntimeError) -> Optional[Exception]:
    """jsonnet's ``STATIC ERROR: 1:5: ...`` for the ``-o`` text, which names neither the option nor a file."""
    parses = _allennlp_frames(error, "parse_overrides", _PARAMS_FILE)
    message = str(error).strip()
    if not parses or not message.startswith(JSONNET_ERROR_PREFIXES):
        return None
    from spanbert_lib.common.errors import UserInputError

    where = message.split(":", 1)[1].strip()
    return UserInputError(f"--overrides: not a JSON object (jsonnet: {where})")


def configuration_mistake(error: BaseException) -> Optional[Exception]:
    """
    The :class:`UserInputError` for a configuration mistake that allennlp raised as a ``TypeError``,
    ``ValueError`` or ``RuntimeError`` (a setting the class does not take, a value of the wrong type,
    an override key that leads nowhere, ``-o`` text that does not parse), or None for any other error.
    """
    if isinstance(error, TypeError):
        return _unknown_setting_error(error) or _wrong_type_error(error)
    if isinstance(error, ValueError):
        return _override_nowhere_error(error)
    if isinstance(error, RuntimeError):
        return _overrides_syntax_error(error)
    return None
