"""Per-tool approval overrides: `always` ask or `never` ask (absence means inherit)."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._schema import tool_policies as t

__all__ = ["all_overrides", "set_override"]


def all_overrides(conn: Connection) -> dict[str, str]:
    return {r.tool: r.policy for r in conn.execute(sa.select(t.c.tool, t.c.policy))}


def set_override(conn: Connection, tool: str, policy: str, *, now: datetime) -> None:
    """Set a tool's override; `inherit` removes it."""
    conn.execute(t.delete().where(t.c.tool == tool))
    if policy != "inherit":
        conn.execute(t.insert().values(tool=tool, policy=policy, updated_at=now))
