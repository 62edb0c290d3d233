"""The handler registry matches the protocol: every method has a handler, every handler a method, with its types."""

from __future__ import annotations

import ast
import inspect
import typing
from collections.abc import Mapping
from pathlib import Path

from cowork.protocol import METHODS, EmptyParams, MethodSpec, PingResult, SessionRef
from cowork.server import _handlers
from cowork.server._handlers import server, sessions
from cowork.server._registry import HANDLERS, Handler

HANDLER_MODULES = Path(_handlers.__file__).parent


def problems(handlers: Mapping[str, Handler], methods: Mapping[str, MethodSpec]) -> list[str]:
    """Every way `handlers` and `methods` disagree, one line each."""
    found = [f"{name}: protocol method without a handler" for name in methods if name not in handlers]
    found += [f"{name}: handler for a name that is not a protocol method" for name in handlers if name not in methods]
    for name in handlers.keys() & methods.keys():
        handler, spec = handlers[name], methods[name]
        if not inspect.iscoroutinefunction(handler):
            found.append(f"{name}: {handler.__qualname__} is not an async function")
            continue
        hints = typing.get_type_hints(handler)
        if hints.get("params") is not spec.params:
            found.append(f"{name}: {handler.__qualname__} takes {hints.get('params')}, not {spec.params.__name__}")
        if hints.get("return") is not spec.result:
            found.append(f"{name}: {handler.__qualname__} returns {hints.get('return')}, not {spec.result.__name__}")
    return found


def test_every_protocol_method_has_exactly_one_handler_with_the_methods_types() -> None:
    assert problems(HANDLERS, METHODS) == []


def test_the_check_names_a_missing_handler_an_extra_one_and_wrong_types() -> None:
    table = dict(HANDLERS)
    del table["turn/steer"]
    table["session/rename"] = sessions.session_create
    table["session/unsubscribe"] = server.ping  # takes EmptyParams, returns PingResult
    assert sorted(problems(table, METHODS)) == [
        "session/rename: handler for a name that is not a protocol method",
        f"session/unsubscribe: ping returns {PingResult}, not {METHODS['session/unsubscribe'].result.__name__}",
        f"session/unsubscribe: ping takes {EmptyParams}, not {SessionRef.__name__}",
        "turn/steer: protocol method without a handler",
    ]


def test_handler_modules_register_nothing_themselves() -> None:
    """Handler modules are plain functions: none imports the registry (no registration by import side effect)."""
    for path in sorted(HANDLER_MODULES.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            node.module or ""
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and "registry" in node.module
        }
        assert not imported, f"{path.name} imports {imported}"
        assert not any(
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.decorator_list for node in tree.body
        ), f"{path.name} decorates a handler"
