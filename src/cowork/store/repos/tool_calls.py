"""The tool-call ledger: every call an operation's model asked for, and how far it got."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._rows import ToolCallRow
from .._schema import tool_calls as t
from ._util import from_row, to_values

__all__ = ["for_operation", "insert_many", "interrupt_started", "update"]


def insert_many(conn: Connection, rows: Sequence[ToolCallRow]) -> None:
    if rows:
        conn.execute(t.insert(), [to_values(r) for r in rows])


def update(
    conn: Connection,
    operation_id: str,
    tool_call_id: str,
    *,
    status: str,
    now: datetime,
    result: str | None = None,
    is_error: bool | None = None,
    meta: str | None = None,
) -> None:
    values: dict[str, Any] = {"status": status, "updated_at": now}
    if result is not None:
        values["result"] = result
        values["is_error"] = is_error
    if meta is not None:
        values["meta"] = meta
    conn.execute(t.update().where(t.c.operation_id == operation_id, t.c.tool_call_id == tool_call_id).values(**values))


def for_operation(conn: Connection, operation_id: str, *, step: int | None = None) -> list[ToolCallRow]:
    stmt = sa.select(t).where(t.c.operation_id == operation_id).order_by(t.c.step, t.c.created_at)
    if step is not None:
        stmt = stmt.where(t.c.step == step)
    return [from_row(ToolCallRow, r) for r in conn.execute(stmt)]


def interrupt_started(conn: Connection, operation_ids: Iterable[str], *, now: datetime) -> int:
    """Calls that were running when the process died become `interrupted`; returns how many."""
    ids = list(operation_ids)
    if not ids:
        return 0
    result = conn.execute(
        t.update()
        .where(t.c.operation_id.in_(ids), t.c.status == "started")
        .values(status="interrupted", updated_at=now)
    )
    return int(result.rowcount or 0)
