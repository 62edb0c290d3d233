"""The install service: drives each install through its state machine, persisting every transition.

manifest → dependency check → (dependencies required: pause) → (configuration required: pause) → start the server
and list its tools → save → completed; or error, with the reason and the server's stderr tail. A restarted Cowork
finds paused installs where they were; one that was mid-step is shown as an error that `continue` retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from cowork.credentials import CredentialStore
from cowork.mcp._secrets import credential_reference, expand_credentials
from cowork.protocol import DependencyInfo, ErrorCode, ErrorSource, InstallInfo, InstallState, ProtocolError
from cowork.store import Database, repos
from cowork.store.repos.mcp_installs import McpInstallRow

from ._deps import check_dependencies
from ._manifest import Manifest, config_problems, credential_name, load_manifest, render, secret_fields
from ._probe import ProbeFailed, ServerSpec, list_tools
from ._states import INSTALL_MACHINE, PROGRESS

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "AuthFactory",
    "ExistsFn",
    "InstallListener",
    "InstallService",
    "RemoveFn",
    "SaveFn",
    "credential_reference",
    "expand_credentials",
]

log = logging.getLogger(__name__)

SaveFn = Callable[[dict[str, Any]], Awaitable[None]]
"""Adds the installed server (a dict shaped like `mcp/add`'s params, snake_case) to the hypervisor."""
RemoveFn = Callable[[str], Awaitable[None]]
"""Removes a server by name (a cancel after the save)."""
ExistsFn = Callable[[str], Awaitable[bool]]
"""Whether a server of that name is configured already."""
InstallListener = Callable[[InstallInfo], None]
AuthFactory = Callable[[str, str], "httpx2.Auth"]

_MESSAGES: dict[InstallState, str] = {
    InstallState.FETCHING_MANIFEST: "Reading the manifest.",
    InstallState.CHECKING_DEPENDENCIES: "Checking the programs the server needs.",
    InstallState.DEPENDENCIES_REQUIRED: "Some programs the server needs are missing or too old: install them, then continue.",
    InstallState.CONFIGURATION_REQUIRED: "Fill in the server's configuration, then continue.",
    InstallState.STARTING: "Starting the server and listing its tools.",
    InstallState.SAVING: "Saving the server.",
    InstallState.COMPLETED: "Installed.",
    InstallState.CANCELLED: "Cancelled.",
}


def _now() -> datetime:
    return datetime.now(UTC)


class InstallService:
    """Every install of one Cowork home."""

    def __init__(
        self,
        db: Database,
        credentials: CredentialStore,
        *,
        save: SaveFn,
        remove: RemoveFn | None = None,
        exists: ExistsFn | None = None,
        auth: AuthFactory | None = None,
        start_timeout: float = 30.0,
        platform: str | None = None,
    ) -> None:
        """Args:
        db: the store holding `mcp_installs`.
        credentials: where secret configuration values go.
        save: adds the finished server (wired to the hypervisor's add).
        remove: removes a saved server when an install is cancelled after saving.
        exists: refuses an install whose name a configured server already has.
        auth: `(server, url) -> httpx2.Auth` for HTTP servers that need OAuth.
        start_timeout: seconds the server has to start and list its tools.
        platform: `sys.platform` value for install instructions (tests).
        """
        self._db = db
        self._credentials = credentials
        self._save = save
        self._remove = remove
        self._exists = exists
        self._auth = auth
        self._timeout = start_timeout
        self._platform = platform
        self._listeners: list[InstallListener] = []
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._rows: dict[str, McpInstallRow] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._loaded = False

    # -- listeners -----------------------------------------------------------------------------------------------

    def subscribe(self, listener: InstallListener) -> Callable[[], None]:
        """Call `listener` with the install's snapshot after every persisted change; returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _notify(self, row: McpInstallRow) -> None:
        info = self.info(row)
        for listener in list(self._listeners):
            try:
                listener(info)
            except Exception:
                log.exception("mcp/install listener failed")

    # -- lifecycle -----------------------------------------------------------------------------------------------

    async def load(self) -> None:
        """Read the installs; one a previous process left mid-step becomes an error that `continue` retries."""
        if self._loaded:
            return
        self._loaded = True
        for row in await self._db.read(repos.mcp_installs.list_all):
            state = InstallState(row.state)
            if state.is_working and row.id not in self._tasks:
                row.state, row.error = InstallState.ERROR, f"Cowork stopped during {state}; continue to retry."
                row.message, row.updated_at = row.error, _now()
                await self._db.write(lambda c, r=row: repos.mcp_installs.put(c, r))  # type: ignore[misc]
            self._rows[row.id] = row

    async def aclose(self) -> None:
        """Stop running steps (their server processes are stopped); the next `load` shows them as interrupted."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task

    # -- queries -------------------------------------------------------------------------------------------------

    def info(self, row: McpInstallRow) -> InstallInfo:
        state = InstallState(row.state)
        manifest = row.manifest
        return InstallInfo(
            install_id=row.id,
            name=row.name,
            state=state,
            progress=row.progress,
            message=row.message,
            dependencies=[DependencyInfo.model_validate(d) for d in row.dependencies],
            form=manifest.get("config") if state == InstallState.CONFIGURATION_REQUIRED else None,
            error=row.error,
            stderr_tail=row.stderr_tail,
            tools=row.tools,
            updated_at=row.updated_at,
        )

    async def get(self, install_id: str) -> InstallInfo:
        return self.info(await self._row(install_id))

    async def list(self) -> list[InstallInfo]:
        await self.load()
        rows = sorted(self._rows.values(), key=lambda r: (r.created_at, r.id), reverse=True)
        return [self.info(r) for r in rows]

    async def _row(self, install_id: str) -> McpInstallRow:
        await self.load()
        row = self._rows.get(install_id)
        if row is None:
            raise ProtocolError(
                ErrorCode.MCP_INSTALL_NOT_FOUND, f"No install {install_id!r}.", source=ErrorSource.SERVER
            )
        return row

    def _lock(self, install_id: str) -> asyncio.Lock:
        return self._locks.setdefault(install_id, asyncio.Lock())

    # -- commands ------------------------------------------------------------------------------------------------

    async def start(
        self, manifest: dict[str, Any] | None = None, manifest_path: str | None = None, *, wait: bool = True
    ) -> InstallInfo:
        """Begin installing a server; with `wait`, answer once it pauses or ends.

        Raises:
            ProtocolError: `invalid_params` for a bad manifest or a name already in use, `busy` when the same
                server is being installed already. Nothing is stored then.
        """
        await self.load()
        parsed = load_manifest(manifest, manifest_path)
        for other in self._rows.values():
            other_state = InstallState(other.state)
            if other.name == parsed.name and not (other_state.is_final or other_state is InstallState.ERROR):
                raise ProtocolError(
                    ErrorCode.BUSY,
                    f"{parsed.name} is being installed already (install {other.id}, {other.state}).",
                    source=ErrorSource.SERVER,
                )
        if self._exists is not None and await self._exists(parsed.name):
            raise ProtocolError(
                ErrorCode.INVALID_PARAMS,
                f"An MCP server named {parsed.name!r} exists already; remove it first or choose another name.",
                source=ErrorSource.SERVER,
            )
        now = _now()
        row = McpInstallRow(
            id=f"inst_{uuid.uuid4().hex[:20]}",
            name=parsed.name,
            state=InstallState.FETCHING_MANIFEST,
            progress=PROGRESS[InstallState.FETCHING_MANIFEST],
            message=_MESSAGES[InstallState.FETCHING_MANIFEST],
            manifest=parsed.model_dump(mode="json", exclude_none=True),
            config={"configured": not _has_form(parsed), "values": {}},
            created_at=now,
            updated_at=now,
        )
        await self._db.write(lambda c: repos.mcp_installs.put(c, row))
        self._rows[row.id] = row
        self._notify(row)
        return await self._run(row, self._from_dependencies(row), wait=wait)

    async def continue_(
        self, install_id: str, values: dict[str, Any] | None = None, *, wait: bool = True
    ) -> InstallInfo:
        """Resume a paused install (or retry a failed one); `values` answers the configuration form.

        Raises:
            ProtocolError: `invalid_params` when the values do not fit the form (nothing changes), `busy` while a
                step runs, `not_resumable` once it completed or was cancelled.
        """
        row = await self._row(install_id)
        async with self._lock(install_id):
            state = InstallState(row.state)
            if install_id in self._tasks or state.is_working:
                raise ProtocolError(
                    ErrorCode.BUSY, f"Install {install_id} is {state}; wait for it to pause.", source=ErrorSource.SERVER
                )
            if state.is_final:
                raise ProtocolError(
                    ErrorCode.NOT_RESUMABLE, f"Install {install_id} is {state}.", source=ErrorSource.SERVER
                )
            manifest = Manifest.model_validate(row.manifest)
            if state == InstallState.CONFIGURATION_REQUIRED and values is None:
                raise ProtocolError(
                    ErrorCode.INVALID_PARAMS,
                    "This install needs its configuration: send `values` matching the form.",
                    source=ErrorSource.PROTOCOL,
                )
            if values is not None:
                if not _has_form(manifest):
                    raise ProtocolError(
                        ErrorCode.INVALID_PARAMS,
                        f"{manifest.name} takes no configuration; continue without `values`.",
                        source=ErrorSource.PROTOCOL,
                    )
                if state == InstallState.DEPENDENCIES_REQUIRED:
                    raise ProtocolError(
                        ErrorCode.INVALID_PARAMS,
                        "Install the missing programs first; the configuration form comes next.",
                        source=ErrorSource.PROTOCOL,
                    )
                await self._configure(row, manifest, values)
            if state == InstallState.CONFIGURATION_REQUIRED:
                step = self._from_start(row)
            else:
                step = self._from_dependencies(row)
        return await self._run(row, step, wait=wait)

    async def cancel(self, install_id: str) -> InstallInfo:
        """Stop the install wherever it is: stop its server, delete its secrets and any saved config.

        Raises:
            ProtocolError: `not_resumable` once it completed (remove the server instead).
        """
        row = await self._row(install_id)
        task = self._tasks.get(install_id)
        if task is not None:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        async with self._lock(install_id):
            state = InstallState(row.state)
            if state == InstallState.CANCELLED:
                return self.info(row)
            if state == InstallState.COMPLETED:
                raise ProtocolError(
                    ErrorCode.NOT_RESUMABLE,
                    f"{row.name} is installed; remove it with mcp/remove instead.",
                    source=ErrorSource.SERVER,
                )
            await self._cleanup(row)
            await self._transition(row, InstallState.CANCELLED)
        return self.info(row)

    # -- steps ---------------------------------------------------------------------------------------------------

    async def _run(self, row: McpInstallRow, step: Awaitable[None], *, wait: bool) -> InstallInfo:
        task = asyncio.create_task(self._guard(row, step), name=f"mcp-install-{row.id}")
        self._tasks[row.id] = task
        task.add_done_callback(lambda t: self._tasks.pop(row.id, None) if self._tasks.get(row.id) is t else None)
        if wait:
            # Shielded: a client that goes away does not cancel the install; only mcp/install/cancel does.
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)
        else:
            await asyncio.sleep(0)
        return self.info(row)

    async def _guard(self, row: McpInstallRow, step: Awaitable[None]) -> None:
        try:
            await step
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("install %s failed", row.id)
            if InstallState(row.state).is_working:
                await self._fail(row, f"{type(exc).__name__}: {exc}", None)

    async def _from_dependencies(self, row: McpInstallRow) -> None:
        manifest = Manifest.model_validate(row.manifest)
        await self._transition(row, InstallState.CHECKING_DEPENDENCIES, error=None, stderr_tail=None)
        found = await check_dependencies(manifest.dependencies, platform=self._platform)
        row.dependencies = [d.model_dump(mode="json") for d in found]
        if not all(d.satisfied for d in found):
            missing = ", ".join(d.name for d in found if not d.satisfied)
            await self._transition(
                row, InstallState.DEPENDENCIES_REQUIRED, message=f"Install {missing}, then continue."
            )
            return
        if not row.config.get("configured"):
            await self._transition(row, InstallState.CONFIGURATION_REQUIRED)
            return
        await self._from_start(row)

    async def _from_start(self, row: McpInstallRow) -> None:
        manifest = Manifest.model_validate(row.manifest)
        await self._transition(row, InstallState.STARTING, error=None, stderr_tail=None)
        values = dict(row.config.get("values", {}))
        secrets = secret_fields(manifest.config)
        for field in secrets:
            name = credential_name(manifest.name, field)
            secret = await anyio.to_thread.run_sync(self._credentials.get, name)
            if secret is not None:
                values[field] = secret
        spec = _spec(manifest, values)
        auth = self._auth(manifest.name, spec.url) if self._auth is not None and spec.url else None
        try:
            tools = await list_tools(spec, within=self._timeout, auth=auth)
        except ProbeFailed as exc:
            await self._fail(row, exc.reason, exc.stderr_tail)
            return
        row.tools = tools
        await self._transition(row, InstallState.SAVING, message=f"Saving {manifest.name} ({len(tools)} tools).")
        references = {f: credential_reference(credential_name(manifest.name, f)) for f in secrets}
        await self._save(_server_config(manifest, dict(row.config.get("values", {})) | references))
        row.saved = True
        await self._transition(
            row, InstallState.COMPLETED, message=f"Installed {manifest.name} with {len(tools)} tools."
        )

    async def _configure(self, row: McpInstallRow, manifest: Manifest, values: dict[str, Any]) -> None:
        problems = config_problems(manifest.config, values)
        if problems:
            summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems)
            raise ProtocolError(
                ErrorCode.INVALID_PARAMS,
                f"Invalid configuration for {manifest.name}: {summary}",
                source=ErrorSource.PROTOCOL,
                details={"errors": problems},
            )
        secrets = set(secret_fields(manifest.config))
        stored: list[str] = []
        for field in sorted(secrets & set(values)):
            secret = values[field]
            if not isinstance(secret, str) or not secret:
                continue
            name = credential_name(manifest.name, field)
            try:
                await anyio.to_thread.run_sync(self._credentials.set, name, secret)
            except ValueError as exc:
                raise ProtocolError(ErrorCode.INVALID_PARAMS, f"{field}: {exc}", source=ErrorSource.PROTOCOL) from None
            except Exception as exc:
                raise ProtocolError(
                    ErrorCode.CREDENTIALS_ERROR,
                    f"Cannot store {field} in the credential store: {exc}",
                    source=ErrorSource.SERVER,
                ) from None
            stored.append(name)
        row.secrets = sorted(set(row.secrets) | set(stored))
        row.config = {"configured": True, "values": {k: v for k, v in values.items() if k not in secrets}}
        row.updated_at = _now()
        await self._db.write(lambda c: repos.mcp_installs.put(c, row))

    async def _cleanup(self, row: McpInstallRow) -> None:
        for name in row.secrets:
            try:
                await anyio.to_thread.run_sync(self._credentials.delete, name)
            except Exception:
                log.exception("could not delete %s", name)
        row.secrets = []
        if (row.saved or InstallState(row.state) == InstallState.SAVING) and self._remove is not None:
            try:
                await self._remove(row.name)
            except Exception:
                log.warning("could not remove the saved server %s", row.name, exc_info=True)
        row.saved = False
        row.config = {"configured": row.config.get("configured", False), "values": {}}

    async def _fail(self, row: McpInstallRow, reason: str, stderr_tail: str | None) -> None:
        await self._transition(row, InstallState.ERROR, message=reason, error=reason, stderr_tail=stderr_tail)

    async def _transition(
        self, row: McpInstallRow, target: InstallState, *, message: str | None = None, **changes: Any
    ) -> None:
        INSTALL_MACHINE.check(InstallState(row.state), target, subject=row.id)
        row.state = target.value
        row.progress = PROGRESS.get(target, row.progress)
        row.message = message or _MESSAGES.get(target, "")
        for key, value in changes.items():
            setattr(row, key, value)
        row.updated_at = _now()
        # Persist before telling anyone: a restart finds exactly what clients were last shown.
        snapshot = dataclasses.replace(row)
        await asyncio.shield(self._db.write(lambda c: repos.mcp_installs.put(c, snapshot)))
        self._notify(row)


def _has_form(manifest: Manifest) -> bool:
    return bool((manifest.config or {}).get("properties"))


def _spec(manifest: Manifest, values: dict[str, Any]) -> ServerSpec:
    return ServerSpec(
        transport=manifest.transport,
        command=render(manifest.command, values) if manifest.command else None,
        args=tuple(render(a, values) for a in manifest.args),
        env=tuple((k, render(v, values)) for k, v in manifest.env.items()),
        url=render(manifest.url, values) if manifest.url else None,
        headers=tuple((k, render(v, values)) for k, v in manifest.headers.items()),
    )


def _server_config(manifest: Manifest, values: dict[str, Any]) -> dict[str, Any]:
    """The server as `mcp/add` takes it; secrets appear only as `${credential:...}` references."""
    spec = _spec(manifest, values)
    config: dict[str, Any] = {"name": manifest.name, "transport": manifest.transport}
    if spec.command is not None:
        config |= {"command": spec.command, "args": list(spec.args)}
    if spec.url is not None:
        config["url"] = spec.url
    if spec.env:
        config["env"] = dict(spec.env)
    if spec.headers:
        config["headers"] = dict(spec.headers)
    return config
