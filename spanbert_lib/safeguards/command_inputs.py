"""
Everything a command reads, so that no output lands on it: beside the paths on the command line, the files a
config pulls in (the ``.libsonnet`` files it imports, the Hugging Face model folders, vocabularies, weights and
data paths it names) and what a model archive's config names.

A config names a local path under a key ``model_name``, ``archive_file``, ``directory`` or one ending in
``_path``, ``_file``, ``_dir`` or ``_directory`` (not an output: ``serialization_dir`` and keys holding
``output``); a value counts when it exists on disk (glob patterns, comma lists and ``#selector`` suffixes as
the readers take them).
"""

import json
import os
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from spanbert_lib.safeguards.same_file import expand_input_paths

PATH_KEYS = frozenset({"model_name", "archive_file", "directory"})
PATH_KEY_SUFFIXES = ("_path", "_file", "_dir", "_directory")
DATA_PATH_KEYS = ("train_data_path", "validation_data_path", "test_data_path")


def _names_an_input(key: Any) -> bool:
    if not isinstance(key, str) or "output" in key or key == "serialization_dir":
        return False
    return key in PATH_KEYS or key.endswith(PATH_KEY_SUFFIXES)


def named_local_paths(config: Any, skip_keys: Sequence[str] = ()) -> List[str]:
    """
    The existing local paths a parsed config names (see the module docstring), in document order, once each.

    # Parameters

    config : `Any`
        A parsed JSON/jsonnet config (any nesting depth).
    skip_keys : `Sequence[str]`, optional (default = `()`)
        Keys whose paths do not count (e.g. the data paths of an archive, which loading it does not read).
    """
    found: List[str] = []
    stack: List[Any] = [config]
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            children = []
            for key, item in value.items():
                if isinstance(item, str) and _names_an_input(key) and key not in skip_keys:
                    if item and item not in found and expand_input_paths(item):
                        found.append(item)
                elif isinstance(item, (Mapping, list)):
                    children.append(item)
            stack.extend(reversed(children))
        elif isinstance(value, list):
            stack.extend(reversed(value))
    return found


def archive_inputs(archive_file: Optional[Union[str, os.PathLike]]) -> List[str]:
    """
    The archive and the local paths its config names that loading it reads (Hugging Face model folders,
    vocabularies, weights; not its training data); just the archive when its config cannot be read.
    """
    if archive_file is None:
        return []
    from spanbert_lib.common.errors import UserInputError
    from spanbert_lib.safeguards.archive_configs import read_archive_config

    archive = os.fspath(archive_file)
    if not os.path.exists(archive):
        return [archive]
    try:
        config = read_archive_config(archive)
    except UserInputError:
        return [archive]
    return [archive, *named_local_paths(config, skip_keys=DATA_PATH_KEYS)]


def jsonnet_imports(config_file: Union[str, os.PathLike]) -> List[str]:
    """
    The files a jsonnet config imports (``import`` / ``importstr``, transitively); empty when it does not
    evaluate (the command itself then reports why).
    """
    import _jsonnet

    imported: List[str] = []

    def read_import(directory: str, relative: str) -> Tuple[str, bytes]:
        path = relative if os.path.isabs(relative) else os.path.join(directory, relative)
        with open(path, "rb") as handle:
            content = handle.read()
        if path not in imported:
            imported.append(path)
        return path, content

    try:
        _jsonnet.evaluate_file(os.fspath(config_file), ext_vars=dict(os.environ), import_callback=read_import)
    except (RuntimeError, OSError, ValueError):
        pass
    return imported


def config_file_inputs(config_file: Union[str, os.PathLike], overrides: Union[str, Mapping, None] = "") -> List[str]:
    """
    A config file, the files it imports, and the local paths it names (with ``overrides`` applied): all
    that ``allennlp train CONFIG`` reads besides what a component reads on its own.
    """
    path = os.fspath(config_file)
    if not os.path.isfile(path):
        return [path]
    inputs = [path, *jsonnet_imports(path)]
    try:
        from allennlp.common import Params

        overrides_text = json.dumps(overrides) if isinstance(overrides, Mapping) else (overrides or "")
        config = Params.from_file(path, overrides_text).as_dict(quiet=True)
    except Exception:  # a config that does not parse is reported by the command itself
        return inputs
    return inputs + [named for named in named_local_paths(config) if named not in inputs]


def config_inputs(config: Mapping[str, Any], given: Iterable[Optional[str]] = ()) -> List[str]:
    """The paths ``given`` (those not None) followed by the local paths a parsed ``config`` names."""
    inputs = [os.fspath(path) for path in given if path is not None]
    return inputs + [named for named in named_local_paths(config) if named not in inputs]
