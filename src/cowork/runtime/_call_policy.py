"""What the approval policy is told about one tool call, and the path policy tools run under: shared by the
operation runner and by automations' steps, so a call is judged the same way wherever it comes from.

The shell parser (`classify`) loads with the first command judged, not with this module.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cowork.config import CoworkConfig
from cowork.policy import CallFacts, PathDenied, PathPolicy, Places, ServerPolicy
from cowork.tools import Tool

__all__ = ["call_facts", "path_policy", "protected_reason"]

_POLICY_SECONDS = 10.0
"""How long callers of one configuration share a built path policy. Building one resolves every protected place
(about a millisecond, on the event loop); those places (the folder itself, Cowork's home, the credential stores) are
outside what any tool may change, and each path a tool names is still resolved when used."""
_POLICIES: dict[tuple[Any, ...], tuple[float, PathPolicy]] = {}


def path_policy(workspace: Path, home: Path, config: CoworkConfig) -> PathPolicy:
    """The paths tools may read and write in `workspace`, built at most every `_POLICY_SECONDS` per configuration."""
    permissions = config.tools.permissions
    key = (
        workspace,
        home,
        config.agent.output_directory,
        tuple(permissions.extra_read_roots),
        (*permissions.extra_write_roots, *config.tools.sandbox.extra_writable),
        tuple(permissions.deny),
    )
    now = time.monotonic()
    shared = _POLICIES.get(key)
    if shared is not None and now - shared[0] < _POLICY_SECONDS:
        return shared[1]
    policy = PathPolicy.build(
        workspace,
        home=home,
        output_dir=Path(key[2]) if key[2] else None,
        extra_read=key[3],
        extra_write=key[4],
        deny=key[5],
    )
    if len(_POLICIES) >= 64:
        _POLICIES.clear()
    _POLICIES[key] = (now, policy)
    return policy


def protected_reason(paths: tuple[str, ...], workspace: Path) -> str | None:
    """Why one of the paths a call writes is a protected workspace file, if one is."""
    for raw in paths:
        try:
            resolved = PathPolicy(workspace).resolve(raw)
        except PathDenied:
            continue  # the tool refuses it when it runs
        reason = Places.protected(resolved, workspace.resolve())
        if reason is not None:
            return reason
    return None


def call_facts(
    tool: Tool[Any], arguments: Mapping[str, Any], *, workspace: Path, home: Path, config: CoworkConfig
) -> tuple[CallFacts, tuple[str, ServerPolicy] | None]:
    """What the policy needs to know about this call (its shell command classified, a protected path it writes),
    and the MCP server's name and policy for an MCP tool."""
    tools = config.tools
    declared = tool.facts(dict(arguments))
    command = None
    if declared.shell_command is not None:
        from cowork.policy import CommandPaths, classify  # the shell parser loads with the first command

        permissions = tools.permissions
        roots = [*permissions.extra_read_roots, *permissions.extra_write_roots, *tools.sandbox.extra_writable]
        paths = CommandPaths.build(workspace, cowork_home=home, roots=roots)
        command = classify(declared.shell_command, allow=tools.commands.allow, deny=tools.commands.deny, paths=paths)
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
        protected=protected_reason(declared.paths, workspace) if declared.side_effects else None,
        shell_command=declared.shell_command,
    )
    return facts, server
