"""`docs/architecture.md` stays the ownership list: every package and every built-in tool is named in it."""

from __future__ import annotations

import re
from pathlib import Path

from cowork.tools import builtin_tools

ROOT = Path(__file__).parents[1]
SRC = ROOT / "src" / "cowork"
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def _documented_names() -> set[str]:
    """Every `cowork.x[.y]` written in backticks in the page that names a module (lowercase), not an attribute."""
    return set(re.findall(r"`(cowork(?:\.[a-z_][a-z0-9_]*)+)`", DOC))


def _packages() -> list[str]:
    """`cowork.x` for every subpackage and public top-level module, and `cowork.x.y` for nested subpackages."""
    names = []
    for path in sorted(SRC.iterdir()):
        if path.is_dir() and (path / "__init__.py").exists():
            names.append(f"cowork.{path.name}")
            names += [
                f"cowork.{path.name}.{sub.name}"
                for sub in sorted(path.iterdir())
                if sub.is_dir() and (sub / "__init__.py").exists() and not sub.name.startswith("_")
            ]
        elif path.suffix == ".py" and not path.name.startswith("_"):
            names.append(f"cowork.{path.stem}")
    return names


def test_every_package_is_in_the_ownership_list() -> None:
    documented = _documented_names()
    missing = [name for name in _packages() if name not in documented]
    assert not missing, f"docs/architecture.md does not say who owns: {missing}"


def test_every_documented_package_exists() -> None:
    existing = set(_packages())
    stale = sorted(
        name
        for name in _documented_names()
        if name not in existing
        and not (SRC / Path(*name.split(".")[1:])).with_suffix(".py").exists()
        and not (SRC / Path(*name.split(".")[1:])).is_dir()
    )
    assert not stale, f"docs/architecture.md names what no longer exists: {stale}"


def test_every_builtin_tool_is_listed() -> None:
    missing = [tool.name for tool in builtin_tools() if f"`{tool.name}`" not in DOC]
    assert not missing, f"docs/architecture.md does not list the built-in tools {missing}"
