"""Names a package exports but imports on first use (PEP 562), for submodules too heavy for start-up.

A server answers `initialize` without pydantic-ai's model layer or the shell parser; the packages that wrap them
still export their names, and the module behind a name loads when the name is first read::

    if TYPE_CHECKING:  # what mypy and readers see
        from ._stream import stream_model
    else:
        __getattr__ = lazy_exports(__name__, {"stream_model": "._stream"})

The `__getattr__` stays out of mypy's sight: with it, mypy would type every unknown name of the package as Any.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: `modules` maps each lazy name to its (relative) module."""

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # later reads are plain attribute lookups
        return value

    return __getattr__
