"""
A ``sys.meta_path`` finder that runs callbacks around the execution of chosen modules.

``before`` callbacks run just before the module's code executes (e.g. to provide a
placeholder for a dependency it imports at top level); ``after`` callbacks run once the
module has executed (e.g. to replace one of its functions). Module loading itself is left
to the regular finders; we only wrap the loader they return.
"""

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Callable, Dict, List, Optional, Tuple

ModuleCallback = Callable[[ModuleType], None]


class _CallbackLoader(importlib.abc.Loader):
    def __init__(self, wrapped: importlib.abc.Loader, before: List[ModuleCallback], after: List[ModuleCallback]):
        self._wrapped = wrapped
        self._before = before
        self._after = after

    def create_module(self, spec):
        return self._wrapped.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        for callback in self._before:
            callback(module)
        self._wrapped.exec_module(module)
        for callback in self._after:
            callback(module)

    def __getattr__(self, name):
        # get_source, get_code, is_package, ... are answered by the real loader.
        return getattr(self._wrapped, name)


class CallbackFinder(importlib.abc.MetaPathFinder):
    """Wraps the loader of selected modules so that callbacks run around their execution."""

    def __init__(self) -> None:
        self.callbacks: Dict[str, Tuple[List[ModuleCallback], List[ModuleCallback]]] = {}
        self.trigger: Optional[Callable[[str], bool]] = None
        self.on_trigger: Callable[[], None] = lambda: None

    def register(
        self, module_name: str, before: Optional[ModuleCallback] = None, after: Optional[ModuleCallback] = None
    ) -> None:
        """
        Adds callbacks to run around the execution of a module.

        # Parameters

        module_name : `str`
            The module's full name.
        before : `ModuleCallback`, optional (default = `None`)
            Runs just before the module's code executes.
        after : `ModuleCallback`, optional (default = `None`)
            Runs once the module has executed.
        """
        befores, afters = self.callbacks.setdefault(module_name, ([], []))
        if before is not None:
            befores.append(before)
        if after is not None:
            afters.append(after)

    def find_spec(self, fullname, path, target=None):
        if self.trigger is not None and self.trigger(fullname):
            # once, just before that module runs (importing here, inside find_spec, could run a module twice)
            self.trigger = None
            self.register(fullname, before=lambda _: self.on_trigger())
        if fullname not in self.callbacks:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        before, after = self.callbacks[fullname]
        spec.loader = _CallbackLoader(spec.loader, before, after)
        return spec


def _installed_finder() -> Optional[CallbackFinder]:
    return next((finder for finder in sys.meta_path if isinstance(finder, CallbackFinder)), None)


def is_installed() -> bool:
    return _installed_finder() is not None


# what the .pth file imports in every interpreter
_IMPORTED_AT_START = ("spanbert_lib.compat", "spanbert_lib.version")


def uses_the_library(module_name: str) -> bool:
    """
    Whether importing ``module_name`` means this library is in use: the ``allennlp`` command (which always loads
    this library's command plugin, see ``shims.register_command_plugin``) or any module of the library other than
    what the ``.pth`` file imports in every interpreter (this compatibility layer, the package's version).
    """
    if module_name == "allennlp.commands":
        return True
    return module_name.startswith("spanbert_lib.") and not module_name.startswith(_IMPORTED_AT_START)


def install() -> None:
    """
    Registers every repair of :mod:`spanbert_lib.compat.shims`, and arranges for the safeguards of
    :mod:`spanbert_lib.safeguards.hooks` to be added (after the repairs, per module) once this library is in use:
    the ``allennlp`` command or any module of the library (:func:`uses_the_library`). A program
    that imports allennlp without this library gets the repairs only. Idempotent.
    """
    if is_installed():
        return
    from spanbert_lib.compat import shims

    finder = CallbackFinder()
    for module_name, before, after in shims.SHIMS:
        finder.register(module_name, before=before, after=after)
    finder.trigger, finder.on_trigger = uses_the_library, install_safeguards
    sys.meta_path.insert(0, finder)
    # A module imported before the hook existed gets its callback now.
    for module_name, _, after in shims.SHIMS:
        module = sys.modules.get(module_name)
        if module is not None and after is not None:
            after(module)
    if any(uses_the_library(name) for name in list(sys.modules)):
        install_safeguards()


_safeguards_installed = False


def _being_imported(module: ModuleType) -> bool:
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def safeguards_installed() -> bool:
    return _safeguards_installed


def install_safeguards() -> None:
    """
    Adds the safeguards of :mod:`spanbert_lib.safeguards.hooks` to the import hook (installing it first when
    missing); a module already imported gets them at once. Idempotent.
    """
    global _safeguards_installed
    if _safeguards_installed:
        return
    _safeguards_installed = True
    install()
    from spanbert_lib.safeguards import hooks

    finder = _installed_finder()
    assert finder is not None
    for module_name, before, after in hooks.SAFEGUARDS:
        finder.register(module_name, before=before, after=after)
    for module_name, before, after in hooks.SAFEGUARDS:
        module = sys.modules.get(module_name)
        if module is None or _being_imported(module):  # the finder's loader runs its callbacks when it is done
            continue
        if before is not None:
            before(module)
        if after is not None:
            after(module)
