"""What running a flow's steps needs from the rest of the core, in one place.

`StepHost` is the executor's view: the approval policy in automation context, a tool context, the automation's
session and its agent tasks, and the notification engine. `CoreHost` is the one implementation, built by the core
from its services; tests of the run engine use it too, over a real store.

The policy runs in automation context (DESIGN §6, phase 3): a step the user wrote runs without asking, except what
asks always — dangerous commands, writes to protected files, tools that delete, send or pay, network use while the
network is off, tools the user set to `always` ask, and creating automations. Those park the run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from cowork.config import CoworkConfig
from cowork.notify import Decision
from cowork.policy import PolicyContext, PolicyDecision, ToolOverride
from cowork.policy import decide as decide_approval
from cowork.protocol import NotificationTier, OperationStatus
from cowork.runtime import call_facts, path_policy
from cowork.tools import Tool, ToolContext

__all__ = ["AgentTaskRunner", "CoreHost", "Notifier", "StepHost"]


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

    def decide(self, tool: Tool[Any], arguments: Mapping[str, Any]) -> PolicyDecision:
        facts, server = call_facts(tool, arguments, workspace=self.workspace, home=self.home, config=self.config)
        tools = self.config.tools
        context = PolicyContext(
            mode=tools.approval_mode,
            allow_list=frozenset(tools.auto_approve),
            overrides=self.overrides(),
            automation=True,
            sandboxed=self.bwrap is not None,
            network=tools.sandbox.network,
            server_policies=dict([server]) if server else {},
        )
        return decide_approval(facts, context)

    def tool_context(self, run_id: str, step_id: str) -> ToolContext:
        config = self.config
        return ToolContext(
            workspace=self.workspace,
            paths=path_policy(self.workspace, self.home, self.config),
            settings=config.tools,
            network=config.tools.sandbox.network,
            output_dir=self.home / "tool-output" / run_id,
            home=self.home,
            bwrap=self.bwrap,
            tool_call_id=f"{run_id}-{step_id}",
        )

    async def session_for(self, automation_id: str, name: str) -> str:
        return await self.make_session(automation_id, name)
