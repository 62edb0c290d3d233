"""Names a package exports but imports on first use (PEP 562), for submodules too heavy for start-up.

A server answers `initialize` without pydantic-ai's model layer or the shell parser; the packages that wrap them
still export their names, and the module behind a name loads when the name is first read::

    if TYPE_CHECKING:  # what mypy and readers see
        from ._stream import stream_model
    else:
        __getattr__ = lazy_exports(__name__, {"stream_model": "._stream"})

The `__getattr__` stays out of mypy's sight: with it, mypy would type every unknown name of the package as Any.

Loading such modules for the first time takes `HEAVY_IMPORTS`: the server's warm-up imports them in a thread of
its own while the event loop answers requests, and two threads importing pydantic-ai at once can each find the
other's modules half-initialised (`ImportError: cannot import name … from partially initialized module`, or
importlib's `_DeadlockError`). With the lock, a first turn that needs them waits for the warm-up instead.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["HEAVY_IMPORTS", "lazy_exports"]

HEAVY_IMPORTS = threading.RLock()
"""Held while pydantic-ai, a provider SDK or a module built on them is imported the first time (see above)."""


def lazy_exports(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: `modules` maps each lazy name to its (relative) module."""

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        with HEAVY_IMPORTS:
            value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # later reads are plain attribute lookups
        return value

    return __getattr__
