"""Operations: one agent execution each (a user turn, a sub-agent), with progress and spend."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._rows import OperationRow
from .._schema import operations as t
from ._util import from_row, to_values

__all__ = [
    "add_usage",
    "children",
    "find_by_client_message",
    "for_session",
    "get",
    "insert",
    "latest_active",
    "set_ask",
    "set_status",
    "set_step",
    "with_status",
]


def insert(conn: Connection, row: OperationRow) -> None:
    values = to_values(row)
    values["thread_id"] = row.thread_id or row.session_id
    conn.execute(t.insert().values(**values))


def get(conn: Connection, operation_id: str) -> OperationRow | None:
    r = conn.execute(sa.select(t).where(t.c.id == operation_id)).first()
    return from_row(OperationRow, r) if r is not None else None


def find_by_client_message(conn: Connection, session_id: str, client_message_id: str) -> OperationRow | None:
    r = conn.execute(
        sa.select(t).where(t.c.session_id == session_id, t.c.client_message_id == client_message_id)
    ).first()
    return from_row(OperationRow, r) if r is not None else None


def latest_active(conn: Connection, session_id: str, statuses: Iterable[str]) -> OperationRow | None:
    r = conn.execute(
        sa.select(t)
        .where(t.c.session_id == session_id, t.c.status.in_(list(statuses)), t.c.parent_operation_id.is_(None))
        .order_by(t.c.created_at.desc())
        .limit(1)
    ).first()
    return from_row(OperationRow, r) if r is not None else None


def with_status(conn: Connection, statuses: Iterable[str]) -> list[OperationRow]:
    stmt = sa.select(t).where(t.c.status.in_(list(statuses))).order_by(t.c.created_at)
    return [from_row(OperationRow, r) for r in conn.execute(stmt)]


def children(conn: Connection, parent_operation_id: str) -> list[OperationRow]:
    stmt = sa.select(t).where(t.c.parent_operation_id == parent_operation_id).order_by(t.c.created_at)
    return [from_row(OperationRow, r) for r in conn.execute(stmt)]


def for_session(conn: Connection, session_id: str, *, sub_agents_only: bool = False) -> list[OperationRow]:
    stmt = sa.select(t).where(t.c.session_id == session_id).order_by(t.c.created_at)
    if sub_agents_only:
        stmt = stmt.where(t.c.parent_operation_id.is_not(None))
    return [from_row(OperationRow, r) for r in conn.execute(stmt)]


_SET_STATUS = (
    t.update()
    .where(t.c.id == sa.bindparam("oid"))
    .values(status=sa.bindparam("status"), updated_at=sa.bindparam("updated_at"))
)


def set_status(
    conn: Connection,
    operation_id: str,
    status: str,
    *,
    now: datetime,
    step_count: int | None = None,
    error_code: str | None = None,
    error_message: str | None = None,
    summary: str | None = None,
) -> None:
    if step_count is None and error_code is None and error_message is None and summary is None:
        conn.execute(_SET_STATUS, {"oid": operation_id, "status": status, "updated_at": now})
        return
    values: dict[str, Any] = {"status": status, "updated_at": now}
    if step_count is not None:
        values["step_count"] = step_count
    if error_code is not None or error_message is not None:
        values["error_code"] = error_code
        values["error_message"] = error_message
    if summary is not None:
        values["summary"] = summary
    conn.execute(t.update().where(t.c.id == operation_id).values(**values))


_SET_STEP = (
    t.update()
    .where(t.c.id == sa.bindparam("oid"))
    .values(step_count=sa.bindparam("step_count"), updated_at=sa.bindparam("updated_at"))
)


def set_step(conn: Connection, operation_id: str, step_count: int, *, now: datetime) -> None:
    """Record progress (the step reached) without touching the status."""
    conn.execute(_SET_STEP, {"oid": operation_id, "step_count": step_count, "updated_at": now})


_ADD_USAGE = (
    t.update()
    .where(t.c.id == sa.bindparam("oid"))
    .values(
        step_count=sa.bindparam("step_count"),
        updated_at=sa.bindparam("updated_at"),
        input_tokens=t.c.input_tokens + sa.bindparam("input_tokens"),
        output_tokens=t.c.output_tokens + sa.bindparam("output_tokens"),
        cached_tokens=t.c.cached_tokens + sa.bindparam("cached_tokens"),
        reasoning_tokens=t.c.reasoning_tokens + sa.bindparam("reasoning_tokens"),
        cost_usd=t.c.cost_usd + sa.bindparam("cost_usd"),
    )
)


def add_usage(
    conn: Connection,
    operation_id: str,
    *,
    step_count: int,
    now: datetime,
    input_tokens: int,
    output_tokens: int,
    cached_tokens: int,
    reasoning_tokens: int,
    cost_usd: float,
) -> None:
    """Record a model step: the step reached and what it used and cost (added to the totals)."""
    conn.execute(
        _ADD_USAGE,
        {
            "oid": operation_id,
            "step_count": step_count,
            "updated_at": now,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cached_tokens": cached_tokens,
            "reasoning_tokens": reasoning_tokens,
            "cost_usd": cost_usd,
        },
    )


def set_ask(conn: Connection, operation_id: str, ask_id: str) -> None:
    """Put an operation in a retry group (a try-harder retry joins its original's)."""
    conn.execute(t.update().where(t.c.id == operation_id).values(ask_id=ask_id))
