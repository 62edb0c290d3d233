"""The architecture stays visible: the core knows no transport, the protocol knows nothing of ours, clients are thin."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src" / "cowork"
STDLIB = set(sys.stdlib_module_names)

CORE_PACKAGES = [
    "config",
    "store",
    "sessions",
    "runtime",
    "models",
    "tools",
    "prompts",
    "policy",
    "sandbox",
    "credentials",
    "providers",
    "usage",
    "routing",
    "mcp",
    "capture",
    "machines",
    "automations",
    "notify",
]
TRANSPORT = {"starlette", "uvicorn", "websockets", "wsproto", "cowork.server", "cowork.clients"}
CLIENT_ALLOWED = {"cowork.protocol", "cowork.clients", "rich", "prompt_toolkit", "websockets", "textual", "pydantic"}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = module.split(".")[:-1]  # the file's package, for modules and __init__ alike
                base = package[: len(package) - (node.level - 1)]
                names.add(".".join([*base, *(node.module.split(".") if node.module else [])]))
            elif node.module:
                names.add(node.module)
    return names


def test_relative_imports_resolve() -> None:
    names = imports_of(SRC / "server" / "__init__.py")
    assert "cowork.server._app" in names and "cowork.server._main" in names


def within(name: str, prefixes: set[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def files(package: str) -> list[Path]:
    root = SRC / package
    return sorted(root.rglob("*.py")) if root.is_dir() else [SRC / f"{package}.py"]


@pytest.mark.parametrize("package", [*CORE_PACKAGES, "core"])
def test_core_does_not_import_transports(package: str) -> None:
    for path in files(package):
        bad = {name for name in imports_of(path) if within(name, TRANSPORT)}
        assert not bad, f"{path.relative_to(SRC)} imports {bad}"


def test_protocol_depends_only_on_pydantic_and_the_standard_library() -> None:
    for path in files("protocol"):
        for name in imports_of(path):
            top = name.split(".")[0]
            assert top in STDLIB or top in {"pydantic", "pydantic_core"} or within(name, {"cowork.protocol"}), (
                f"{path.relative_to(SRC)} imports {name}"
            )


def test_clients_import_only_the_protocol_their_transport_and_ui_libraries() -> None:
    for path in files("clients"):
        for name in imports_of(path):
            top = name.split(".")[0]
            ok = top in STDLIB or within(name, CLIENT_ALLOWED) or name == "cowork"
            assert ok, f"{path.relative_to(SRC)} imports {name}"


def test_sql_lives_only_in_the_store() -> None:
    for package in [*CORE_PACKAGES, "core", "server", "clients", "protocol"]:
        if package == "store":
            continue
        for path in files(package):
            bad = {n for n in imports_of(path) if n.split(".")[0] in {"sqlalchemy", "alembic", "sqlite3"}}
            assert not bad, f"{path.relative_to(SRC)} imports {bad}"


def test_long_modules_say_why() -> None:
    """Small modules with one job: one over 500 lines says in its docstring why it is long."""
    unexplained = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 500:
            docstring = ast.get_docstring(ast.parse(text)) or ""
            if "Over 500 lines" not in docstring and "Long because" not in docstring:
                unexplained.append(f"{path.relative_to(SRC)} ({text.count(chr(10))} lines)")
    assert not unexplained, f"modules over 500 lines without a reason in their docstring: {unexplained}"
