"""Delivered notifications and the user's answers (`notifications`, `notification_responses`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._schema import notification_responses as responses_t
from .._schema import notifications as t

__all__ = [
    "NotificationRow",
    "get",
    "insert",
    "recent",
    "record_response",
    "responses_since",
    "set_desktop",
    "set_response",
    "settle",
]


@dataclass(frozen=True, slots=True)
class NotificationRow:
    id: str
    kind: str
    tier: str
    title: str
    body: str
    delivered_at: datetime
    count: int
    run_id: str | None
    automation_id: str | None
    response: str | None
    responded_at: datetime | None
    desktop: bool


def _row(r: sa.Row[tuple[object, ...]]) -> NotificationRow:
    m = r._mapping
    return NotificationRow(
        m["id"],
        m["kind"],
        m["tier"],
        m["title"],
        m["body"],
        m["delivered_at"],
        m["count"],
        m["run_id"],
        m["automation_id"],
        m["response"],
        m["responded_at"],
        bool(m["desktop"]),
    )


def insert(conn: Connection, row: NotificationRow) -> None:
    conn.execute(
        t.insert().values(
            id=row.id,
            kind=row.kind,
            tier=row.tier,
            title=row.title,
            body=row.body,
            delivered_at=row.delivered_at,
            count=row.count,
            run_id=row.run_id,
            automation_id=row.automation_id,
            response=row.response,
            responded_at=row.responded_at,
            desktop=row.desktop,
        )
    )


def get(conn: Connection, notification_id: str) -> NotificationRow | None:
    r = conn.execute(sa.select(t).where(t.c.id == notification_id)).first()
    return _row(r) if r is not None else None


def recent(conn: Connection, *, limit: int = 50, unanswered: bool = False) -> list[NotificationRow]:
    stmt = sa.select(t).order_by(t.c.delivered_at.desc(), t.c.id.desc()).limit(limit)
    if unanswered:
        stmt = stmt.where(t.c.response.is_(None))
    return [_row(r) for r in conn.execute(stmt)]


def set_response(conn: Connection, notification_id: str, response: str, at: datetime) -> None:
    conn.execute(t.update().where(t.c.id == notification_id).values(response=response, responded_at=at))


def settle(conn: Connection, run_id: str, kind: str, at: datetime) -> None:
    """Mark a run's unanswered notifications of `kind` accepted."""
    conn.execute(
        t.update()
        .where(t.c.run_id == run_id, t.c.kind == kind, t.c.response.is_(None))
        .values(response="accept", responded_at=at)
    )


def set_desktop(conn: Connection, notification_id: str) -> None:
    conn.execute(t.update().where(t.c.id == notification_id).values(desktop=True))


def record_response(conn: Connection, kind: str, response: str, at: datetime) -> None:
    conn.execute(responses_t.insert().values(kind=kind, response=response, at=at))


def responses_since(conn: Connection, since: datetime) -> list[tuple[str, str, datetime]]:
    """Every answer given at or after `since`, oldest first: (kind, response, when)."""
    stmt = sa.select(responses_t.c.kind, responses_t.c.response, responses_t.c.at).where(responses_t.c.at >= since)
    return [(r.kind, r.response, r.at) for r in conn.execute(stmt.order_by(responses_t.c.at))]
