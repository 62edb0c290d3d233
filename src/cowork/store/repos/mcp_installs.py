"""MCP installs: one row per install, rewritten at every state transition (secrets never come here)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._schema import mcp_installs as t

__all__ = ["McpInstallRow", "delete", "get", "list_all", "put"]

_JSON_FIELDS = ("manifest", "config", "secrets", "dependencies", "tools")


@dataclass
class McpInstallRow:
    """An install's persisted state. `config` holds only non-secret values; `secrets` only the names of the
    credential-store entries this install wrote (so a cancel can delete them)."""

    id: str
    name: str
    state: str
    progress: int
    message: str
    manifest: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    config: dict[str, Any] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    dependencies: list[dict[str, Any]] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    error: str | None = None
    stderr_tail: str | None = None
    saved: bool = False


def _from(row: Any) -> McpInstallRow:
    values = dict(row._mapping)
    for name in _JSON_FIELDS:
        values[name] = json.loads(values[name])
    return McpInstallRow(**values)


def _values(row: McpInstallRow) -> dict[str, Any]:
    values: dict[str, Any] = {
        "id": row.id,
        "name": row.name,
        "state": row.state,
        "progress": row.progress,
        "message": row.message,
        "error": row.error,
        "stderr_tail": row.stderr_tail,
        "saved": row.saved,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }
    for name in _JSON_FIELDS:
        values[name] = json.dumps(getattr(row, name))
    return values


def put(conn: Connection, row: McpInstallRow) -> None:
    """Insert or replace the install's row."""
    conn.execute(t.delete().where(t.c.id == row.id))
    conn.execute(t.insert().values(**_values(row)))


def get(conn: Connection, install_id: str) -> McpInstallRow | None:
    row = conn.execute(sa.select(t).where(t.c.id == install_id)).first()
    return _from(row) if row is not None else None


def list_all(conn: Connection) -> list[McpInstallRow]:
    """Every install, newest first."""
    return [_from(r) for r in conn.execute(sa.select(t).order_by(t.c.created_at.desc(), t.c.id.desc()))]


def delete(conn: Connection, install_id: str) -> bool:
    return bool(conn.execute(t.delete().where(t.c.id == install_id)).rowcount)
