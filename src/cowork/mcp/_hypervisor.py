"""The MCP hypervisor: every configured server, its status, its tools in the registry, and the `mcp/*` actions.

Long because it is the one owner of the servers' lifecycle (start, stop, reconnect, trust, configs from files and
the database); the per-server work is `_server`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from cowork.config import EnvironmentConfig, McpConfig, WorkspaceTrust
from cowork.policy import ServerPolicy
from cowork.protocol import (
    ErrorCode,
    ErrorSource,
    McpAddParams,
    McpServerInfo,
    McpStatus,
    McpToolInfo,
    McpTrustResult,
    McpUpdateParams,
    McpValidateParams,
    McpValidateResult,
    ProtocolError,
)
from cowork.store import Database, repos
from cowork.tools import ToolRegistry

from . import _config
from ._config import ConfigFileError, ServerConfig, load_file, merge_layers
from ._notices import Notices
from ._secrets import SecretLookup
from ._server import AuthProvider, McpServer, McpUnavailable
from ._tool import McpTool

if TYPE_CHECKING:
    import mcp_types

__all__ = ["McpHypervisor", "trust_key"]

log = logging.getLogger(__name__)


def trust_key(workspace: Path | str) -> str:
    return f"mcp.trusted_workspace:{Path(workspace).resolve()}"


def _not_found(name: str) -> ProtocolError:
    return ProtocolError(
        ErrorCode.MCP_SERVER_NOT_FOUND,
        f"No MCP server named {name!r}. mcp/list shows the configured servers.",
        source=ErrorSource.SERVER,
    )


def _invalid(message: str) -> ProtocolError:
    return ProtocolError(ErrorCode.INVALID_PARAMS, message, source=ErrorSource.SERVER)


class McpHypervisor:
    """Owns every MCP server of this Cowork process (one per server process)."""

    def __init__(
        self,
        *,
        db: Database,
        home: Path,
        workspace: Path,
        settings: McpConfig,
        registry: ToolRegistry,
        notices: Notices,
        auth_provider: AuthProvider | None = None,
        secret: SecretLookup | None = None,
        environment: EnvironmentConfig | None = None,
    ) -> None:
        self._db = db
        self._notification_listeners: list[Callable[[str, str, dict[str, Any]], None]] = []
        self._environment = environment
        """`tools.environment`: what stdio servers get of Cowork's environment."""
        self._secret = secret
        self._home = home
        self._workspace = workspace.resolve()
        self._settings = settings
        self._registry = registry
        self._notices = notices
        self.auth_provider = auth_provider
        self.lock_dir = home / "run" / "mcp"
        self._servers: dict[str, McpServer] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._trust = WorkspaceTrust(home)
        """Trusted workspaces (one list with the configuration's, see `cowork.config.WorkspaceTrust`)."""
        self._trusted: set[str] = set()
        self.config_errors: list[str] = []
        self.swept: list[int] = []

    # -- lifecycle --------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Sweep orphans a crashed Cowork left, import the config files, and start the autoStart servers."""
        grace = self._settings.stop_grace_seconds
        self.swept = await anyio.to_thread.run_sync(lambda: _sweep(self.lock_dir, grace))
        workspace_file = self._workspace / ".cowork" / "mcp-servers.json"
        user_file = self._home / "mcp-servers.json"
        layers: list[list[ServerConfig]] = []
        for path, source in ((workspace_file, "workspace"), (user_file, "user")):
            try:
                layers.append(
                    await anyio.to_thread.run_sync(
                        lambda p=path, s=source: load_file(p, source=s, workspace=str(self._workspace))  # type: ignore[misc]
                    )
                )
            except ConfigFileError as exc:
                log.warning("MCP: %s", exc)
                self.config_errors.append(str(exc))
                layers.append([])
        stored_rows = await self._db.read(repos.mcp_servers.all_rows)
        stored = {row.name: row for row in stored_rows}
        merged, stale = merge_layers(
            [ServerConfig.from_row(r) for r in stored_rows], layers[0], layers[1], _config.BUILTIN_SERVERS()
        )
        now = datetime.now(UTC)
        self._trusted = await self._load_trust()

        def save(conn: Any) -> None:
            for name in stale:
                repos.mcp_servers.delete(conn, name)
            for config in merged:
                old = stored.get(config.name)
                if config.source != "database":
                    repos.mcp_servers.upsert(
                        conn,
                        config.to_row(
                            created_at=old.created_at if old else now,
                            updated_at=now,
                            tools=old.tools if old else [],
                        ),
                    )

        await self._db.write(save)
        for config in merged:
            old = stored.get(config.name)
            self._servers[config.name] = self._make(config, _cached_tools(old.tools) if old else [])
        for server in self._servers.values():
            self._settle(server)
            self._register_tools(server)
            if self._startable(server) and server.config.auto_start:
                self._spawn(server.start())

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.gather(*(s.stop() for s in self._servers.values()), return_exceptions=True)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _make(self, config: ServerConfig, cached: list[mcp_types.Tool] | None = None) -> McpServer:
        return McpServer(
            config,
            settings=self._settings,
            lock_dir=self.lock_dir,
            on_change=self._on_change,
            on_tools=self._on_tools,
            auth_provider=self.auth_provider,
            secret=self._secret,
            cached_tools=cached,
            environment=self._environment,
            on_notification=self._notified,
        )

    def on_notification(self, listener: Callable[[str, str, dict[str, Any]], None]) -> Callable[[], None]:
        """Be told of every notification any server sends (server, method, params); returns the unsubscriber."""
        self._notification_listeners.append(listener)
        return lambda: self._notification_listeners.remove(listener)

    def _notified(self, server: str, method: str, params: dict[str, Any]) -> None:
        for listener in list(self._notification_listeners):
            listener(server, method, params)

    async def _load_trust(self) -> set[str]:
        """The trusted workspaces; those an older Cowork kept in the database move to the user's trust file."""
        legacy = await self._db.read(lambda c: repos.settings.all_values(c, prefix="mcp.trusted_workspace:"))
        moved = [Path(key.split(":", 1)[1]) for key, value in legacy.items() if value]
        if moved:
            await anyio.to_thread.run_sync(lambda: self._trust.add(*moved))

            def forget(conn: Any) -> None:
                for path in moved:
                    repos.settings.delete(conn, trust_key(path))

            await self._db.write(forget)
        return await anyio.to_thread.run_sync(self._trust.all)

    def _untrusted(self, config: ServerConfig) -> bool:
        return (
            config.source == "workspace"
            and config.transport == "stdio"
            and str(Path(config.workspace or self._workspace).resolve()) not in self._trusted
        )

    @staticmethod
    def _startable(server: McpServer) -> bool:
        return server.status is McpStatus.STOPPED

    def _settle(self, server: McpServer) -> None:
        """The resting status a server that is not running should show."""
        config = server.config
        if not config.enabled:
            server.set_status(McpStatus.DISABLED, "Disabled; mcp/enable turns it on.")
        elif self._untrusted(config):
            server.set_status(
                McpStatus.UNTRUSTED,
                f"Defined by the workspace {config.workspace}, which is not trusted yet: stdio servers from a "
                "workspace's .cowork/mcp-servers.json run only after you trust it (`/mcp trust` in the REPL, mcp/trust).",
            )
        elif not config.auto_start:
            server.set_status(McpStatus.STOPPED, "autoStart is off: it starts on first use.")
        else:
            server.set_status(McpStatus.STOPPED)

    # -- events -----------------------------------------------------------------------------------------------

    def _on_change(self, server: McpServer) -> None:
        if self._servers.get(server.name) is server:
            self._notices.publish("mcp/status", self.info_of(server))

    async def _on_tools(self, server: McpServer) -> None:
        if self._servers.get(server.name) is not server:
            return
        self._register_tools(server)
        dumped = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in server.tools]
        await self._db.write(lambda c: repos.mcp_servers.set_tools(c, server.name, dumped))

    def _register_tools(self, server: McpServer) -> None:
        prefix = f"mcp__{server.name}__"
        for name in [n for n in self._registry.names() if n.startswith(prefix)]:
            self._registry.unregister(name)
        if server.status.is_blocked:
            return
        for tool in server.tools:
            mcp_tool = McpTool(self, server.name, tool)
            if self._registry.get(mcp_tool.name) is None:
                self._registry.register(mcp_tool)

    def _unregister_tools(self, name: str) -> None:
        prefix = f"mcp__{name}__"
        for tool in [n for n in self._registry.names() if n.startswith(prefix)]:
            self._registry.unregister(tool)

    # -- queries ----------------------------------------------------------------------------------------------

    def info_of(self, server: McpServer) -> McpServerInfo:
        c = server.config
        return McpServerInfo(
            name=c.name,
            transport=c.transport,
            command=c.command,
            args=list(c.args),
            url=c.url,
            status=server.status,
            reason=server.reason,
            enabled=c.enabled,
            auto_start=c.auto_start,
            source=c.source,
            policy=c.policy,
            allowed_tools=list(c.allowed_tools),
            tools=[McpToolInfo(name=t.name, description=t.description or "") for t in server.tools],
            pid=server.pid,
            restarts=server.restarts,
            updated_at=server.updated_at,
        )

    def server(self, name: str) -> McpServer:
        server = self._servers.get(name)
        if server is None:
            raise _not_found(name)
        return server

    def list(self) -> list[McpServerInfo]:
        return [self.info_of(s) for s in sorted(self._servers.values(), key=lambda s: s.name)]

    def info(self, name: str) -> McpServerInfo:
        return self.info_of(self.server(name))

    def policy_of(self, name: str) -> ServerPolicy:
        server = self._servers.get(name)
        if server is None:
            return ServerPolicy()
        allow = set(server.config.allowed_tools)
        allow |= {t.name for t in server.tools if t.annotations and t.annotations.read_only_hint}
        return ServerPolicy(mode=server.config.policy, allow=frozenset(allow))

    # -- calls ------------------------------------------------------------------------------------------------

    async def call_tool(self, server_name: str, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call a tool on a server (starting it if needed).

        Raises:
            ToolError: the server is unavailable; the message says why.
        """
        from cowork.tools import ToolError

        server = self._servers.get(server_name)
        if server is None:
            raise ToolError(f"The MCP server {server_name!r} is no longer configured.")
        try:
            return await server.call_tool(tool, arguments)
        except McpUnavailable as exc:
            raise ToolError(f"MCP server {server_name}: {exc}") from None

    # -- changes ----------------------------------------------------------------------------------------------

    async def _save(self, config: ServerConfig, server: McpServer | None) -> None:
        now = datetime.now(UTC)
        tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in (server.tools if server else [])]
        old = await self._db.read(lambda c: repos.mcp_servers.get(c, config.name))
        row = config.to_row(created_at=old.created_at if old else now, updated_at=now, tools=tools)
        await self._db.write(lambda c: repos.mcp_servers.upsert(c, row))

    async def add(self, params: McpAddParams) -> McpServerInfo:
        if params.name in self._servers:
            raise ProtocolError(
                ErrorCode.MCP_SERVER_EXISTS,
                f"An MCP server named {params.name!r} already exists; use mcp/update to change it.",
                source=ErrorSource.SERVER,
            )
        config = ServerConfig(
            name=params.name,
            transport=params.transport,
            command=params.command,
            args=tuple(params.args),
            env=dict(params.env),
            url=params.url,
            headers=dict(params.headers),
            cwd=params.cwd,
            enabled=params.enabled,
            auto_start=params.auto_start,
            policy=params.policy,
            allowed_tools=tuple(params.allowed_tools),
        )
        problem = config.problem()
        if problem is not None:
            raise _invalid(problem)
        await self._save(config, None)
        server = self._make(config)
        self._servers[config.name] = server
        self._settle(server)
        if self._startable(server) and config.auto_start:
            self._spawn(server.start())
        return self.info_of(server)

    async def update(self, params: McpUpdateParams) -> McpServerInfo:
        server = self.server(params.name)
        changes = {k: v for k, v in params.model_dump(exclude_unset=True).items() if k != "name"}
        for key in ("args", "allowed_tools"):
            if key in changes and changes[key] is not None:
                changes[key] = tuple(changes[key])
        changes = {k: v for k, v in changes.items() if v is not None}
        old = server.config
        config = replace(old, **changes, source="database")
        problem = config.problem()
        if problem is not None:
            raise _invalid(problem)
        await self._save(config, server)
        server.config = config
        if config.connection() != old.connection() or config.enabled != old.enabled:
            await self._restart_if_needed(server, was_running=server.status.is_live or server.status is McpStatus.ERROR)
        else:
            self._register_tools(server)
            self._on_change(server)
        return self.info_of(server)

    async def _restart_if_needed(self, server: McpServer, *, was_running: bool) -> None:
        await server.stop()
        self._settle(server)
        self._register_tools(server)
        if self._startable(server) and (was_running or server.config.auto_start):
            self._spawn(server.start())

    async def remove(self, name: str) -> None:
        server = self.server(name)
        await self._db.write(lambda c: repos.mcp_servers.delete(c, name))
        del self._servers[name]
        self._unregister_tools(name)
        await server.stop()

    async def set_enabled(self, name: str, enabled: bool) -> McpServerInfo:
        server = self.server(name)
        config = replace(server.config, enabled=enabled)
        await self._save(config, server)
        server.config = config
        if not enabled:
            await server.stop(McpStatus.DISABLED, "Disabled; mcp/enable turns it on.")
            self._register_tools(server)
        elif server.status is McpStatus.DISABLED:
            self._settle(server)
            self._register_tools(server)
            if self._startable(server) and config.auto_start:
                self._spawn(server.start())
        return self.info_of(server)

    async def restart(self, name: str) -> McpServerInfo:
        server = self.server(name)
        if server.status.is_blocked:
            return self.info_of(server)
        await server.stop()
        server.restarts = 0
        self._spawn(server.start())
        await asyncio.sleep(0)
        return self.info_of(server)

    async def reconnect(self, name: str) -> None:
        """Start a server again after its sign-in stored tokens (the OAuth manager's `on_authorized`)."""
        if name in self._servers:
            await self.restart(name)

    async def add_config(self, config: dict[str, Any]) -> None:
        """Add a server an install produced (the install service's `save`)."""
        await self.add(McpAddParams.model_validate(config))

    async def exists(self, name: str) -> bool:
        return name in self._servers

    async def trust(self, workspace: str | None) -> McpTrustResult:
        def resolve() -> Path | None:
            path = Path(workspace).expanduser().resolve() if workspace else self._workspace
            return path if path.is_dir() else None

        found = await anyio.to_thread.run_sync(resolve)
        if found is None:
            raise ProtocolError(
                ErrorCode.WORKSPACE_NOT_FOUND, f"No such workspace directory: {workspace}", source=ErrorSource.SERVER
            )
        path = found
        await anyio.to_thread.run_sync(lambda: self._trust.add(path))
        self._trusted.add(str(path))
        for server in self._servers.values():
            if server.status is McpStatus.UNTRUSTED and not self._untrusted(server.config):
                self._settle(server)
                self._register_tools(server)
                if self._startable(server) and server.config.auto_start:
                    self._spawn(server.start())
        return McpTrustResult(workspace=str(path), trusted=True)

    async def validate(self, params: McpValidateParams) -> McpValidateResult:
        if params.transport is None:
            config = self.server(params.name).config
        else:
            config = ServerConfig(
                name=params.name,
                transport=params.transport,
                command=params.command,
                args=tuple(params.args),
                env=dict(params.env),
                url=params.url,
                headers=dict(params.headers),
                cwd=params.cwd,
            )
            problem = config.problem()
            if problem is not None:
                raise _invalid(problem)
        probe = McpServer(
            config,
            settings=self._settings.model_copy(update={"max_restarts": 0}),
            lock_dir=self.lock_dir,
            on_change=lambda _s: None,
            on_tools=_no_tools,
            auth_provider=self.auth_provider,
            environment=self._environment,
        )
        started = time.monotonic()
        try:
            await probe.session()
        except McpUnavailable as exc:
            return McpValidateResult(ok=False, error=str(exc), stderr_tail=probe.stderr_tail)
        finally:
            latency = (time.monotonic() - started) * 1000
            tools = [McpToolInfo(name=t.name, description=t.description or "") for t in probe.tools]
            await probe.stop()
        return McpValidateResult(ok=True, tools=tools, latency_ms=round(latency, 1), stderr_tail=probe.stderr_tail)


async def _no_tools(_server: McpServer) -> None:
    return None


def _cached_tools(tools: list[dict[str, Any]]) -> list[mcp_types.Tool]:
    """The tool list a server had when it last ran (shown and offered before it starts again)."""
    if not tools:
        return []
    import mcp_types  # not before it is needed: with no MCP server configured, the SDK never loads

    return [mcp_types.Tool.model_validate(t) for t in tools]


def _sweep(lock_dir: Path, grace: float) -> list[int]:
    from ._lockfiles import sweep_orphans

    return sweep_orphans(lock_dir, grace=grace)
