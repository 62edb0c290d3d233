"""The runtime package's shape: one place creates operations, no import cycles, small modules, no reaching in."""

from __future__ import annotations

import ast
from pathlib import Path

RUNTIME = Path(__file__).parents[2] / "src" / "cowork" / "runtime"
MODULES = sorted(RUNTIME.glob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _is_operations_insert(node: ast.AST) -> bool:
    """`repos.operations.insert(...)`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "insert"):
        return False
    owner = node.func.value
    return (
        isinstance(owner, ast.Attribute)
        and owner.attr == "operations"
        and isinstance(owner.value, ast.Name)
        and owner.value.id == "repos"
    )


def test_new_operation_is_the_only_place_that_inserts_an_operation() -> None:
    inserting = sorted(path.name for path in MODULES for node in ast.walk(_tree(path)) if _is_operations_insert(node))
    assert inserting == ["_operations.py"]


def _runtime_imports(path: Path) -> set[str]:
    """Sibling modules imported when the module is imported (what `if TYPE_CHECKING:` guards does not count)."""
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
                continue
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                found.add(node.module)
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("cowork.runtime."):
                found.add(node.module.removeprefix("cowork.runtime."))

    visit(_tree(path).body)
    return found


def test_runtime_modules_import_each_other_without_cycles() -> None:
    graph = {path.stem: _runtime_imports(path) for path in MODULES if path.stem != "__init__"}
    done: set[str] = set()

    def walk(module: str, trail: list[str]) -> None:
        assert module not in trail, f"import cycle: {' -> '.join([*trail, module])}"
        if module in done:
            return
        for imported in graph.get(module, ()):
            walk(imported, [*trail, module])
        done.add(module)

    for module in graph:
        walk(module, [])


def test_no_runtime_module_is_over_500_lines() -> None:
    sizes = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in MODULES}
    assert {name: lines for name, lines in sizes.items() if lines > 500} == {}


def test_runtime_modules_use_no_private_member_of_another_object() -> None:
    """`x._y` only on `self` (and `cls`): collaborators are used through their public API."""
    reaching = [
        f"{path.name}:{node.lineno}: {ast.unparse(node)}"
        for path in MODULES
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"})
    ]
    assert reaching == []
