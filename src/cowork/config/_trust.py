"""Trusted workspaces: the folders whose own `.cowork/` files the user has said may do what user config does.

A workspace's files are untrusted (the agent, a cloned repository or a planted file can write them), so a
workspace's `.cowork/config.toml` may only set keys that cannot lower security (`WORKSPACE_KEYS`), and its stdio
MCP servers do not start, until the user trusts that workspace (`/mcp trust` in the REPL, `mcp/trust`). The list is a
user-level file in Cowork's home (`trusted-workspaces.json`, 0600), which no tool and no sandboxed command can
read or write; it is read before the configuration is loaded, so it cannot live in the database.
"""

from __future__ import annotations

import fnmatch
import json
import os
from pathlib import Path

__all__ = ["WORKSPACE_KEYS", "WorkspaceTrust", "workspace_may_set"]

WORKSPACE_KEYS: tuple[str, ...] = (
    "provider",
    "model",
    "providers.*.default_model",
    "providers.*.api",
    "agent.max_steps",
    "agent.user_name",
    "agent.knowledge_cutoff",
    "agent.request_timeout_seconds",
    "agent.provider_max_retries",
    "agent.retry_base_seconds",
    "agent.retry_max_seconds",
    "agent.max_retry_after_seconds",
    "agent.reasoning_effort",
    "agent.stuck_repeats",
    "agent.checkin_seconds",
    "agent.error_rate_*",
    "agent.context_window",
    "agent.compress_at",
    "agent.keep_recent",
    "tools.output_limit_chars",
    "memory.grounded",
    "tools.bash.*",
    "tools.web.fetch_max_bytes",
    "tools.web.fetch_timeout_seconds",
    "tools.web.search_backend",
    "tools.commands.deny",
    "tools.permissions.deny",
    "router.enabled",
    "router.preference",
    "router.simple_max_tokens",
    "router.local_max_tokens",
    "local_models.*",
    "mcp.connect_timeout_seconds",
    "mcp.call_timeout_seconds",
)
"""What an untrusted workspace's config may set: keys that cannot lower security, widen what tools reach, send
credentials elsewhere, raise spending limits or run code. Everything else (the sandbox, approval mode and
auto-approve, network, extra roots, allowed commands, plugins, the server's address and origins, provider
URLs and key variables, budgets, the output directory, the environment passed to commands…) is ignored with
a warning until the user trusts the workspace. An allow-list, so a key added later is untrusted by default."""

TIGHTENING_LISTS: tuple[str, ...] = ("tools.commands.deny", "tools.permissions.deny")
"""Lists a workspace adds to rather than replaces: it may deny more, never un-deny what the user denied."""


def workspace_may_set(key: str) -> bool:
    """Whether an untrusted workspace's config may set the dotted `key`."""
    return any(fnmatch.fnmatchcase(key, pattern) for pattern in WORKSPACE_KEYS)


class WorkspaceTrust:
    """The user's trusted workspaces, kept in `<home>/trusted-workspaces.json`."""

    def __init__(self, home: Path) -> None:
        self.file = home / "trusted-workspaces.json"

    def all(self) -> set[str]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set()
        listed = data.get("workspaces") if isinstance(data, dict) else None
        return {p for p in listed if isinstance(p, str)} if isinstance(listed, list) else set()

    def is_trusted(self, workspace: Path) -> bool:
        return str(workspace.resolve()) in self.all()

    def add(self, *workspaces: Path) -> None:
        """Trust these workspaces (written atomically, 0600)."""
        listed = self.all() | {str(w.resolve()) for w in workspaces}
        self.file.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.file.with_name(f".{self.file.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"workspaces": sorted(listed)}, fh, indent=2)
        os.replace(temporary, self.file)
