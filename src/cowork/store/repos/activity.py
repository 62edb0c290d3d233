"""Captured activity spans (`activity_spans`): written while they last, read by time range, deleted by range."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._schema import activity_spans as t
from ._util import escape_like

__all__ = ["ActivitySpanRow", "delete_before", "delete_range", "in_range", "put", "put_many"]


@dataclass(frozen=True, slots=True)
class ActivitySpanRow:
    id: str
    app: str
    title: str
    process: str | None
    started_at: datetime
    ended_at: datetime

    @property
    def seconds(self) -> float:
        return (self.ended_at - self.started_at).total_seconds()


def _row(r: sa.Row[tuple[str, str, str, str | None, datetime, datetime]]) -> ActivitySpanRow:
    return ActivitySpanRow(r.id, r.app, r.title, r.process, r.started_at, r.ended_at)


def put(conn: Connection, span: ActivitySpanRow) -> None:
    """Insert the span, or move its end (a span is written again each flush while it lasts)."""
    put_many(conn, [span])


def put_many(conn: Connection, spans: list[ActivitySpanRow]) -> None:
    if not spans:
        return
    ids = [s.id for s in spans]
    known = set(conn.execute(sa.select(t.c.id).where(t.c.id.in_(ids))).scalars())
    fresh = [s for s in spans if s.id not in known]
    if fresh:
        conn.execute(
            t.insert(),
            [
                {
                    "id": s.id,
                    "app": s.app,
                    "title": s.title,
                    "process": s.process,
                    "started_at": s.started_at,
                    "ended_at": s.ended_at,
                }
                for s in fresh
            ],
        )
    moved = [{"span_id": s.id, "span_end": s.ended_at} for s in spans if s.id in known]
    if moved:  # one statement for all of them (executemany), not one per span
        update = t.update().where(t.c.id == sa.bindparam("span_id")).values(ended_at=sa.bindparam("span_end"))
        conn.execute(update, moved)


def in_range(
    conn: Connection,
    since: datetime,
    until: datetime,
    *,
    app: str | None = None,
    title: str | None = None,
    limit: int | None = None,
) -> tuple[list[ActivitySpanRow], bool]:
    """Spans overlapping [since, until), oldest first, with `app` / `title` as any-case substrings; whether more
    than `limit` matched (then the newest `limit` are returned)."""
    stmt = sa.select(t).where(t.c.started_at < until, t.c.ended_at > since)
    if app:
        stmt = stmt.where(sa.func.lower(t.c.app).like(f"%{escape_like(app.lower())}%", escape="\\"))
    if title:
        stmt = stmt.where(sa.func.lower(t.c.title).like(f"%{escape_like(title.lower())}%", escape="\\"))
    stmt = stmt.order_by(t.c.started_at.desc(), t.c.id)
    if limit is not None:
        stmt = stmt.limit(limit + 1)
    rows = [_row(r) for r in conn.execute(stmt)]
    truncated = limit is not None and len(rows) > limit
    if truncated:
        rows = rows[:limit]
    rows.reverse()
    return rows, truncated


def delete_range(conn: Connection, since: datetime, until: datetime) -> int:
    """Remove what lies in [since, until): spans inside it are deleted, spans across an edge are cut back to
    outside it (one across the whole range keeps its part before, and a new span its part after); how many spans
    were touched."""
    touched = 0
    for span in [_row(r) for r in conn.execute(sa.select(t).where(t.c.started_at < until, t.c.ended_at > since))]:
        touched += 1
        before = span.started_at < since
        after = span.ended_at > until
        if not before and not after:
            conn.execute(t.delete().where(t.c.id == span.id))
            continue
        if before:
            conn.execute(t.update().where(t.c.id == span.id).values(ended_at=since))
        if after and before:
            conn.execute(
                t.insert().values(
                    id=span.id[:24] + "-after",
                    app=span.app,
                    title=span.title,
                    process=span.process,
                    started_at=until,
                    ended_at=span.ended_at,
                )
            )
        elif after:
            conn.execute(t.update().where(t.c.id == span.id).values(started_at=until))
    return touched


def delete_before(conn: Connection, moment: datetime) -> int:
    """Delete spans that ended before `moment` (retention); how many."""
    return int(conn.execute(t.delete().where(t.c.ended_at < moment)).rowcount or 0)
