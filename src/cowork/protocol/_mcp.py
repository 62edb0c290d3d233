"""MCP servers on the wire: their configuration, their live status, and the `mcp/*` methods."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal, TypeAlias

from pydantic import Field

from ._base import OsText, Params, WireModel

__all__ = [
    "McpAddParams",
    "McpListResult",
    "McpNameParams",
    "McpPolicy",
    "McpRemoveResult",
    "McpServerInfo",
    "McpSource",
    "McpStatus",
    "McpToolInfo",
    "McpTransport",
    "McpTrustParams",
    "McpTrustResult",
    "McpUpdateParams",
    "McpValidateParams",
    "McpValidateResult",
]

McpTransport: TypeAlias = Literal["stdio", "http", "sse"]


class McpStatus(StrEnum):
    """Where a configured MCP server stands (its transition table is `SERVER_MACHINE` in `cowork/mcp/_server.py`)."""

    STOPPED = "stopped"
    """Not connected; starts on first use (or at start-up with autoStart)."""
    STARTING = "starting"
    RUNNING = "running"
    ERROR = "error"
    """It failed to start or lost its connection; `reason` says why (and whether it is reconnecting)."""
    AUTH_REQUIRED = "auth_required"
    """An HTTP/SSE server answered 401: sign in with `mcp/auth/start`."""
    DISABLED = "disabled"
    UNTRUSTED = "untrusted"
    """A stdio server from a workspace that is not trusted yet (`mcp/trust`)."""

    @property
    def is_live(self) -> bool:
        """A connection is being made or is up (starting, running): the server has no resting reason to show."""
        return self in (McpStatus.STARTING, McpStatus.RUNNING)

    @property
    def is_blocked(self) -> bool:
        """Nothing may start it until the user acts (disabled: `mcp/enable`; untrusted: `mcp/trust`)."""
        return self in (McpStatus.DISABLED, McpStatus.UNTRUSTED)


McpSource: TypeAlias = Literal["database", "workspace", "user", "builtin"]
McpPolicy: TypeAlias = Literal["manual", "allow-list", "auto-run"]

_NAME = r"^[a-z0-9_-]{1,40}$"
_NAME_FIELD = Field(
    pattern=_NAME, description="Lowercase letters, digits, `_` and `-`; tools are `mcp__<name>__<tool>`."
)


class McpToolInfo(WireModel):
    name: str = Field(description="The server's own tool name (not prefixed).")
    description: str = ""


class McpServerInfo(WireModel):
    """One configured MCP server and its live state (also the params of the `mcp/status` notification)."""

    name: str
    transport: McpTransport
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    url: str | None = None
    status: McpStatus
    reason: str | None = Field(default=None, description="Why it is in error, auth_required or untrusted.")
    enabled: bool = True
    auto_start: bool = True
    source: McpSource = "database"
    policy: McpPolicy = "manual"
    allowed_tools: list[str] = Field(default_factory=list)
    tools: list[McpToolInfo] = Field(default_factory=list)
    pid: int | None = None
    restarts: int = 0
    updated_at: datetime


class McpListResult(WireModel):
    servers: list[McpServerInfo]


class McpUpdateParams(Params):
    """Fields to change; those left out keep their value."""

    name: str = _NAME_FIELD
    transport: McpTransport | None = None
    command: OsText | None = None
    args: list[OsText] | None = None
    env: dict[OsText, OsText] | None = None
    url: str | None = None
    headers: dict[str, str] | None = None
    cwd: OsText | None = None
    enabled: bool | None = None
    auto_start: bool | None = None
    policy: McpPolicy | None = None
    allowed_tools: list[str] | None = None


class McpAddParams(Params):
    name: str = _NAME_FIELD
    transport: McpTransport
    command: OsText | None = Field(default=None, description="stdio: the executable.")
    args: list[OsText] = Field(default_factory=list)
    env: dict[OsText, OsText] = Field(default_factory=dict)
    url: str | None = Field(default=None, description="http / sse: the endpoint.")
    headers: dict[str, str] = Field(default_factory=dict)
    cwd: OsText | None = None
    enabled: bool = True
    auto_start: bool = True
    policy: McpPolicy = "manual"
    allowed_tools: list[str] = Field(default_factory=list)


class McpNameParams(Params):
    name: str


class McpRemoveResult(WireModel):
    name: str
    removed: bool = True


class McpValidateParams(Params):
    """Either a full server configuration (as in `mcp/add`; nothing is saved) or just the name of a configured one."""

    name: str
    transport: McpTransport | None = None
    command: OsText | None = None
    args: list[OsText] = Field(default_factory=list)
    env: dict[OsText, OsText] = Field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    cwd: OsText | None = None


class McpValidateResult(WireModel):
    ok: bool
    tools: list[McpToolInfo] = Field(default_factory=list)
    error: str | None = None
    stderr_tail: str | None = Field(default=None, description="The last lines a stdio server wrote to stderr.")
    latency_ms: float | None = Field(default=None, description="Time to connect and list the tools.")


class McpTrustParams(Params):
    workspace: OsText | None = Field(default=None, description="Default: the server's workspace.")


class McpTrustResult(WireModel):
    workspace: str
    trusted: bool = True
