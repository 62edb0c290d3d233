"""The composition root: builds the store, the journal and the services, and starts and stops them.

Transport-free: the server adapts JSON-RPC to these objects, and tests can drive them directly.

Building and starting a core imports only what answering requests needs; what a turn needs (pydantic-ai's model
layer, the provider's SDK, the shell parser) loads with the first turn, or earlier with `warm_up`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio.to_thread

from cowork import __version__
from cowork.automations import AutomationService, CoreHost, LiveTriggers
from cowork.capture import CaptureService
from cowork.config import LoadedConfig
from cowork.credentials import CredentialStore
from cowork.health import check_health
from cowork.lazy import HEAVY_IMPORTS
from cowork.mcp import McpHypervisor, Notices
from cowork.mcp._oauth import OAuthManager
from cowork.mcp.install import InstallService
from cowork.memory import ConversationRecall, WorkingMemory
from cowork.models import ModelCache, ModelSelector, ModelTarget, cost_of, estimate_cost
from cowork.models import preload as preload_model
from cowork.notify import DesktopNotifier, GateSettings, NotificationService
from cowork.observability import TraceQueries, Tracing
from cowork.policy import ToolPolicies
from cowork.prompts import gather_prompt_extras
from cowork.protocol import HealthResult, ProtocolError, SessionCreateParams, WireModel
from cowork.providers import ModelChoices, ProviderService
from cowork.relay import CHANNEL as RELAY
from cowork.relay import NoticeRelay
from cowork.retrieval import Retrieval, job_info
from cowork.runtime import FORWARD_CHANNEL, Leases, RunnerDeps, Runtime, TurnRouter
from cowork.runtime import preload as preload_runtime
from cowork.sandbox import find_bwrap
from cowork.sessions import (
    CHANNEL,
    Checkpoints,
    EventBus,
    EventFanout,
    Journal,
    SessionService,
    SessionSettings,
    TodoList,
)
from cowork.store import Database, Listener
from cowork.toolbox import Toolbox, ToolboxInstaller
from cowork.tools import ToolRegistry, builtin_tools
from cowork.usage import UsageService

__all__ = ["Core", "PluginError", "load_plugins"]

log = logging.getLogger(__name__)


class PluginError(Exception):
    """A configured tool plugin cannot be loaded; the message names it and says why."""


def load_plugins(registry: ToolRegistry, paths: list[str]) -> None:
    """Call each `module:function` with the registry, so it can register its tools."""
    for path in paths:
        module_name, _, attr = path.partition(":")
        try:
            hook = getattr(importlib.import_module(module_name), attr or "register")
            hook(registry)
        except Exception as exc:
            raise PluginError(f"tools.plugins: cannot load {path!r}: {type(exc).__name__}: {exc}") from exc


class Core:
    """Every service of one Cowork process."""

    def __init__(
        self,
        loaded: LoadedConfig,
        *,
        env: Mapping[str, str] | None = None,
        tools: ToolRegistry | None = None,
        database: Database | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        """Args:
        loaded: the configuration.
        env: the environment providers and capture read (default: the process's).
        tools: the tool registry (default: the built-in tools).
        database: the store (default: the SQLite file under the home).
        clock: now, for automations' schedules and notifications' gates (tests control it; default: the time).
        """
        self.loaded = loaded
        self.config = loaded.config
        self.paths = loaded.paths
        self.workspace = loaded.workspace
        self.paths.ensure()
        self.db = database if database is not None else Database.from_url(self.config.database_url, self.paths.database)
        self.bus = EventBus()
        replicated = self.db.dialect == "postgresql"
        self.replica = replica_id(self.paths.home) if replicated else "local"
        """This replica's name in leases and announcements (kept in its home, so a restart knows its own)."""
        self.fanout = EventFanout(self.db, self.bus, self.replica) if replicated else None
        """Events across replicas (PostgreSQL only)."""
        self.journal = Journal(self.db, self.bus, fanout=self.fanout)
        self._listener: Listener | None = None
        self._relay: NoticeRelay | None = None
        self.selector = ModelSelector(self.config, dict(os.environ if env is None else env))
        self.models = ModelCache()
        self.credentials = CredentialStore(self.paths.home, backend=self.config.credentials.store)
        self.providers = ProviderService(self.selector, self.credentials, self.db, self.config)
        self.usage = UsageService(self.db, self.config)
        self.tools = tools if tools is not None else builtin_tools()
        load_plugins(self.tools, self.config.tools.plugins)
        sandbox = self.config.tools.sandbox
        self.bwrap = find_bwrap(sandbox.bwrap_path) if sandbox.enabled else None
        self.sandbox_note: str | None = None
        if not sandbox.enabled:
            self.sandbox_note = "The sandbox is off (tools.sandbox.enabled = false): shell commands run unconfined."
        elif self.bwrap is None:
            self.sandbox_note = (
                "bubblewrap (bwrap) was not found, so shell commands run unconfined and every command that is not "
                "clearly safe asks first. Install it to confine them (Debian/Ubuntu: apt install bubblewrap)."
            )
        self.toolbox = ToolboxInstaller(Toolbox.of_home(self.paths.home), self.config.tools.toolbox)
        """The document toolbox shell commands use, installed in the background after the warm-up."""
        self.notices = Notices()
        """Notifications for every connected client (`mcp/status`, `mcp/install`)."""
        self.mcp = McpHypervisor(
            db=self.db,
            home=self.paths.home,
            workspace=self.workspace,
            settings=self.config.mcp,
            registry=self.tools,
            notices=self.notices,
            secret=self.credentials.get,
            environment=self.config.tools.environment,
        )
        self.mcp_oauth = OAuthManager(self.credentials, on_authorized=self.mcp.reconnect)
        self.mcp.auth_provider = self.mcp_oauth.auth_provider
        self.mcp_installs = InstallService(
            self.db,
            self.credentials,
            save=self.mcp.add_config,
            remove=self.mcp.remove,
            exists=self.mcp.exists,
            auth=self.mcp_oauth.auth_provider,
        )
        self.mcp_installs.subscribe(lambda info: self.notices.publish("mcp/install", info))
        self.sessions = SessionService(
            self.db, self.journal, default_workspace=self.workspace, default_network=sandbox.network
        )
        self.router = TurnRouter(self.config, self.selector, self.providers)
        self.settings = SessionSettings(self.sessions, self.selector, routes=self.router.routes)
        """`session/update` and the live switches (network, yolo, reasoning effort) runners read."""
        self.todos = TodoList(self.sessions, self.journal)
        self.tool_policies = ToolPolicies(self.db, self.tools)
        """The user's per-tool overrides (`tool/list`, `tool/setPolicy`)."""
        self.checkpoints = Checkpoints(self.db, self.paths.home, self.config.checkpoints)
        """What each tool call that changed a folder changed (`session/undo`, `session/rewind`)."""
        self.tracing = Tracing(self.config.tracing, self.db, version=__version__)
        """Spans of every turn, stored (and sent to a collector when configured); `traces` reads them."""
        self.traces = TraceQueries(self.db, self.tracing)
        self.retrieval = Retrieval(
            self.db,
            self.config.memory,
            home=self.paths.home,
            publish=lambda job: self.notices.publish("ingest/progress", job_info(job)),
            web=self.config.tools.web,
        )
        """Each folder's index of documents and the jobs that fill it (`ingest/*`, `memory/search`)."""
        self.working_memory = WorkingMemory(self.db)
        """The user's profile, in every prompt (`profile` tool, `memory/profile*`)."""
        self.recall = ConversationRecall(self.db, self.retrieval, self.config.memory)
        """Each folder's past turns, indexed in quiet moments (`recall` tool, `memory/search` kind conversations)."""
        self.capture = CaptureService(
            self.db,
            self.config.capture,
            env=dict(os.environ if env is None else env),
            publish=lambda status: self.notices.publish("capture/status", status),
            retrieval=self.retrieval,
            local_embedder=self.config.memory.embedder.provider == "local",
        )
        """What the user works on, with their consent (`capture/*`, `context/*`, the `activity` tool)."""
        self.runtime = Runtime(
            RunnerDeps(
                db=self.db,
                journal=self.journal,
                models=self.models,
                config=self.config,
                home=self.paths.home,
                usage=self.usage,
                bwrap=self.bwrap,
                checkpoints=self.checkpoints,
                tracing=self.tracing,
                retrieval=self.retrieval,
                working_memory=self.working_memory,
                recall=self.recall,
                capture=self.capture,
            ),
            self.sessions,
            self.settings,
            self.selector,
            self.tools,
            self.router,
            todos=self.todos,
            overrides=self.tool_policies.overrides,
            leases=Leases(self.db, replica=self.replica, ttl=self.config.replicas.lease_seconds, enabled=replicated),
        )
        if self.fanout is not None:
            self.fanout.on_remote = self.runtime.operations.forget_session
        self.recall.observer = self.runtime.observe
        notify = self.config.notifications
        now = clock or (lambda: datetime.now(UTC))
        self.notifications = NotificationService(
            self.db,
            lambda info: self.notices.publish("notification/delivered", info),
            deep_work=lambda: self.capture.deep_work,
            desktop=DesktopNotifier() if notify.desktop and sys.platform == "linux" else None,
            settings=GateSettings(
                urgent_per_hour=notify.urgent_per_hour,
                helpful_per_hour=notify.helpful_per_hour,
                informational_per_hour=notify.informational_per_hour,
                bundle_window=timedelta(seconds=notify.bundle_seconds),
                cooldown=timedelta(minutes=notify.cooldown_minutes),
            ),
            clock=now,
        )
        """The proactive engine's deliveries (`notification/*`): the six gates, clients, the desktop."""

        async def automation_session(title: str) -> str:
            return (await self.sessions.create(SessionCreateParams(title=title))).id

        host = CoreHost(
            config=self.config,
            home=self.paths.home,
            workspace=self.workspace,
            bwrap=self.bwrap,
            overrides=self.tool_policies.overrides,
            make_session=lambda automation_id, name: self.automations.session_for(automation_id, name),
            tasks=self.runtime.tasks,
            notifier=self.notifications,
        )
        self.automations = AutomationService(
            self.db,
            host,
            self.tools,
            publish=self.notices.publish,
            create_session=automation_session,
            clock=now,
            leases=self.runtime.leases,
        )
        """Saved flows, their runs, the cron loop, flow tools (`automation/*`)."""
        self.automation_triggers = LiveTriggers(
            self.automations,
            self.workspace,
            subscribe_events=self.bus.subscribe_all,
            subscribe_mcp=self.mcp.on_notification,
            automation_sessions=self.automations.automation_sessions,
            leader=lambda: self.runtime.leases.leader,
        )
        self.model_choices = ModelChoices(
            self.config,
            self.selector,
            self.providers,
            sessions=self.sessions,
            router=self.router,
            busy=self.runtime.active_operation,
        )

    async def start(self) -> None:
        """Migrate the schema, start the journal, and mark turns a previous process left running as interrupted."""
        if self.sandbox_note:
            log.warning("SANDBOX: %s", self.sandbox_note)
        for warning in self.loaded.warnings():
            log.warning("CONFIG: %s", warning)
        await anyio.to_thread.run_sync(self.db.migrate)
        self.journal.start()
        if self.fanout is not None:
            self.fanout.start()
            leases = self.runtime.leases
            relay = self._relay = NoticeRelay(
                self.db,
                self.notices,
                self.replica,
                reload=self.automations.reload,
                readers={"automation/run": self._run_info, "notification/delivered": self.notifications.get},
            )
            relay.start()
            channels = {CHANNEL: self.fanout.on_notify, FORWARD_CHANNEL: leases.on_notify, RELAY: relay.on_notify}
            self._listener = Listener(
                self.db.url,
                list(channels),
                lambda channel, payload: channels[channel](payload),
                on_reconnect=self.fanout.resync,
            )
            await self._listener.start()
            log.info("replica %s on PostgreSQL (leases of %.1f s)", self.replica, self.config.replicas.lease_seconds)
        await self.usage.load()
        await self.providers.load()
        await self.tool_policies.load()
        await self.runtime.recover()
        await self.mcp.start()
        await self.mcp_installs.load()
        await self.retrieval.start()
        self.recall.start()
        await self.capture.start()
        await self.notifications.start()
        await self.automations.start()
        self.automation_triggers.start()
        self.checkpoints.prune_soon()

    async def _run_info(self, run_id: str) -> WireModel | None:
        runs = await self.automations.runs(run_id=run_id, limit=1)
        return runs[0] if runs else None

    async def health(self) -> HealthResult:
        """How each subsystem stands now (see `cowork.health`): cheap, read live, no network request."""
        return await check_health(self)

    async def warm_up(self) -> None:
        """Load now what the first turn would: pydantic-ai's model layer and the executors, the default provider's
        SDK, its model and HTTP client, its prices, the shell parser, the tools' schemas, the wire models'
        validators, the spend the budget check reads, the workspace's skills and memory files; then one canned
        request through the model's classes, inside the process (`cowork.models._rehearse`). Never raises: on
        failure the first turn loads them.

        The imports run in a thread of their own, so requests are answered meanwhile (slower while it runs: imports
        hold the GIL in turns). Cancelling this stops waiting for them, not the thread.
        """
        await self._warm_up()
        self.toolbox.start()  # after the warm-up (never raises), so the two do not compete for the first seconds

    async def _warm_up(self) -> None:
        started = time.perf_counter()
        try:
            target: ModelTarget | None = self.selector.resolve(None, None)
        except ProtocolError:
            target = None  # no provider connected yet: the model layer still loads
        try:
            await _in_daemon_thread(
                lambda: _preload(target, self.workspace, self.paths.home, self.tools, self.tracing),
                name="cowork-warm-up",
            )
            if target is not None:
                await self.models.get(target)
            await self.usage.spend(None)  # the ledger's sums, read once: the first budget check answers from memory
        except Exception:
            log.warning("warming up failed; the first turn loads what it needs itself", exc_info=True)
            return
        what = f"{target.provider}:{target.model}" if target is not None else "no provider"
        log.info("provider stack warmed in %.2f s (%s)", time.perf_counter() - started, what)

    async def stop(self) -> None:
        await self.toolbox.stop()
        await self.automation_triggers.stop()
        await self.automations.stop()
        await self.notifications.stop()
        await self.capture.stop()
        await self.recall.stop()
        await self.retrieval.stop()
        await self.checkpoints.close()
        await self.runtime.shutdown()
        await anyio.to_thread.run_sync(self.tracing.shutdown)  # the last spans stored while the database is open
        await self.mcp_installs.aclose()
        await self.mcp_oauth.aclose()
        await self.mcp.stop()
        if self._listener is not None:
            await anyio.to_thread.run_sync(self._listener.stop)
        if self._relay is not None:
            await self._relay.stop()
        if self.fanout is not None:
            await self.fanout.stop()
        await self.journal.stop()
        await self.models.aclose()
        await self.providers.aclose()
        self.db.close()


def replica_id(home: Path) -> str:
    """This replica's lasting name: made once and kept in its home (each replica has a home of its own)."""
    path = home / "replica-id"
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        pass
    name = f"{socket.gethostname()[:40]}-{secrets.token_hex(4)}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(name)
    return name


def _preload(target: ModelTarget | None, workspace: Path, home: Path, tools: ToolRegistry, tracing: Tracing) -> None:
    with HEAVY_IMPORTS:  # the loop's own first imports of these wait rather than race (see `cowork.lazy`)
        tracing.tracer()  # the OpenTelemetry SDK (and the OTLP exporter when configured)
        tools.specs()  # the tools' JSON schemas, which the first request sends (each made once, then kept)
        from cowork.policy import classify

        preload_runtime()
        if target is not None:
            preload_model(target)
            # The price table, as a step's budget check and its accounting look it up.
            estimate_cost(target.provider, target.model, input_tokens=1000, output_tokens=100)
            cost_of(target.provider, target.model, input_tokens=1000, output_tokens=100)
        classify("true")  # the shell parser, which the first `bash` call's approval needs
        _complete_protocol_models()
    gather_prompt_extras(workspace, home)  # the first turn's system prompt: skills (YAML) and memory, cached
    if target is not None:
        # One canned request through the model's classes, on a loop of this thread's own and a transport inside
        # the process: what the first request would otherwise build on first use (see `cowork.models._rehearse`).
        from cowork.models._rehearse import rehearse

        try:
            asyncio.run(rehearse(target, tools.specs()))
        except Exception:  # what it builds is built by the first request instead; the rest of the warm-up stands
            log.warning("rehearsing a model request failed", exc_info=True)


def _complete_protocol_models() -> None:
    """Build the validators and serializers of the wire models now (they are deferred, so start-up does not pay
    for them), rather than in the first turn's requests and events."""
    from pydantic import BaseModel

    import cowork.protocol

    for name in cowork.protocol.__all__:
        model = getattr(cowork.protocol, name)
        if isinstance(model, type) and issubclass(model, BaseModel) and not model.__pydantic_complete__:
            model.model_rebuild()


def _in_daemon_thread(work: Callable[[], None], *, name: str) -> asyncio.Future[None]:
    """Run blocking `work` in a thread of its own; the future settles with its outcome.

    Not a worker of the bounded pool: an import cannot be interrupted, and a daemon thread is one the interpreter
    does not wait for, so a server stopping during the warm-up exits at once.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()

    def settle(error: BaseException | None) -> None:
        if future.done():
            return  # the waiter was cancelled
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)

    def run() -> None:
        error: BaseException | None = None
        try:
            work()
        except BaseException as exc:  # even SystemExit from an import: it must not end the server's loop
            error = exc if isinstance(exc, Exception) else RuntimeError(f"stopped by {exc!r}")
        with contextlib.suppress(RuntimeError):  # the loop closed first: nobody waits any more
            loop.call_soon_threadsafe(settle, error)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future
