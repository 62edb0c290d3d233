"""Sessions: create, read, list, settings, todos, and per-session event sequence allocation."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._rows import SessionRow
from .._schema import context_summaries, messages, operations
from .._schema import sessions as t
from . import search, spans
from ._util import from_row, to_values

__all__ = ["allocate_seqs", "delete", "get", "insert", "list_recent", "set_todos", "update"]


def insert(conn: Connection, row: SessionRow) -> None:
    conn.execute(t.insert().values(**to_values(row)))


def delete(conn: Connection, session_id: str) -> bool:
    """Delete a session with everything that hangs off it (its log, operations, messages, calls, requests, files,
    the summaries of its threads); its usage records stay, as the spend they were. False if there was none."""
    threads = sa.select(operations.c.thread_id).where(operations.c.session_id == session_id)
    summaries = context_summaries.c.thread_id
    conn.execute(context_summaries.delete().where(sa.or_(summaries == session_id, summaries.in_(threads))))
    search.forget_session(conn, session_id)
    spans.forget_session(conn, session_id)
    return conn.execute(t.delete().where(t.c.id == session_id)).rowcount > 0


def get(conn: Connection, session_id: str) -> SessionRow | None:
    r = conn.execute(sa.select(t).where(t.c.id == session_id)).first()
    return from_row(SessionRow, r) if r is not None else None


def list_recent(
    conn: Connection,
    *,
    limit: int,
    offset: int = 0,
    query: str | None = None,
    workspace: str | None = None,
    include_empty: bool = True,
) -> list[SessionRow]:
    """Sessions, newest first; only those whose title contains `query`, in `workspace`, with a message."""
    stmt = sa.select(t).order_by(t.c.updated_at.desc(), t.c.id.desc()).limit(limit).offset(offset)
    if workspace is not None:
        stmt = stmt.where(t.c.workspace == workspace)
    if not include_empty:
        stmt = stmt.where(sa.exists().where(messages.c.session_id == t.c.id))
    if query:
        escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        stmt = stmt.where(t.c.title.ilike(f"%{escaped}%", escape="\\"))
    return [from_row(SessionRow, r) for r in conn.execute(stmt)]


def update(conn: Connection, session_id: str, *, now: datetime, **values: str | bool | None) -> None:
    """Update settings columns (`title`, `provider`, `model`, `network`, `yolo`, `reasoning_effort`, `allowances`,
    `plan_mode`) and `updated_at`."""
    allowed = {"title", "provider", "model", "network", "yolo", "reasoning_effort", "allowances", "plan_mode"}
    unknown = set(values) - allowed
    if unknown:
        raise ValueError(f"not a session setting: {sorted(unknown)}")
    conn.execute(t.update().where(t.c.id == session_id).values(updated_at=now, **values))


def set_todos(conn: Connection, session_id: str, todos_json: str) -> None:
    conn.execute(t.update().where(t.c.id == session_id).values(todos=todos_json))


# Built once: this runs in every journal batch, and building the statement costs more than executing it.
_ALLOCATE = (
    t.update()
    .where(t.c.id == sa.bindparam("sid"))
    .values(last_seq=t.c.last_seq + sa.bindparam("n"), updated_at=sa.bindparam("now"))
    .returning(t.c.last_seq)
)


def allocate_seqs(conn: Connection, session_id: str, count: int, *, now: datetime) -> int:
    """Reserve `count` sequence numbers for a session and return the last one.

    One row update, so it serializes correctly on any engine (and across replicas on PostgreSQL).

    Raises:
        LookupError: the session does not exist.
    """
    last = conn.execute(_ALLOCATE, {"sid": session_id, "n": count, "now": now}).scalar()
    if last is None:
        raise LookupError(session_id)
    return int(last)
