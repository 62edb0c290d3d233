"""Full-text search over sessions: on SQLite the `search_index` FTS5 table of migration 0009 (kept by triggers), on
PostgreSQL the messages and tool results themselves, through the GIN indexes of migration 0018."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._schema import sessions
from ._util import PG_WORDS

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
    """The best matches of `text` (bm25 on SQLite, ts_rank on PostgreSQL), newest session first among equals;
    `workspace` keeps one folder's."""
    words = text.split()
    if not words:
        return []
    params: dict[str, object] = {"limit": limit, "open": _OPEN, "close": _CLOSE}
    if workspace is not None:
        params["workspace"] = workspace
    if conn.dialect.name == "postgresql":
        statement, extra = _postgres_statement(words, by_workspace=workspace is not None)
    else:
        statement, extra = _sqlite_statement(words, by_workspace=workspace is not None)
    rows = conn.execute(statement, params | extra).all()
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


def _sqlite_statement(words: list[str], *, by_workspace: bool) -> tuple[sa.TextClause, dict[str, object]]:
    where = "search_index MATCH :query" + (" AND sessions.workspace = :workspace" if by_workspace else "")
    statement = sa.text(
        "SELECT search_index.session_id, search_index.kind, search_index.ref, "
        "snippet(search_index, 0, :open, :close, '…', 16) AS snippet "
        "FROM search_index JOIN sessions ON sessions.id = search_index.session_id "
        f"WHERE {where} ORDER BY bm25(search_index), sessions.updated_at DESC LIMIT :limit"
    )
    return statement, {"query": fts_query(" ".join(words))}


_DOCUMENT = "to_tsvector('simple'::regconfig, " + PG_WORDS + ")"
"""A searched text as a tsvector, written exactly as migration 0018's indexes are (so the planner uses them)."""


def _postgres_statement(words: list[str], *, by_workspace: bool) -> tuple[sa.TextClause, dict[str, object]]:
    """Every word required, each as a phrase of its own tokens (`phraseto_tsquery` reads no query syntax), as the
    FTS5 query of `fts_query` asks; the snippet is `ts_headline`'s, with FTS5's ellipses where it cuts the text."""
    query = " && ".join(
        f"phraseto_tsquery('simple'::regconfig, {PG_WORDS.format(f':w{i}')})" for i in range(len(words))
    )
    message, result = _DOCUMENT.format("messages.text"), _DOCUMENT.format("tool_calls.result")
    in_workspace = "WHERE sessions.workspace = :workspace " if by_workspace else ""
    statement = sa.text(
        f"WITH query AS NOT MATERIALIZED (SELECT {query} AS q), "
        "found AS ("
        "SELECT messages.session_id, CASE messages.kind WHEN 'request' THEN 'user' ELSE 'assistant' END AS kind, "
        f"messages.id AS ref, messages.text AS text, ts_rank({message}, query.q, 1) AS rank "
        f"FROM messages, query WHERE messages.text != '' AND {message} @@ query.q "
        "UNION ALL "
        "SELECT tool_calls.session_id, 'tool', tool_calls.operation_id || ':' || tool_calls.tool_call_id, "
        f"tool_calls.result, ts_rank({result}, query.q, 1) "
        f"FROM tool_calls, query WHERE tool_calls.result IS NOT NULL AND {result} @@ query.q), "
        "best AS ("
        "SELECT found.*, sessions.updated_at FROM found JOIN sessions ON sessions.id = found.session_id "
        f"{in_workspace}ORDER BY found.rank DESC, sessions.updated_at DESC, found.ref LIMIT :limit), "
        "marked AS ("
        "SELECT best.*, ts_headline('simple'::regconfig, best.text, query.q, :options) AS headline FROM best, query) "
        "SELECT session_id, kind, ref, "
        "CASE WHEN strpos(ltrim(text), plain) > 1 THEN '…' ELSE '' END || headline || "
        "CASE WHEN strpos(text, plain) > 0 AND strpos(text, plain) + length(plain) <= length(rtrim(text)) "
        "THEN '…' ELSE '' END AS snippet "
        "FROM marked, LATERAL (SELECT replace(replace(headline, :open, ''), :close, '') AS plain) AS unmarked "
        "ORDER BY rank DESC, updated_at DESC, ref"
    )
    params: dict[str, object] = {f"w{i}": word for i, word in enumerate(words)}
    params["options"] = f'StartSel="{_OPEN}", StopSel="{_CLOSE}", MaxWords=16, MinWords=8'
    return statement, params


def forget_session(conn: Connection, session_id: str) -> None:
    """Take a deleted session's rows out of the index (on SQLite, where the index is a table of its own)."""
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
