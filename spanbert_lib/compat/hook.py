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


def is_installed() -> bool:
    return any(isinstance(finder, CallbackFinder) for finder in sys.meta_path)


def install() -> None:
    """
    Registers every repair of :mod:`spanbert_lib.compat.shims`, then every safeguard of
    :mod:`spanbert_lib.safeguards.hooks` (in that order, per module). Idempotent.
    """
    if is_installed():
        return
    from spanbert_lib.compat import shims
    from spanbert_lib.safeguards import hooks

    callbacks = [*shims.SHIMS, *hooks.SAFEGUARDS]
    finder = CallbackFinder()
    for module_name, before, after in callbacks:
        finder.register(module_name, before=before, after=after)
    sys.meta_path.insert(0, finder)
    # A module imported before the hook existed gets its callback now.
    for module_name, _, after in callbacks:
        module = sys.modules.get(module_name)
        if module is not None and after is not None:
            after(module)
