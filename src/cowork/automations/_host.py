"""What running a flow's steps needs from the rest of the core, in one place.

`StepHost` is the executor's view: the approval policy in automation context, a tool context, the automation's
session and its agent tasks, and the notification engine. `CoreHost` is the one implementation, built by the core
from its services; tests of the run engine use it too, over a real store.

The policy runs in automation context (DESIGN §6, phase 3): a step the user wrote runs without asking, except what
asks always — dangerous commands, writes to protected files, tools that delete, send or pay, network use while the
network is off, tools the user set to `always` ask, and creating automations. Those park the run.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cowork.config import CoworkConfig
from cowork.notify import Decision
from cowork.policy import CallFacts, PathDenied, PathPolicy, Places, PolicyContext, PolicyDecision, ToolOverride
from cowork.policy import decide as decide_approval
from cowork.protocol import NotificationTier, OperationStatus
from cowork.tools import Tool, ToolContext

__all__ = ["AgentTaskRunner", "CoreHost", "Notifier", "StepHost"]

_POLICY_SECONDS = 10.0


class AgentTaskRunner(Protocol):
    """The runtime's agent tasks (`cowork.runtime.AgentTasks`)."""

    async def start(
        self, session_id: str, prompt: str, *, model: str | None = None, tools: list[str] | None = None
    ) -> str: ...

    async def status(self, operation_id: str) -> tuple[OperationStatus, str | None, str | None]: ...

    async def wait(self, operation_id: str, within: float) -> None: ...

    async def cancel(self, operation_id: str) -> bool: ...

    async def resume(self, operation_id: str) -> OperationStatus: ...


class Notifier(Protocol):
    async def offer(
        self,
        *,
        kind: str,
        tier: NotificationTier,
        title: str,
        body: str = "",
        key: str = "",
        run_id: str | None = None,
        automation_id: str | None = None,
    ) -> Decision: ...

    async def settle(self, run_id: str, kind: str = "automation_approval") -> None: ...


class StepHost(Protocol):
    workspace: Path
    tasks: AgentTaskRunner | None
    notifier: Notifier | None

    def decide(self, tool: Tool[Any], arguments: Mapping[str, Any]) -> PolicyDecision:
        """The approval policy's answer for this call inside an automation."""
        ...

    def tool_context(self, run_id: str, step_id: str) -> ToolContext:
        """What a tool called by a step may use."""
        ...

    async def session_for(self, automation_id: str, name: str) -> str:
        """The automation's session (made on first use): where its agent steps run."""
        ...


@dataclass
class CoreHost:
    """`StepHost` over the core's services."""

    config: CoworkConfig
    home: Path
    workspace: Path
    bwrap: str | None
    overrides: Callable[[], Mapping[str, ToolOverride]]
    make_session: Callable[[str, str], Awaitable[str]]
    """(automation id, automation name) → the id of its session, made if needed."""
    tasks: AgentTaskRunner | None = None
    notifier: Notifier | None = None
    _paths: tuple[float, PathPolicy] | None = field(default=None, init=False, repr=False)

    def decide(self, tool: Tool[Any], arguments: Mapping[str, Any]) -> PolicyDecision:
        config = self.config.tools
        declared = tool.facts(dict(arguments))
        command = None
        if declared.shell_command is not None:
            from cowork.policy import CommandPaths, classify  # the shell parser loads with the first command

            permissions = config.permissions
            roots = [*permissions.extra_read_roots, *permissions.extra_write_roots, *config.sandbox.extra_writable]
            paths = CommandPaths.build(self.workspace, cowork_home=self.home, roots=roots)
            command = classify(
                declared.shell_command, allow=config.commands.allow, deny=config.commands.deny, paths=paths
            )
        server = tool.server_policy()
        facts = CallFacts(
            tool=tool.name,
            risky=command.verdict != "safe" if command is not None else declared.needs_approval,
            asks_user=tool.asks_user,
            always_ask=tool.always_asks,
            arguments=arguments,
            command=command,
            needs_network=declared.needs_network,
            mcp_server=server[0] if server else None,
            protected=self._protected(declared.paths) if declared.side_effects else None,
            shell_command=declared.shell_command,
        )
        context = PolicyContext(
            mode=config.approval_mode,
            allow_list=frozenset(config.auto_approve),
            overrides=self.overrides(),
            automation=True,
            sandboxed=self.bwrap is not None,
            network=config.sandbox.network,
            server_policies=dict([server]) if server else {},
        )
        return decide_approval(facts, context)

    def _protected(self, paths: tuple[str, ...]) -> str | None:
        for raw in paths:
            try:
                resolved = PathPolicy(self.workspace).resolve(raw)
            except PathDenied:
                continue  # the tool refuses it when it runs
            reason = Places.protected(resolved, self.workspace.resolve())
            if reason is not None:
                return reason
        return None

    def _path_policy(self) -> PathPolicy:
        """The workspace's path policy, built at most every `_POLICY_SECONDS` (building resolves every protected
        place, which costs about a millisecond; a place made meanwhile is picked up at the next build)."""
        now = time.monotonic()
        if self._paths is None or now - self._paths[0] > _POLICY_SECONDS:
            config = self.config
            permissions = config.tools.permissions
            output = config.agent.output_directory
            policy = PathPolicy.build(
                self.workspace,
                home=self.home,
                output_dir=Path(output) if output else None,
                extra_read=permissions.extra_read_roots,
                extra_write=(*permissions.extra_write_roots, *config.tools.sandbox.extra_writable),
                deny=permissions.deny,
            )
            self._paths = (now, policy)
        return self._paths[1]

    def tool_context(self, run_id: str, step_id: str) -> ToolContext:
        config = self.config
        return ToolContext(
            workspace=self.workspace,
            paths=self._path_policy(),
            settings=config.tools,
            network=config.tools.sandbox.network,
            output_dir=self.home / "tool-output" / run_id,
            home=self.home,
            bwrap=self.bwrap,
            tool_call_id=f"{run_id}-{step_id}",
        )

    async def session_for(self, automation_id: str, name: str) -> str:
        return await self.make_session(automation_id, name)
