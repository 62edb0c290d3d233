"""Installing an MCP server on the wire: the install state machine's snapshots, its methods, and OAuth sign-in."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Self

from pydantic import Field, model_validator

from ._base import OsText, Params, WireModel

__all__ = [
    "INSTALL_STATES",
    "DependencyInfo",
    "InstallInfo",
    "InstallState",
    "McpAuthStartParams",
    "McpAuthStartResult",
    "McpInstallContinueParams",
    "McpInstallListParams",
    "McpInstallListResult",
    "McpInstallRef",
    "McpInstallStartParams",
]


class InstallState(StrEnum):
    """Where an install stands (its transition table is `cowork.mcp.install.INSTALL_MACHINE`).

    The values are UPPER_CASE on the wire and in the `mcp_installs` table alike.
    """

    FETCHING_MANIFEST = "FETCHING_MANIFEST"
    CHECKING_DEPENDENCIES = "CHECKING_DEPENDENCIES"
    DEPENDENCIES_REQUIRED = "DEPENDENCIES_REQUIRED"
    """Paused until the missing programs are installed and `mcp/install/continue` is called."""
    CONFIGURATION_REQUIRED = "CONFIGURATION_REQUIRED"
    """Paused until `mcp/install/continue` sends the configuration form's values."""
    STARTING = "STARTING"
    SAVING = "SAVING"
    COMPLETED = "COMPLETED"
    ERROR = "ERROR"
    """Stopped with a reason until `mcp/install/continue` retries (or `mcp/install/cancel` ends it)."""
    CANCELLED = "CANCELLED"

    @property
    def is_final(self) -> bool:
        """Ended for good (completed, cancelled): `mcp/install/continue` refuses it."""
        return self in (InstallState.COMPLETED, InstallState.CANCELLED)

    @property
    def is_paused(self) -> bool:
        """Waiting for the user (dependencies or configuration required) until `mcp/install/continue`."""
        return self in (InstallState.DEPENDENCIES_REQUIRED, InstallState.CONFIGURATION_REQUIRED)

    @property
    def is_working(self) -> bool:
        """A step is under way; an install a stopped Cowork left here is shown as an error that `continue` retries."""
        return self in (
            InstallState.FETCHING_MANIFEST,
            InstallState.CHECKING_DEPENDENCIES,
            InstallState.STARTING,
            InstallState.SAVING,
        )


INSTALL_STATES: tuple[str, ...] = tuple(state.value for state in InstallState)


class DependencyInfo(WireModel):
    """One program a server needs, and what this machine has."""

    name: str
    required: str | None = Field(default=None, description="A version requirement such as `>=18`, or null for any.")
    found: bool = Field(description="The program is on PATH.")
    version: str | None = Field(default=None, description="The version it reported, when it reports one.")
    satisfied: bool
    install_hint: str | None = Field(
        default=None, description="How to install it on this platform, when it is missing or too old."
    )


class InstallInfo(WireModel):
    """A snapshot of one install: sent as the result of every `mcp/install/*` call and as `mcp/install`."""

    install_id: str
    name: str
    state: InstallState
    progress: int = Field(ge=0, le=100, description="Percent done.")
    message: str = Field(description="What is happening, or what the user has to do next.")
    dependencies: list[DependencyInfo] = Field(default_factory=list)
    form: dict[str, Any] | None = Field(
        default=None,
        description="In `CONFIGURATION_REQUIRED`: the JSON schema of the configuration to submit; properties with "
        "`x-secret: true` are secrets (kept in the credential store, never in the database).",
    )
    error: str | None = None
    stderr_tail: str | None = Field(default=None, description="The last lines the server wrote to stderr.")
    tools: list[str] = Field(default_factory=list, description="The server's tools, once it has started.")
    updated_at: datetime | None = None


class McpInstallStartParams(Params):
    manifest: dict[str, Any] | None = Field(
        default=None,
        description="The server's manifest: name, description, transport, command/args or url, env, headers, "
        "dependencies, config (a JSON schema). See docs/mcp-install.md.",
    )
    manifest_path: OsText | None = Field(
        default=None, min_length=1, max_length=4096, description="A manifest JSON file on the server's machine."
    )
    wait: bool = Field(
        default=True,
        description="Answer once the install pauses or ends (true) or at once, following it with `mcp/install`.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.manifest is None) == (self.manifest_path is None):
            raise ValueError("give exactly one of manifest and manifestPath")
        return self


class McpInstallContinueParams(Params):
    install_id: str = Field(min_length=1, max_length=64)
    values: dict[str, Any] | None = Field(
        default=None, description="The configuration form's values (needed in `CONFIGURATION_REQUIRED`)."
    )
    wait: bool = Field(default=True, description="Answer once the install pauses or ends (true) or at once.")


class McpInstallRef(Params):
    install_id: str = Field(min_length=1, max_length=64)


class McpInstallListParams(Params):
    pass


class McpInstallListResult(WireModel):
    installs: list[InstallInfo] = Field(description="Every install, newest first.")


class McpAuthStartParams(Params):
    name: str = Field(min_length=1, max_length=40, description="The HTTP MCP server to sign in to.")


class McpAuthStartResult(WireModel):
    name: str
    authorization_url: str = Field(
        description="Open this in a browser; the server receives the code on its loopback callback and stores the "
        "tokens in the credential store."
    )
