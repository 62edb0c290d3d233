"""Full-text search on PostgreSQL: what the FTS5 tables of 0009 (`search_index`) and 0013 (`rag_fts`) do on SQLite.

Session search (`repos.search`) reads `messages.text` and `tool_calls.result` themselves through GIN indexes on
`to_tsvector('simple', …)` of the text's letters and digits (the `simple` configuration: case-folded words, no
stemming, as FTS5's unicode61); rows
leave with their session. Retrieval keeps a `rag_fts` table of its own (chunk id, a tsvector of the source's title
and the chunk's heading weighted A and the chunk's text weighted B, `english` stemming as FTS5's porter), written by
`repos.retrieval` beside the chunks and deleted with them (ON DELETE CASCADE). Neither is in `_schema.metadata`
(the indexes are on expressions; `rag_fts` is the engine's own on each), like the FTS5 tables.

Nothing on SQLite.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

from __future__ import annotations

from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

_WORDS = "regexp_replace({}, '[^[:alnum:]]+', ' ', 'g')"
"""Only letters and digits make words, anything else parts them (`notes.txt` is `notes txt`, `1.21` is `1 21`), as in
FTS5's unicode61; PostgreSQL's own parser would keep file names, hosts and numbers whole."""

_TITLE_AND_HEADING = "rag_sources.title || ' ' || rag_chunks.heading"

_STATEMENTS = (
    "CREATE INDEX search_index_messages ON messages "
    f"USING gin (to_tsvector('simple'::regconfig, {_WORDS.format('text')}))",
    "CREATE INDEX search_index_tool_calls ON tool_calls "
    f"USING gin (to_tsvector('simple'::regconfig, {_WORDS.format('result')}))",
    "CREATE TABLE rag_fts ("
    "id INTEGER PRIMARY KEY REFERENCES rag_chunks (id) ON DELETE CASCADE, document TSVECTOR NOT NULL)",
    "CREATE INDEX rag_fts_document ON rag_fts USING gin (document)",
    "INSERT INTO rag_fts (id, document) SELECT rag_chunks.id, "
    "setweight(to_tsvector('english'::regconfig, "
    f"{_WORDS.format(_TITLE_AND_HEADING)}), 'A') || "
    f"setweight(to_tsvector('english'::regconfig, {_WORDS.format('rag_chunks.text')}), 'B') "
    "FROM rag_chunks JOIN rag_sources ON rag_sources.id = rag_chunks.source_id",
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for statement in _STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TABLE IF EXISTS rag_fts")
    op.execute("DROP INDEX IF EXISTS search_index_tool_calls")
    op.execute("DROP INDEX IF EXISTS search_index_messages")
