"""Full-text search over sessions (the `search_index` FTS5 table of migration 0009, kept by triggers)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._schema import sessions

__all__ = ["SearchHit", "forget_session", "fts_query", "search"]

_OPEN, _CLOSE = "\x02", "\x03"
"""Where FTS5's `snippet()` marks a match (characters no text indexed here is shown with)."""


@dataclass(frozen=True)
class SearchHit:
    session_id: str
    title: str
    workspace: str
    updated_at: datetime
    kind: str
    ref: str
    snippet: str
    matches: list[tuple[int, int]]


def fts_query(text: str) -> str:
    """The user's words as an FTS5 query: each word a quoted phrase (so nothing in them is query syntax), all
    required. Empty when there are no words."""
    return " ".join('"' + word.replace('"', '""') + '"' for word in text.split())


def search(conn: Connection, text: str, *, workspace: str | None, limit: int) -> list[SearchHit]:
    """The best matches of `text` (bm25), newest session first among equals; `workspace` keeps one folder's."""
    query = fts_query(text)
    if not query:
        return []
    where = "search_index MATCH :query"
    params: dict[str, object] = {"query": query, "limit": limit}
    if workspace is not None:
        where += " AND sessions.workspace = :workspace"
        params["workspace"] = workspace
    statement = sa.text(
        "SELECT search_index.session_id, search_index.kind, search_index.ref, "
        "snippet(search_index, 0, :open, :close, '…', 16) AS snippet "
        "FROM search_index JOIN sessions ON sessions.id = search_index.session_id "
        f"WHERE {where} ORDER BY bm25(search_index), sessions.updated_at DESC LIMIT :limit"
    )
    rows = conn.execute(statement, params | {"open": _OPEN, "close": _CLOSE}).all()
    ids = {row.session_id for row in rows}
    by_id = {r.id: r for r in conn.execute(sa.select(sessions).where(sessions.c.id.in_(ids)))} if ids else {}
    hits: list[SearchHit] = []
    for row in rows:
        session = by_id.get(row.session_id)
        if session is None:
            continue
        snippet, matches = _unmark(row.snippet)
        hits.append(
            SearchHit(
                row.session_id,
                session.title,
                session.workspace,
                session.updated_at,
                row.kind,
                row.ref,
                snippet,
                matches,
            )
        )
    return hits


def forget_session(conn: Connection, session_id: str) -> None:
    """Take a deleted session's rows out of the index (on SQLite, where the index is)."""
    if conn.dialect.name == "sqlite":
        conn.execute(sa.text("DELETE FROM search_index WHERE session_id = :sid"), {"sid": session_id})


def _unmark(marked: str) -> tuple[str, list[tuple[int, int]]]:
    """The snippet without its markers, and where the matches are in it."""
    text: list[str] = []
    matches: list[tuple[int, int]] = []
    start = 0
    length = 0
    for char in marked:
        if char == _OPEN:
            start = length
        elif char == _CLOSE:
            matches.append((start, length))
        else:
            text.append(char)
            length += 1
    return "".join(text), matches
