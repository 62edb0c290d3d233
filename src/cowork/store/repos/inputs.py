"""Steering input: user messages sent while an operation runs, applied at its next step boundary."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._rows import OperationInputRow
from .._schema import operation_inputs as t
from ._util import from_row, to_values

__all__ = ["find_by_client_message", "insert", "mark_applied", "queued"]


def insert(conn: Connection, row: OperationInputRow) -> None:
    conn.execute(t.insert().values(**to_values(row)))


def find_by_client_message(conn: Connection, session_id: str, client_message_id: str) -> OperationInputRow | None:
    r = conn.execute(
        sa.select(t).where(t.c.session_id == session_id, t.c.client_message_id == client_message_id)
    ).first()
    return from_row(OperationInputRow, r) if r is not None else None


def queued(conn: Connection, operation_id: str) -> list[OperationInputRow]:
    stmt = sa.select(t).where(t.c.operation_id == operation_id, t.c.status == "queued").order_by(t.c.created_at, t.c.id)
    return [from_row(OperationInputRow, r) for r in conn.execute(stmt)]


def mark_applied(conn: Connection, ids: Sequence[str]) -> None:
    if ids:
        conn.execute(t.update().where(t.c.id.in_(list(ids))).values(status="applied"))
