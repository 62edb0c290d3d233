"""Layered configuration: built-in defaults → user file → workspace file → `COWORK_*` environment variables."""

from __future__ import annotations

import copy
import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ._model import CoworkConfig
from ._paths import CoworkPaths, resolve_home
from ._trust import TIGHTENING_LISTS, WorkspaceTrust, workspace_may_set

__all__ = ["ConfigError", "LoadedConfig", "load_config"]

_NOT_CONFIG_ENV = frozenset({"COWORK_HOME", "COWORK_TOKEN", "COWORK_URL"})
"""`COWORK_*` variables that are not configuration keys."""


@dataclass(frozen=True)
class ConfigProblem:
    source: str
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.key}: {self.message}"


class ConfigError(Exception):
    """Configuration that cannot be used. Each problem names the file (or variable), the key and what was expected."""

    def __init__(self, problems: list[ConfigProblem]) -> None:
        self.problems = problems
        super().__init__("Invalid configuration:\n" + "\n".join(f"  {p}" for p in problems))


@dataclass(frozen=True)
class LoadedConfig:
    config: CoworkConfig
    paths: CoworkPaths
    workspace: Path
    sources: dict[str, str] = field(default_factory=dict)
    """Dotted key → where its value came from (a file path or an environment variable)."""
    trusted: bool = False
    """Whether the user trusts this workspace (its config may then set any key)."""
    ignored: tuple[str, ...] = ()
    """Keys of the workspace's config that were ignored because the workspace is not trusted."""

    def warnings(self) -> list[str]:
        """What the user should be told about how their configuration was read."""
        if not self.ignored:
            return []
        keys = ", ".join(self.ignored)
        return [
            f"Ignored in {self.workspace / '.cowork' / 'config.toml'} (this workspace is not trusted, and these "
            f"settings could lower security): {keys}. Put them in {self.paths.config_file}, or trust the workspace "
            "(/mcp trust in the REPL, or mcp/trust) and restart the server."
        ]


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([ConfigProblem(str(path), "(file)", f"not valid TOML: {exc}")]) from None
    except OSError as exc:
        raise ConfigError([ConfigProblem(str(path), "(file)", f"cannot be read: {exc.strerror}")]) from None


def _merge(into: dict[str, Any], layer: dict[str, Any], source: str, sources: dict[str, str], prefix: str = "") -> None:
    for key, value in layer.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value, source, sources, f"{dotted}.")
        else:
            into[key] = copy.deepcopy(value)
            sources[dotted] = source
            if isinstance(value, dict):
                for sub in _leaf_keys(value, f"{dotted}."):
                    sources[sub] = source


def _leaf_keys(value: dict[str, Any], prefix: str) -> list[str]:
    keys = []
    for key, sub in value.items():
        keys.append(f"{prefix}{key}")
        if isinstance(sub, dict):
            keys += _leaf_keys(sub, f"{prefix}{key}.")
    return keys


def _split_untrusted(layer: dict[str, Any], prefix: str = "") -> tuple[dict[str, Any], list[str]]:
    """The part of an untrusted workspace's config that may apply, and the dotted keys that may not."""
    kept: dict[str, Any] = {}
    ignored: list[str] = []
    for key, value in layer.items():
        dotted = f"{prefix}{key}"
        if workspace_may_set(dotted):
            kept[key] = value
        elif isinstance(value, dict):
            sub, dropped = _split_untrusted(value, f"{dotted}.")
            if sub:
                kept[key] = sub
            ignored += dropped
        else:
            ignored.append(dotted)
    return kept, ignored


def _lookup(tree: dict[str, Any], dotted: str) -> Any:
    node: Any = tree
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _tighten(layer: dict[str, Any], merged: dict[str, Any]) -> None:
    """Make the workspace's deny lists add to the user's instead of replacing them."""
    for dotted in TIGHTENING_LISTS:
        ours, theirs = _lookup(layer, dotted), _lookup(merged, dotted)
        if isinstance(ours, list) and isinstance(theirs, list):
            *parents, last = dotted.split(".")
            node = layer
            for part in parents:
                node = node[part]
            node[last] = [*theirs, *(item for item in ours if item not in theirs)]


def _env_layer(env: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """`COWORK_MODEL=x` → `model`, `COWORK_SERVER__PORT=9` → `server.port`; JSON values (lists) are decoded."""
    layer: dict[str, Any] = {}
    names: dict[str, str] = {}
    top_level = set(CoworkConfig.model_fields)
    for name, raw in env.items():
        if not name.startswith("COWORK_") or name in _NOT_CONFIG_ENV or not raw:
            continue
        path = name[len("COWORK_") :].lower().split("__")
        if path[0] not in top_level:
            continue
        value: Any = raw
        if raw[:1] in "[{":
            try:
                value = json.loads(raw)
            except ValueError:
                value = raw
        node = layer
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
        names[".".join(path)] = name
    return layer, names


def _source_for(loc: tuple[int | str, ...], sources: dict[str, str]) -> tuple[str, str]:
    parts = [str(p) for p in loc]
    for end in range(len(parts), 0, -1):
        key = ".".join(parts[:end])
        if key in sources:
            return sources[key], ".".join(parts)
    return "built-in defaults", ".".join(parts) or "(root)"


def _describe(err: Any) -> str:
    if err["type"] == "extra_forbidden":
        return "unknown key"
    if err["type"] == "value_error":
        # A validator's own message says what was expected; the value is not repeated (a URL may hold a password).
        return str(err["ctx"]["error"])
    got = err.get("input")
    shown = json.dumps(got, default=str) if not isinstance(got, dict) else "a table"
    return f"expected {err['msg'].lower().removeprefix('input should be ')}, got {shown}"


def load_config(
    workspace: Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    overrides: dict[str, Any] | None = None,
) -> LoadedConfig:
    """Load and validate the layered configuration for `workspace` (default: the current directory).

    Raises:
        ConfigError: a file is unreadable or not TOML, or a value does not match the schema.
    """
    env = os.environ if env is None else env
    paths = CoworkPaths(resolve_home(env))
    workspace = (workspace or Path.cwd()).resolve()
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    workspace_file = workspace / ".cowork" / "config.toml"
    _merge(merged, _read_toml(paths.config_file), str(paths.config_file), sources)
    trusted = WorkspaceTrust(paths.home).is_trusted(workspace)
    layer = _read_toml(workspace_file)
    ignored: list[str] = []
    if not trusted:
        layer, ignored = _split_untrusted(layer)
    _tighten(layer, merged)
    _merge(merged, layer, str(workspace_file), sources)
    env_layer, env_names = _env_layer(env)
    _merge(merged, env_layer, "environment", sources)
    for key, var in env_names.items():
        sources[key] = f"environment variable {var}"
    if overrides:
        _merge(merged, overrides, "command line", sources)
    try:
        config = CoworkConfig.model_validate(merged)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            source, key = _source_for(err["loc"], sources)
            problems.append(ConfigProblem(source, key, _describe(err)))
        raise ConfigError(problems) from None
    return LoadedConfig(
        config=config, paths=paths, workspace=workspace, sources=sources, trusted=trusted, ignored=tuple(ignored)
    )
