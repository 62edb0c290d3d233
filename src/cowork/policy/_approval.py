"""The multi-phase approval policy: for each tool call, run it now or ask the user, security first.

Phases, in order (the first that decides wins):

0. a tool that always asks (`Tool.always_asks`: creating an automation, which runs later unattended) → ask, even
   under --yolo and inside an automation;

1. security: a dangerous shell command, a write to a protected workspace file (`.git/config`, `.cowork/`,
   `.envrc`…), a tool whose name says it deletes, sends or pays, or a command that needs the network while the
   session's network is off → ask;
2. a per-tool override of `always` → ask;
3. running inside an automation → run;
4. an MCP server's policy (`manual` → ask, `allow-list` → listed tools run, `auto-run` → run);
5. a per-tool override of `never`, or the user's auto-run mode → run (a risky shell command still asks when
   there is no sandbox to contain it);
6. the allow-list (`tools.auto_approve`) → run; otherwise (manual) risky calls ask and the rest run.

Between 2 and 3, what the user allowed for this session ("allow for the session", see `_allow`) → run. A call
that asks in the `manual` or `server` phase carries the key that allowing it for the session would store.

`--yolo` skips all of it but phase 0. Path permissions are enforced by the tools themselves and never skipped.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ._allow import allowance_key, allowance_matches

if TYPE_CHECKING:
    from ._commands import Classification

__all__ = [
    "SECURITY_NAME_PATTERNS",
    "ApprovalMode",
    "CallFacts",
    "PolicyContext",
    "PolicyDecision",
    "ServerPolicy",
    "ToolOverride",
    "decide",
]

ApprovalMode = Literal["manual", "auto-run"]
ToolOverride = Literal["always", "never", "inherit"]

SECURITY_NAME_PATTERNS: tuple[str, ...] = (
    "delete*",
    "*_delete*",
    "*delete_*",
    "remove_*",
    "*_remove*",
    "destroy*",
    "*_destroy*",
    "drop_*",
    "purge*",
    "send*",
    "*_send*",
    "*email*",
    "*post_message*",
    "*transfer*",
    "*payment*",
    "pay_*",
    "*_pay",
    "*purchase*",
    "*refund*",
    "execute_command",
    "*_execute_command",
)
"""Tool names (MCP tools included, after their `mcp__server__` prefix) that always ask."""


@dataclass(frozen=True)
class PolicyDecision:
    decision: Literal["run", "ask", "question"]
    reason: str = ""
    phase: str = ""
    allow: str | None = None
    """For a call that asks: the key "allow for this session" would store (None: not offered)."""


@dataclass(frozen=True)
class ServerPolicy:
    mode: Literal["manual", "allow-list", "auto-run"] = "manual"
    allow: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CallFacts:
    """What the policy needs to know about one call."""

    tool: str
    risky: bool
    """The tool says this call needs approval (it has side effects; for bash: the command is not safe)."""
    asks_user: bool = False
    arguments: Mapping[str, Any] = field(default_factory=dict)
    command: Classification | None = None
    mcp_server: str | None = None
    needs_network: bool = False
    protected: str | None = None
    """Why a path this call writes is protected (`.git/config`, `.cowork/`, `.envrc`…), if one is."""
    shell_command: str | None = None
    """The shell text, for a tool that runs one."""
    always_ask: bool = False
    """The tool asks every time, whatever the settings (creating an automation): not even --yolo skips it."""


@dataclass(frozen=True)
class PolicyContext:
    """The user's settings and where the call runs."""

    mode: ApprovalMode = "manual"
    allow_list: frozenset[str] = frozenset()
    overrides: Mapping[str, ToolOverride] = field(default_factory=dict)
    automation: bool = False
    server_policies: Mapping[str, ServerPolicy] = field(default_factory=dict)
    yolo: bool = False
    sandboxed: bool = True
    network: bool = False
    allowances: tuple[str, ...] = ()
    """What the user allowed for this session without asking again (keys, see `_allow`)."""


def _base_name(tool: str) -> str:
    return tool.split("__", 2)[2] if tool.startswith("mcp__") and tool.count("__") >= 2 else tool


def _security(facts: CallFacts, ctx: PolicyContext) -> str | None:
    if facts.command is not None and facts.command.verdict == "dangerous":
        return f"Dangerous command ({facts.command.reason}): {facts.command.detail}"
    if facts.protected is not None:
        return f"It writes a protected file: {facts.protected}."
    name = _base_name(facts.tool).lower()
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in SECURITY_NAME_PATTERNS):
        return f"{facts.tool} may delete, send or pay for something; it always asks."
    if facts.needs_network and not ctx.network:
        return "It needs network access, which is off for this session."
    return None


def decide(facts: CallFacts, ctx: PolicyContext) -> PolicyDecision:
    """Run the call now, ask the user to approve it, or (the `ask` tool) ask the user its question."""
    if facts.asks_user:
        return PolicyDecision("question", phase="question")
    if facts.always_ask:
        return PolicyDecision(
            "ask", f"{facts.tool} always asks: it makes something that runs later on its own.", "always"
        )
    if ctx.yolo:
        return PolicyDecision("run", "--yolo: approvals are off", "yolo")
    security = _security(facts, ctx)
    if security is not None:
        return PolicyDecision("ask", security, "security")
    override = ctx.overrides.get(facts.tool, "inherit")
    if override == "always":
        return PolicyDecision("ask", f"{facts.tool} is set to always ask.", "always")
    if ctx.allowances and allowance_matches(ctx.allowances, facts.tool, facts.shell_command):
        return PolicyDecision("run", "allowed for this session", "session")
    allow = allowance_key(facts.tool, facts.shell_command)
    if ctx.automation:
        return PolicyDecision("run", "inside an automation", "automation")
    if facts.mcp_server is not None and override != "never":
        server = ctx.server_policies.get(facts.mcp_server, ServerPolicy())
        if server.mode == "auto-run" or (server.mode == "allow-list" and _base_name(facts.tool) in server.allow):
            return PolicyDecision("run", f"allowed by the {facts.mcp_server} server's policy", "server")
        return PolicyDecision("ask", f"The {facts.mcp_server} server's tools ask before they run.", "server", allow)
    unconfined_shell = facts.command is not None and not ctx.sandboxed and facts.risky
    if override == "never":
        return PolicyDecision("run", f"{facts.tool} is set to never ask.", "never")
    if ctx.mode == "auto-run" and not unconfined_shell:
        return PolicyDecision("run", "auto-run", "auto-run")
    if facts.tool in ctx.allow_list and not unconfined_shell:
        return PolicyDecision("run", "listed in tools.auto_approve", "allow-list")
    if facts.risky:
        if facts.command is not None:
            return PolicyDecision("ask", f"{facts.command.detail}", "manual", allow)
        return PolicyDecision("ask", f"{facts.tool} can change things outside the conversation.", "manual", allow)
    return PolicyDecision("run", "read-only", "manual")
