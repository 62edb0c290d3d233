"""Model-facing messages, by thread (a session's main conversation, or a sub-agent's own). Provider-neutral."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._rows import MessageRow
from .._schema import messages as t
from ._util import from_row, to_values

__all__ = ["exclude", "for_session", "for_thread", "insert", "next_position", "supersede"]

_INSERT = t.insert()


def insert(conn: Connection, row: MessageRow) -> None:
    values = to_values(row)
    values["thread_id"] = row.thread_id or row.session_id
    conn.execute(_INSERT, values)


_MAX_POSITION = sa.select(sa.func.max(t.c.position)).where(t.c.thread_id == sa.bindparam("thread"))


def next_position(conn: Connection, thread_id: str) -> int:
    current = conn.execute(_MAX_POSITION, {"thread": thread_id}).scalar()
    return 0 if current is None else int(current) + 1


def for_thread(conn: Connection, thread_id: str, *, after_position: int = -1) -> list[MessageRow]:
    """The model-facing history: superseded messages (a retried answer) and excluded ones (a grounded refusal and
    its question) left out."""
    stmt = (
        sa.select(t)
        .where(
            t.c.thread_id == thread_id,
            t.c.position > after_position,
            t.c.superseded == sa.false(),
            t.c.excluded == sa.false(),
        )
        .order_by(t.c.position)
    )
    return [from_row(MessageRow, r) for r in conn.execute(stmt)]


def supersede(conn: Connection, operation_id: str, *, thread_id: str, keep: list[str]) -> int:
    """Take an operation's messages in one thread (but `keep`) out of the model-facing history; they stay for
    display. (A fork's copies of them keep the operation id, and stay.)"""
    stmt = (
        t.update()
        .where(t.c.operation_id == operation_id, t.c.thread_id == thread_id, t.c.id.not_in(keep))
        .values(superseded=True)
    )
    return int(conn.execute(stmt).rowcount)


def for_session(conn: Connection, session_id: str, *, only_with_text: bool = False) -> list[MessageRow]:
    """The session's main conversation (sub-agents' threads are not part of it)."""
    stmt = sa.select(t).where(t.c.thread_id == session_id).order_by(t.c.position)
    if only_with_text:
        stmt = stmt.where(t.c.text != "")
    return [from_row(MessageRow, r) for r in conn.execute(stmt)]


def exclude(conn: Connection, operation_id: str, *, thread_id: str) -> int:
    """Keep an operation's messages in one thread out of the model's context (a grounded refusal and its question);
    they stay for display."""
    stmt = t.update().where(t.c.operation_id == operation_id, t.c.thread_id == thread_id).values(excluded=True)
    return int(conn.execute(stmt).rowcount)
