"""Runtime settings changed from a client (provider base URLs, budget caps): JSON values by key."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._schema import settings as t
from ._util import escape_like

__all__ = ["all_values", "delete", "get", "put"]


def get(conn: Connection, key: str) -> Any | None:
    value = conn.execute(sa.select(t.c.value).where(t.c.key == key)).scalar()
    return json.loads(value) if value is not None else None


def all_values(conn: Connection, *, prefix: str = "") -> dict[str, Any]:
    stmt = sa.select(t.c.key, t.c.value)
    if prefix:
        escaped = escape_like(prefix)
        stmt = stmt.where(t.c.key.like(f"{escaped}%", escape="\\"))
    return {r.key: json.loads(r.value) for r in conn.execute(stmt)}


def put(conn: Connection, key: str, value: Any, *, now: datetime) -> None:
    conn.execute(t.delete().where(t.c.key == key))
    conn.execute(t.insert().values(key=key, value=json.dumps(value), updated_at=now))


def delete(conn: Connection, key: str) -> bool:
    return bool(conn.execute(t.delete().where(t.c.key == key)).rowcount)
