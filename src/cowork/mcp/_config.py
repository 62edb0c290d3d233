"""MCP server configuration: the layers (workspace file → user file → built-in → database) and their merge.

A config file is an import format: at start its servers are written to the database with their source
(`workspace`, `user`), refreshed from the file each start; a server added or changed over the protocol is a
`database` entry and always wins over a file entry of the same name.

File format (`<workspace>/.cowork/mcp-servers.json`, `$COWORK_HOME/mcp-servers.json`), the common
`mcpServers` shape::

    {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"], "env": {}, "autoStart": true,
                             "policy": "allow-list", "allowedTools": ["get_current_time"]},
                    "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {}}}}
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

from cowork.protocol import McpPolicy, McpSource, McpTransport
from cowork.store.repos.mcp_servers import McpServerRow

__all__ = [
    "BUILTIN_SERVERS",
    "NAME_PATTERN",
    "ConfigFileError",
    "ServerConfig",
    "load_file",
    "merge_layers",
]

NAME_PATTERN = re.compile(r"^[a-z0-9_-]{1,40}$")

BUILTIN_SERVERS: Callable[[], list[ServerConfig]] = lambda: []  # noqa: E731
"""The built-in layer (none yet): a hook returning servers every installation has."""


class ConfigFileError(ValueError):
    """A config file that cannot be read; the message names the file and the problem."""


@dataclass(frozen=True)
class ServerConfig:
    name: str
    transport: McpTransport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    enabled: bool = True
    auto_start: bool = True
    policy: McpPolicy = "manual"
    allowed_tools: tuple[str, ...] = ()
    source: McpSource = "database"
    workspace: str | None = None
    """For a `workspace` server: the workspace whose file defines it (trust is per workspace)."""

    def problem(self) -> str | None:
        """Why this configuration cannot work, or None."""
        if not NAME_PATTERN.match(self.name):
            return f"Invalid MCP server name {self.name!r}: use 1-40 of a-z, 0-9, '_' and '-'."
        if self.transport == "stdio" and not self.command:
            return f"MCP server {self.name!r}: a stdio server needs a command."
        if self.transport in ("http", "sse") and not (self.url or "").startswith(("http://", "https://")):
            return f"MCP server {self.name!r}: an {self.transport} server needs an http(s) url."
        return None

    def connection(self) -> tuple[Any, ...]:
        """What a running connection depends on (a change restarts the server)."""
        return (
            self.transport,
            self.command,
            self.args,
            sorted(self.env.items()),
            self.url,
            sorted(self.headers.items()),
            self.cwd,
        )

    @classmethod
    def from_row(cls, row: McpServerRow) -> ServerConfig:
        return cls(
            name=row.name,
            transport=cast(McpTransport, row.transport),
            command=row.command,
            args=tuple(row.args),
            env=dict(row.env),
            url=row.url,
            headers=dict(row.headers),
            cwd=row.cwd,
            enabled=row.enabled,
            auto_start=row.auto_start,
            policy=cast(McpPolicy, row.policy),
            allowed_tools=tuple(row.allowed_tools),
            source=cast(McpSource, row.source),
            workspace=row.workspace,
        )

    def to_row(self, *, created_at: datetime, updated_at: datetime, tools: list[dict[str, Any]]) -> McpServerRow:
        return McpServerRow(
            name=self.name,
            transport=self.transport,
            created_at=created_at,
            updated_at=updated_at,
            command=self.command,
            args=list(self.args),
            env=dict(self.env),
            url=self.url,
            headers=dict(self.headers),
            cwd=self.cwd,
            enabled=self.enabled,
            auto_start=self.auto_start,
            policy=self.policy,
            allowed_tools=list(self.allowed_tools),
            source=self.source,
            workspace=self.workspace,
            tools=tools,
        )


_TRANSPORTS = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamable_http": "http", "sse": "sse"}


def _entry(
    name: str, raw: Any, *, source: Literal["workspace", "user"], path: Path, workspace: str | None
) -> ServerConfig:
    if not isinstance(raw, dict):
        raise ConfigFileError(f"{path}: server {name!r} must be an object")
    kind = raw.get("type") or raw.get("transport") or ("stdio" if raw.get("command") else "http")
    transport = _TRANSPORTS.get(str(kind))
    if transport is None:
        raise ConfigFileError(f"{path}: server {name!r} has unknown type {kind!r} (stdio, http or sse)")
    policy = raw.get("policy", "manual")
    if policy not in ("manual", "allow-list", "auto-run"):
        raise ConfigFileError(f"{path}: server {name!r} has unknown policy {policy!r}")
    try:
        config = ServerConfig(
            name=name,
            transport=cast(McpTransport, transport),
            command=raw.get("command"),
            args=tuple(str(a) for a in raw.get("args", [])),
            env={str(k): str(v) for k, v in raw.get("env", {}).items()},
            url=raw.get("url"),
            headers={str(k): str(v) for k, v in raw.get("headers", {}).items()},
            cwd=raw.get("cwd"),
            enabled=not raw.get("disabled", False) and bool(raw.get("enabled", True)),
            auto_start=bool(raw.get("autoStart", True)),
            policy=policy,
            allowed_tools=tuple(str(t) for t in raw.get("allowedTools", [])),
            source=source,
            workspace=workspace,
        )
    except (AttributeError, TypeError) as exc:
        raise ConfigFileError(f"{path}: server {name!r}: {exc}") from None
    problem = config.problem()
    if problem is not None:
        raise ConfigFileError(f"{path}: {problem}")
    return config


def load_file(path: Path, *, source: Literal["workspace", "user"], workspace: str | None = None) -> list[ServerConfig]:
    """The servers a config file defines ([] when it does not exist).

    Raises:
        ConfigFileError: the file is not valid JSON or a server entry is malformed.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigFileError(f"{path}: not valid JSON: {exc}") from None
    servers = data.get("mcpServers", data.get("servers", {})) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigFileError(f'{path}: expected {{"mcpServers": {{name: {{...}}}}}}')
    return [_entry(name, raw, source=source, path=path, workspace=workspace) for name, raw in servers.items()]


def merge_layers(
    stored: list[ServerConfig], workspace: list[ServerConfig], user: list[ServerConfig], builtin: list[ServerConfig]
) -> tuple[list[ServerConfig], list[str]]:
    """The servers to keep after an import, and the names of stale file entries to delete.

    Database entries win; then workspace over user over built-in. A stored file entry that no file defines any
    more is dropped.
    """
    result: dict[str, ServerConfig] = {}
    for layer in (builtin, user, workspace):
        for config in layer:
            result[config.name] = config
    stale: list[str] = []
    for config in stored:
        if config.source == "database":
            result[config.name] = config
        elif config.name in result:
            # Keep the user's switches (enabled, policy) made before the entry became a database entry? No:
            # changing a file entry over the protocol turns it into a database entry, so files stay authoritative.
            result[config.name] = replace(result[config.name])
        else:
            stale.append(config.name)
    return sorted(result.values(), key=lambda c: c.name), stale
