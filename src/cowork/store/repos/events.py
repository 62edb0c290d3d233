"""The append-only event log."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._rows import EventRow
from .._schema import events as t

__all__ = ["after", "insert_many"]


_INSERT = t.insert()


def insert_many(conn: Connection, rows: Sequence[EventRow]) -> None:
    if rows:
        conn.execute(
            _INSERT,
            [
                {
                    "session_id": r.session_id,
                    "seq": r.seq,
                    "type": r.type,
                    "payload": r.payload,
                    "created_at": r.created_at,
                }
                for r in rows
            ],
        )


def of_type(conn: Connection, session_id: str, event_type: str) -> list[EventRow]:
    """A session's events of one type, oldest first."""
    stmt = (
        sa.select(t.c.session_id, t.c.seq, t.c.type, t.c.payload, t.c.created_at)
        .where(t.c.session_id == session_id, t.c.type == event_type)
        .order_by(t.c.seq)
    )
    return [EventRow(r.session_id, r.seq, r.type, r.payload, r.created_at) for r in conn.execute(stmt)]


def after(conn: Connection, session_id: str, after_seq: int, limit: int) -> list[EventRow]:
    """Events of a session with `seq > after_seq`, oldest first."""
    stmt = (
        sa.select(t.c.session_id, t.c.seq, t.c.type, t.c.payload, t.c.created_at)
        .where(t.c.session_id == session_id, t.c.seq > after_seq)
        .order_by(t.c.seq)
        .limit(limit)
    )
    return [EventRow(r.session_id, r.seq, r.type, r.payload, r.created_at) for r in conn.execute(stmt)]
