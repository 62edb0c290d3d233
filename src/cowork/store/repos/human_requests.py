"""Approvals and questions waiting on a person; they outlive the process."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._rows import HumanRequestRow
from .._schema import human_requests as t
from ._util import from_row, to_values

__all__ = ["cancel_pending", "get", "insert", "pending", "resolve"]


def insert(conn: Connection, row: HumanRequestRow) -> None:
    conn.execute(t.insert().values(**to_values(row)))


def get(conn: Connection, request_id: str) -> HumanRequestRow | None:
    r = conn.execute(sa.select(t).where(t.c.id == request_id)).first()
    return from_row(HumanRequestRow, r) if r is not None else None


def pending(
    conn: Connection, *, session_id: str | None = None, operation_id: str | None = None
) -> list[HumanRequestRow]:
    stmt = sa.select(t).where(t.c.status == "pending").order_by(t.c.created_at)
    if session_id is not None:
        stmt = stmt.where(t.c.session_id == session_id)
    if operation_id is not None:
        stmt = stmt.where(t.c.operation_id == operation_id)
    return [from_row(HumanRequestRow, r) for r in conn.execute(stmt)]


def resolve(conn: Connection, request_id: str, *, response: str, now: datetime, status: str = "resolved") -> bool:
    """Resolve a pending request; False if it was no longer pending (someone answered first)."""
    result = conn.execute(
        t.update()
        .where(t.c.id == request_id, t.c.status == "pending")
        .values(status=status, response=response, resolved_at=now)
    )
    return bool(result.rowcount)


def cancel_pending(conn: Connection, operation_id: str, *, now: datetime) -> list[str]:
    """Cancel an operation's open requests (it was cancelled); returns their ids."""
    ids = [r.id for r in pending(conn, operation_id=operation_id)]
    if ids:
        conn.execute(
            t.update()
            .where(t.c.id.in_(ids))
            .values(status="cancelled", response='{"cancelled": true}', resolved_at=now)
        )
    return ids
