"""The files a session changed and their text before its first change to each (see `session/diff`)."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._schema import session_files as t

__all__ = ["baselines", "remember"]


def remember(conn: Connection, session_id: str, path: str, baseline: str | None, *, now: datetime) -> None:
    """Keep the file's text before the session's first change to it; later changes keep the first."""
    exists = conn.execute(sa.select(t.c.path).where(t.c.session_id == session_id, t.c.path == path)).first()
    if exists is None:
        conn.execute(t.insert().values(session_id=session_id, path=path, baseline=baseline, created_at=now))


def baselines(conn: Connection, session_id: str) -> list[tuple[str, str | None]]:
    """`(absolute path, text before or None)` in the order the session first changed them."""
    stmt = sa.select(t.c.path, t.c.baseline).where(t.c.session_id == session_id).order_by(t.c.created_at, t.c.path)
    return [(r.path, r.baseline) for r in conn.execute(stmt)]
