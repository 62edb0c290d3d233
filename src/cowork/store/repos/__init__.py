"""Repositories: the only code that writes SQL. Each function takes a connection inside a transaction."""

from . import (
    checkpoints,
    events,
    human_requests,
    inputs,
    mcp_installs,
    mcp_servers,
    messages,
    operations,
    search,
    session_files,
    sessions,
    settings,
    summaries,
    tool_calls,
    tool_policies,
    usage,
)

__all__ = [
    "checkpoints",
    "events",
    "human_requests",
    "inputs",
    "mcp_installs",
    "mcp_servers",
    "messages",
    "operations",
    "search",
    "session_files",
    "sessions",
    "settings",
    "summaries",
    "tool_calls",
    "tool_policies",
    "usage",
]
