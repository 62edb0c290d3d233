"""How each subsystem of a core stands now: ready, degraded or disabled, and why (`health`, `/healthz`).

Every check reads live state and is cheap (one trivial database read, no network request), so a client may ask
at any time. A subsystem is one entry of `CHECKS`; a new one is one more entry there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeAlias

from cowork.protocol import HealthResult, McpServerInfo, McpStatus, ProtocolError, SubsystemHealth, SubsystemStatus
from cowork.sessions import GIT_MISSING, git_path
from cowork.store import repos
from cowork.toolbox import InstallState

if TYPE_CHECKING:
    from cowork.core import Core

__all__ = ["CHECKS", "Check", "Judgement", "check_health"]

Judgement: TypeAlias = tuple[SubsystemStatus, str | None]
Check: TypeAlias = Callable[["Core"], Awaitable[Judgement]]

_READY: Judgement = ("ready", None)

_MCP_DEGRADED = (McpStatus.ERROR, McpStatus.AUTH_REQUIRED, McpStatus.UNTRUSTED)
"""Statuses of an enabled server that leave its tools unavailable until something (or someone) acts. `stopped` is
not among them: such a server starts on its first use."""


async def check_health(core: Core) -> HealthResult:
    """Every subsystem's status and reason, in `CHECKS` order; `degraded` overall when any subsystem is."""
    subsystems: list[SubsystemHealth] = []
    for name, check in CHECKS.items():
        status, reason = await check(core)
        subsystems.append(SubsystemHealth(name=name, status=status, reason=reason))
    degraded = any(s.status == "degraded" for s in subsystems)
    return HealthResult(status="degraded" if degraded else "ready", subsystems=subsystems)


async def _store(core: Core) -> Judgement:
    try:
        await core.db.read(lambda conn: repos.settings.get(conn, "health"))
    except Exception as exc:
        return "degraded", f"The database cannot be read ({core.db.where}): {type(exc).__name__}: {exc}"
    return _READY


async def _providers(core: Core) -> Judgement:
    try:
        core.selector.resolve(None, None)  # what a turn in a new session uses (no network: a key or a base URL)
    except ProtocolError as exc:
        return "degraded", exc.message  # the words `turn/start` would refuse with (`no_provider`)
    return _READY


async def _mcp(core: Core) -> Judgement:
    errors = list(core.mcp.config_errors)
    servers = core.mcp.list()
    if not servers and not errors:
        return "disabled", "No MCP servers are configured."
    enabled = [s for s in servers if s.enabled]
    if not enabled and not errors:
        return "disabled", "Every MCP server is disabled."
    errors += [_mcp_problem(s) for s in enabled if s.status in _MCP_DEGRADED]
    return ("degraded", "; ".join(errors)) if errors else _READY


def _mcp_problem(server: McpServerInfo) -> str:
    return f"{server.name} ({server.status}): {server.reason}" if server.reason else f"{server.name}: {server.status}"


async def _sandbox(core: Core) -> Judgement:
    if not core.config.tools.sandbox.enabled:
        return "disabled", core.sandbox_note
    if core.bwrap is None:
        return "degraded", core.sandbox_note
    return _READY


async def _checkpoints(core: Core) -> Judgement:
    if not core.checkpoints.enabled:
        return "disabled", "Checkpoints are off (checkpoints.enabled = false): changes cannot be taken back."
    if git_path() is None:
        return "degraded", GIT_MISSING
    return _READY


async def _tracing(core: Core) -> Judgement:
    return core.tracing.status()


async def _toolbox(core: Core) -> Judgement:
    installer = core.toolbox
    if not installer.settings.enabled:
        return "disabled", "The document toolbox is off (tools.toolbox.enabled = false)."
    status = installer.toolbox.status()
    if status.state == "ready":
        return _READY
    if status.state == "installing":
        return "disabled", "Being installed; shell commands get it once it is ready."
    if installer.state is InstallState.FAILED:
        return "degraded", f"The install failed: {installer.error}; retry with `cowork toolbox install`."
    if status.state == "broken":
        return "degraded", f"Broken: {status.reason}."
    if installer.settings.install != "background":
        setting = installer.settings.install
        return "disabled", f"Not installed (tools.toolbox.install = {setting}): run `cowork toolbox install`."
    return "disabled", "Not installed yet: installed in the background after start-up (or `cowork toolbox install`)."


async def _embedder(core: Core) -> Judgement:
    return core.retrieval.embedder_health()


async def _capture(core: Core) -> Judgement:
    status = core.capture.status()
    if status.capturing:
        return _READY
    if core.capture.failed and status.state == "unavailable":  # it ran, and its source went away
        return "degraded", status.reason
    return "disabled", status.reason or "Not capturing."


async def _scheduler(core: Core) -> Judgement:
    problem = core.automations.scheduler_problem()
    if problem is not None:
        return "degraded", problem
    return _READY


CHECKS: Mapping[str, Check] = MappingProxyType(
    {
        "store": _store,
        "providers": _providers,
        "mcp": _mcp,
        "sandbox": _sandbox,
        "checkpoints": _checkpoints,
        "tracing": _tracing,
        "toolbox": _toolbox,
        "embedder": _embedder,
        "capture": _capture,
        "scheduler": _scheduler,
    }
)
