"""The composition root: builds the store, the journal and the services, and starts and stops them.

Transport-free: the server adapts JSON-RPC to these objects, and tests can drive them directly.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Mapping

import anyio.to_thread

from cowork.config import LoadedConfig
from cowork.credentials import CredentialStore
from cowork.mcp import McpHypervisor, Notices
from cowork.mcp._oauth import OAuthManager
from cowork.mcp.install import InstallService
from cowork.models import ModelCache, ModelSelector
from cowork.policy import ToolPolicies
from cowork.providers import ModelChoices, ProviderService
from cowork.runtime import RunnerDeps, Runtime, TurnRouter
from cowork.sandbox import find_bwrap
from cowork.sessions import EventBus, Journal, SessionService, SessionSettings, TodoList
from cowork.store import Database
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
    ) -> None:
        self.loaded = loaded
        self.config = loaded.config
        self.paths = loaded.paths
        self.workspace = loaded.workspace
        self.paths.ensure()
        self.db = database if database is not None else Database.sqlite(self.paths.database)
        self.bus = EventBus()
        self.journal = Journal(self.db, self.bus)
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
        self.runtime = Runtime(
            RunnerDeps(
                db=self.db,
                journal=self.journal,
                models=self.models,
                config=self.config,
                home=self.paths.home,
                usage=self.usage,
                bwrap=self.bwrap,
            ),
            self.sessions,
            self.settings,
            self.selector,
            self.tools,
            self.router,
            todos=self.todos,
            overrides=self.tool_policies.overrides,
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
        await self.usage.load()
        await self.providers.load()
        await self.tool_policies.load()
        await self.runtime.recover()
        await self.mcp.start()
        await self.mcp_installs.load()

    async def stop(self) -> None:
        await self.runtime.shutdown()
        await self.mcp_installs.aclose()
        await self.mcp_oauth.aclose()
        await self.mcp.stop()
        await self.journal.stop()
        await self.models.aclose()
        await self.providers.aclose()
        self.db.close()
