"""Every third-party module `src/cowork` imports comes from a dependency `pyproject.toml` declares."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).parents[1]
SRC = ROOT / "src" / "cowork"


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {_normalise(re.split(r"[\s\[<>=!~;]", spec, maxsplit=1)[0]) for spec in project["dependencies"]}


def _imported_top_level() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "cowork":
                    found.setdefault(top, path)
    return found


def test_every_import_is_declared() -> None:
    providers = packages_distributions()
    declared = _declared()
    undeclared = {
        module: str(path.relative_to(ROOT))
        for module, path in _imported_top_level().items()
        if not any(_normalise(dist) in declared for dist in providers.get(module, []))
    }
    assert not undeclared, f"imported but not declared in pyproject.toml [project.dependencies]: {undeclared}"


def test_the_scan_sees_imports() -> None:
    # Guards the test above against passing because it found nothing.
    imported = _imported_top_level()
    assert {"pydantic", "mcp", "bashlex", "sqlalchemy"} <= imported.keys()
