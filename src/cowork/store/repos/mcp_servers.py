"""MCP servers added over the protocol or imported from config files (database entries win over files)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._schema import mcp_servers as t

__all__ = ["McpServerRow", "all_rows", "delete", "get", "set_tools", "upsert"]


@dataclass(frozen=True)
class McpServerRow:
    name: str
    transport: str
    created_at: datetime
    updated_at: datetime
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    enabled: bool = True
    auto_start: bool = True
    policy: str = "manual"
    allowed_tools: list[str] = field(default_factory=list)
    source: str = "database"
    workspace: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    """The tool list the server reported last (so a server that starts on first use can offer its tools)."""


_JSON = ("args", "env", "headers", "allowed_tools", "tools")


def _row(r: Any) -> McpServerRow:
    values = dict(r._mapping)
    for key in _JSON:
        values[key] = json.loads(values[key])
    return McpServerRow(**values)


def all_rows(conn: Connection) -> list[McpServerRow]:
    return [_row(r) for r in conn.execute(sa.select(t).order_by(t.c.name))]


def get(conn: Connection, name: str) -> McpServerRow | None:
    r = conn.execute(sa.select(t).where(t.c.name == name)).first()
    return _row(r) if r is not None else None


def upsert(conn: Connection, row: McpServerRow) -> None:
    values: dict[str, Any] = {k: getattr(row, k) for k in row.__dataclass_fields__}
    for key in _JSON:
        values[key] = json.dumps(values[key])
    conn.execute(t.delete().where(t.c.name == row.name))
    conn.execute(t.insert().values(**values))


def set_tools(conn: Connection, name: str, tools: list[dict[str, Any]]) -> None:
    conn.execute(t.update().where(t.c.name == name).values(tools=json.dumps(tools)))


def delete(conn: Connection, name: str) -> bool:
    return bool(conn.execute(t.delete().where(t.c.name == name)).rowcount)
