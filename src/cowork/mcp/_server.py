"""One MCP server's connection: the status state machine, connect with a timeout, reconnect with backoff.

Each started server has a supervisor task that owns the SDK's context managers (they must be entered and left
in one task). Tool calls run in the caller's task, so cancelling the caller cancels the request and the SDK tells
the server (`notifications/cancelled`).

The SDK is imported where a connection is opened or used, not with this module: a server process with no MCP
server running never loads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from cowork.backoff import backoff_delay
from cowork.config import EnvironmentConfig, McpConfig
from cowork.machines import InvalidTransition, StateMachine
from cowork.protocol import McpStatus
from cowork.sandbox import command_environment

from ._config import ServerConfig
from ._oauth import AuthorizationRequired
from ._secrets import SecretLookup, expand_credentials

if TYPE_CHECKING:
    import httpx2
    import mcp_types

    from mcp import ClientSession

    from ._process import StdioChild

__all__ = ["SERVER_MACHINE", "AuthProvider", "McpServer", "McpUnavailable"]

log = logging.getLogger(__name__)

AuthProvider = Callable[[str, str], "httpx2.Auth | None"]
"""(server name, url) → the httpx2 auth for an HTTP/SSE server (OAuth), or None."""

S = McpStatus

SERVER_MACHINE = StateMachine(
    "MCP server",
    McpStatus,
    {
        S.STOPPED: {S.STARTING, S.DISABLED, S.UNTRUSTED},
        S.STARTING: {S.RUNNING, S.ERROR, S.AUTH_REQUIRED, S.STOPPED, S.DISABLED},
        S.RUNNING: {S.STOPPED, S.ERROR, S.DISABLED, S.STARTING},
        S.ERROR: {S.STARTING, S.STOPPED, S.DISABLED, S.AUTH_REQUIRED},
        S.AUTH_REQUIRED: {S.STARTING, S.STOPPED, S.DISABLED},
        S.DISABLED: {S.STOPPED, S.STARTING, S.UNTRUSTED},
        S.UNTRUSTED: {S.STOPPED, S.STARTING, S.DISABLED},
    },
)
"""An MCP server's status changes. No state lists itself: the same status with a new reason is an update
(`McpServer.set_status`), and every state can be stopped or disabled (`McpServer.stop`)."""


class McpUnavailable(Exception):
    """The server cannot serve a call now; the message says why (and what to do)."""


def _auth_error(exc: BaseException) -> bool:
    import httpx2

    for e in _walk(exc):
        if isinstance(e, AuthorizationRequired):
            return True
        if isinstance(e, httpx2.HTTPStatusError) and e.response.status_code == 401:
            return True
        if "401" in str(e) and "nauthorized" in str(e):
            return True
    return False


def _walk(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    stack = [exc]
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.append(e)
        if isinstance(e, BaseExceptionGroup):
            stack.extend(e.exceptions)
        if e.__cause__ is not None:
            stack.append(e.__cause__)
        if e.__context__ is not None:
            stack.append(e.__context__)
    return seen


def _describe(exc: BaseException) -> str:
    leaves = [e for e in _walk(exc) if not isinstance(e, BaseExceptionGroup)]
    e = leaves[0] if leaves else exc
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


@dataclass
class _Live:
    session: ClientSession
    child: StdioChild | None
    died: asyncio.Event
    last_used: float


class McpServer:
    """A configured server and, when started, its live connection."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        settings: McpConfig,
        lock_dir: Path,
        on_change: Callable[[McpServer], None],
        on_tools: Callable[[McpServer], Awaitable[None]],
        auth_provider: AuthProvider | None = None,
        secret: SecretLookup | None = None,
        cached_tools: list[mcp_types.Tool] | None = None,
        environment: EnvironmentConfig | None = None,
        on_notification: Callable[[str, str, dict[str, Any]], None] | None = None,
    ) -> None:
        self.config = config
        self._on_notification = on_notification
        """Told of every notification the server sends (server name, method, params): automation triggers."""
        self._environment = environment if environment is not None else EnvironmentConfig()
        """`tools.environment`: which of Cowork's variables a stdio server gets (the server's own `env` is added)."""
        self._secret = secret
        self.settings = settings
        self.status = McpStatus.STOPPED
        self.reason: str | None = None
        self.tools: list[mcp_types.Tool] = list(cached_tools or [])
        self.pid: int | None = None
        self.restarts = 0
        self.updated_at = datetime.now(UTC)
        self.stderr_tail: str | None = None
        self._lock_dir = lock_dir
        self._on_change = on_change
        self._on_tools = on_tools
        self._auth_provider = auth_provider
        self._lock = asyncio.Lock()
        self._live: _Live | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._background: set[asyncio.Task[Any]] = set()

    @property
    def name(self) -> str:
        return self.config.name

    # -- status -----------------------------------------------------------------------------------------------

    def set_status(self, status: McpStatus, reason: str | None = None) -> None:
        """Enter `status` with `reason` (None clears it) and tell the hypervisor.

        A different status is a transition `SERVER_MACHINE` must allow. The same status is an update of the
        reason (a second failure while in error, a stopped server's note), allowed only where a reason is shown:
        a starting or running server has none, so asking for it again is a bug.

        Raises:
            InvalidTransition: the table does not allow the change, or the same live status was set again.
        """
        if status != self.status:
            SERVER_MACHINE.check(self.status, status, subject=self.name)
        elif status.is_live:
            raise InvalidTransition(SERVER_MACHINE.name, status, status, self.name)
        self.status, self.reason = status, reason
        self.updated_at = datetime.now(UTC)
        self._on_change(self)

    # -- lifecycle --------------------------------------------------------------------------------------------

    async def session(self) -> ClientSession:
        """A live session, starting the server (or pinging an idle one) first; one start however many callers.

        Raises:
            McpUnavailable: it is disabled, untrusted, needs auth, or failed to start (the message says why).
        """
        async with self._lock:
            live = self._live
            if live is not None and self.status is McpStatus.RUNNING and not live.died.is_set():
                if time.monotonic() - live.last_used > self.settings.ping_idle_seconds and not await self._ping(live):
                    await self._stop_locked(McpStatus.STOPPED)
                else:
                    live.last_used = time.monotonic()
                    return live.session
            if self.status.is_blocked:
                raise McpUnavailable(self.reason or f"The MCP server {self.name} is {self.status}.")
            if self._task is None or self._task.done():
                self.restarts = 0
            return await self._start_locked()

    async def _ping(self, live: _Live) -> bool:
        try:
            with anyio.fail_after(min(5.0, self.settings.connect_timeout_seconds)):
                await live.session.send_ping()
            return True
        except Exception:
            log.info("MCP server %s did not answer a ping; reconnecting", self.name)
            return False

    async def start(self) -> None:
        async with self._lock:
            if self._live is None or self._live.died.is_set():
                with contextlib.suppress(McpUnavailable):
                    await self._start_locked()

    async def _start_locked(self) -> ClientSession:
        if self._task is None or self._task.done():
            self._stop = asyncio.Event()
            ready: asyncio.Future[_Live] = asyncio.get_running_loop().create_future()
            self._ready = ready
            self._task = asyncio.create_task(self._supervise(ready), name=f"mcp-{self.name}")
        ready = self._ready
        if ready.done() and (ready.exception() is not None or ready.result().died.is_set() or self._live is None):
            raise McpUnavailable(self.reason or f"The MCP server {self.name} is reconnecting.")
        try:
            live = await asyncio.wait_for(asyncio.shield(ready), self.settings.connect_timeout_seconds + 5)
        except TimeoutError:
            await self._stop_locked(
                McpStatus.ERROR, f"The server did not start within {self.settings.connect_timeout_seconds:g} s."
            )
            raise McpUnavailable(self.reason or "timeout") from None
        except McpUnavailable:
            raise
        return live.session

    async def stop(self, status: McpStatus = McpStatus.STOPPED, reason: str | None = None) -> None:
        """Stop the connection (and the process) and rest in `status` with `reason`.

        Every state can be stopped or disabled; `error` is only reached from a live server (a start that timed out).

        Raises:
            InvalidTransition: `SERVER_MACHINE` does not allow `status` from where the server ended up.
        """
        async with self._lock:
            await self._stop_locked(status, reason)

    async def _stop_locked(self, status: McpStatus = McpStatus.STOPPED, reason: str | None = None) -> None:
        task = self._task
        self._stop.set()
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), self.settings.stop_grace_seconds * 2 + 5)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._task = None
        self._live = None
        self.pid = None
        if self.status != status or reason != self.reason:
            self.set_status(status, reason)

    # -- the supervisor ---------------------------------------------------------------------------------------

    async def _supervise(self, ready: asyncio.Future[_Live]) -> None:
        settings = self.settings
        first = True
        while True:
            self.set_status(McpStatus.STARTING)
            reason, ran = await self._connect_and_serve(ready)
            if reason is None or self._stop.is_set():
                return
            if (first and not ran) or self.status is McpStatus.AUTH_REQUIRED:
                return  # a failed first start is not retried here (the next call tries again)
            first = False
            if self.restarts >= settings.max_restarts:
                self.set_status(McpStatus.ERROR, f"{reason} Gave up after {self.restarts} restarts.")
                return
            delay = backoff_delay(
                self.restarts, base=settings.backoff_base_seconds, maximum=settings.backoff_max_seconds
            )
            self.restarts += 1
            self.set_status(McpStatus.ERROR, f"{reason} Reconnecting in {delay:.1f} s (attempt {self.restarts}).")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), delay)
            if self._stop.is_set():
                return
            self._ready = ready = asyncio.get_running_loop().create_future()

    async def _connect_and_serve(self, ready: asyncio.Future[_Live]) -> tuple[str | None, bool]:
        """Connect, announce `running`, and serve until stopped (None) or the connection dies (the reason); and
        whether it got to `running`."""
        from mcp import ClientSession

        child: StdioChild | None = None
        ran = False
        try:
            async with AsyncExitStack() as stack:

                def spawned(c: StdioChild) -> None:
                    nonlocal child
                    child = c
                    self.pid = c.pid

                read, write = await self._open_transport(stack, spawned)
                died = asyncio.Event()
                session = await stack.enter_async_context(ClientSession(read, write, message_handler=self._on_message))
                with anyio.move_on_after(self.settings.connect_timeout_seconds) as scope:
                    await session.initialize()
                    listing = await session.list_tools()
                if scope.cancelled_caught:
                    raise TimeoutError(
                        f"The server did not answer within {self.settings.connect_timeout_seconds:g} s "
                        "(mcp.connect_timeout_seconds)."
                    )
                self.tools = list(listing.tools)
                live = _Live(session=session, child=child, died=died, last_used=time.monotonic())
                self._live = live
                await self._on_tools(self)
                self.set_status(McpStatus.RUNNING)
                ran = True
                if not ready.done():
                    ready.set_result(live)
                waits: list[asyncio.Future[Any]] = [
                    asyncio.ensure_future(self._stop.wait()),
                    asyncio.ensure_future(died.wait()),
                ]
                if child is not None:
                    waits.append(asyncio.ensure_future(child.exited.wait()))
                try:
                    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for w in waits:
                        w.cancel()
                self._live = None
                if self._stop.is_set():
                    return None, ran
                if child is not None and child.exited.is_set():
                    with anyio.move_on_after(1):
                        await child.process.wait()
                    self.stderr_tail = child.stderr_tail()
                    return child.exit_reason(), ran
                return "The connection to the server was lost.", ran
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            self._live = None
            if child is not None:
                self.stderr_tail = child.stderr_tail()
            reason = self._reason_for(exc)
            status = McpStatus.AUTH_REQUIRED if _auth_error(exc) else McpStatus.ERROR
            if ran:
                return reason, ran  # it was running: the supervisor reconnects
            self.set_status(status, reason)
            if not ready.done():
                ready.set_exception(McpUnavailable(reason))
                ready.exception()  # retrieved here, so an unawaited failure is not logged as lost
            return reason, ran
        finally:
            self.pid = None

    def _reason_for(self, exc: BaseException) -> str:
        if _auth_error(exc):
            return f"The server at {self.config.url} needs authorization (HTTP 401); sign in with mcp/auth/start."
        reason = str(exc) if isinstance(exc, TimeoutError) and str(exc) else _describe(exc)
        if self.stderr_tail:
            reason += f" Last stderr: {self.stderr_tail.splitlines()[-1]}"
        return reason

    async def _expand(self, values: Mapping[str, str]) -> dict[str, str]:
        """Fill `${credential:<name>}` references (secrets an install saved) from the credential store."""
        lookup = self._secret
        if lookup is None or not any("${credential:" in v for v in values.values()):
            return dict(values)
        return await asyncio.to_thread(lambda: {k: expand_credentials(v, lookup) for k, v in values.items()})

    async def _open_transport(self, stack: AsyncExitStack, spawned: Callable[[StdioChild], None]) -> tuple[Any, Any]:
        from mcp.client.sse import sse_client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        from ._process import spawn_stdio

        config = self.config
        if config.transport == "stdio":
            assert config.command is not None
            read, write, _child = await stack.enter_async_context(
                spawn_stdio(
                    name=config.name,
                    command=config.command,
                    args=list(config.args),
                    # The allow-listed environment, never Cowork's own (its keys and the user's secrets), plus
                    # what the server's config sets: that comes from the user or an install the user approved.
                    env=command_environment(self._environment, os.environ) | await self._expand(config.env),
                    cwd=config.cwd or config.workspace,
                    lock_dir=self._lock_dir,
                    grace=self.settings.stop_grace_seconds,
                    on_spawn=spawned,
                )
            )
            return read, write
        assert config.url is not None
        auth = self._auth_provider(config.name, config.url) if self._auth_provider is not None else None
        if config.transport == "sse":
            read, write = await stack.enter_async_context(
                sse_client(
                    config.url,
                    headers=await self._expand(config.headers),
                    timeout=self.settings.connect_timeout_seconds,
                    auth=auth,
                )
            )
            return read, write
        client = await stack.enter_async_context(
            create_mcp_http_client(headers=await self._expand(config.headers), auth=auth)
        )
        read, write = await stack.enter_async_context(streamable_http_client(config.url, http_client=client))
        return read, write

    async def _on_message(self, message: Any) -> None:
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            task = asyncio.get_running_loop().create_task(self._refresh_tools())
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        if self._on_notification is not None and isinstance(message, mcp_types.ServerNotification):
            method = getattr(message, "method", None)
            if isinstance(method, str):
                params = getattr(message, "params", None)
                dumped = params.model_dump(mode="json", by_alias=True, exclude_none=True) if params is not None else {}
                try:
                    self._on_notification(self.name, method, dumped)
                except Exception:
                    log.exception("MCP server %s: a notification listener failed", self.name)

    async def _refresh_tools(self) -> None:
        live = self._live
        if live is None:
            return
        try:
            self.tools = list((await live.session.list_tools()).tools)
        except Exception as exc:
            log.warning("MCP server %s: listing tools after a change failed: %s", self.name, exc)
            return
        await self._on_tools(self)
        self._on_change(self)

    # -- calls ------------------------------------------------------------------------------------------------

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call a tool, starting the server first if needed. Cancelling the caller cancels the request.

        Raises:
            McpUnavailable: the server cannot be reached, or the connection died during the call.
        """
        session = await self.session()
        live = self._live
        try:
            return await session.call_tool(tool, arguments, read_timeout_seconds=self.settings.call_timeout_seconds)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            from mcp.shared.exceptions import MCPError

            if isinstance(exc, MCPError) and not (live is not None and live.child and live.child.exited.is_set()):
                raise McpUnavailable(f"The server answered with an error: {exc}") from None
            if live is not None:
                live.died.set()
            raise McpUnavailable(f"The call to the MCP server {self.name} failed: {_describe(exc)}") from None
        finally:
            if live is not None:
                live.last_used = time.monotonic()
