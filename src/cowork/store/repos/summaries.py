"""Context summaries: the older part of a thread, compressed to fit the model's window."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._rows import ContextSummaryRow
from .._schema import context_summaries as t
from ._util import from_row, to_values

__all__ = ["for_thread", "insert", "latest"]


def insert(conn: Connection, row: ContextSummaryRow) -> None:
    conn.execute(t.insert().values(**to_values(row)))


def latest(conn: Connection, thread_id: str) -> ContextSummaryRow | None:
    r = conn.execute(
        sa.select(t).where(t.c.thread_id == thread_id).order_by(t.c.up_to_position.desc()).limit(1)
    ).first()
    return from_row(ContextSummaryRow, r) if r is not None else None


def for_thread(conn: Connection, thread_id: str) -> list[ContextSummaryRow]:
    """Every summary made of the thread, oldest first."""
    stmt = sa.select(t).where(t.c.thread_id == thread_id).order_by(t.c.up_to_position, t.c.created_at)
    return [from_row(ContextSummaryRow, r) for r in conn.execute(stmt)]
