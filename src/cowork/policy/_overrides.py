"""Per-tool policy overrides the user set (`always` ask, `never` ask, `inherit`): persisted, listed, changed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Protocol, cast

from cowork.protocol import ErrorCode, ErrorSource, ProtocolError, ToolInfo, ToolSetPolicyParams
from cowork.store import Database, repos

from ._approval import ToolOverride

__all__ = ["ToolCatalog", "ToolPolicies"]


class _ToolFacts(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def side_effects(self) -> bool: ...


class ToolCatalog(Protocol):
    """The tools whose policy can be set (the tool registry; `cowork.tools` depends on this package, not back)."""

    def __iter__(self) -> Iterator[_ToolFacts]: ...
    def names(self) -> list[str]: ...


class ToolPolicies:
    """The overrides in memory (read at every approval decision) and in the store."""

    def __init__(self, db: Database, tools: ToolCatalog) -> None:
        self._db = db
        self._tools = tools
        self._overrides: dict[str, ToolOverride] = {}

    async def load(self) -> None:
        """Read the overrides saved by an earlier run."""
        stored = await self._db.read(repos.tool_policies.all_overrides)
        self._overrides = {tool: cast(ToolOverride, policy) for tool, policy in stored.items()}

    def overrides(self) -> Mapping[str, ToolOverride]:
        """Tool name → override, for tools that have one."""
        return self._overrides

    def infos(self) -> list[ToolInfo]:
        """Every tool with its summary and override (`tool/list`)."""
        return [
            ToolInfo(
                name=tool.name,
                summary=tool.description.strip().splitlines()[0],
                side_effects=tool.side_effects,
                policy=self._overrides.get(tool.name, "inherit"),
            )
            for tool in self._tools
        ]

    async def set(self, params: ToolSetPolicyParams) -> ToolInfo:
        """Save a tool's override (`tool/setPolicy`); it applies to the next approval decision.

        Raises:
            ProtocolError: `tool_not_found`.
        """
        if params.name not in self._tools.names():
            raise ProtocolError(
                ErrorCode.TOOL_NOT_FOUND,
                f"No tool named {params.name!r}. Known tools: {', '.join(self._tools.names())}.",
                source=ErrorSource.RUNTIME,
            )
        now = datetime.now(UTC)
        await self._db.write(lambda conn: repos.tool_policies.set_override(conn, params.name, params.policy, now=now))
        if params.policy == "inherit":
            self._overrides.pop(params.name, None)
        else:
            self._overrides[params.name] = params.policy
        return next(info for info in self.infos() if info.name == params.name)
