"""Full-text search over what was said and what tools returned, across sessions (`session/search`).

An FTS5 table on SQLite, kept by triggers: a message with text, and a tool call once it has a result, are indexed
as they are written. Rows leave it with their session (`repos.sessions.delete`). Not part of `_schema.metadata`
(a virtual table): `tests/store/test_migrations.py` leaves it out of the comparison.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_STATEMENTS = (
    # `ref`: the message id, or `operation id:tool call id`; `kind`: user, assistant or tool.
    "CREATE VIRTUAL TABLE search_index USING fts5("
    "text, session_id UNINDEXED, kind UNINDEXED, ref UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')",
    "CREATE TRIGGER search_index_message AFTER INSERT ON messages WHEN new.text != '' BEGIN "
    "INSERT INTO search_index (text, session_id, kind, ref) VALUES (new.text, new.session_id, "
    "CASE new.kind WHEN 'request' THEN 'user' ELSE 'assistant' END, new.id); END",
    "CREATE TRIGGER search_index_tool_insert AFTER INSERT ON tool_calls WHEN new.result IS NOT NULL BEGIN "
    "INSERT INTO search_index (text, session_id, kind, ref) VALUES (new.result, new.session_id, 'tool', "
    "new.operation_id || ':' || new.tool_call_id); END",
    "CREATE TRIGGER search_index_tool_result AFTER UPDATE OF result ON tool_calls "
    "WHEN new.result IS NOT NULL AND old.result IS NULL BEGIN "
    "INSERT INTO search_index (text, session_id, kind, ref) VALUES (new.result, new.session_id, 'tool', "
    "new.operation_id || ':' || new.tool_call_id); END",
    "INSERT INTO search_index (text, session_id, kind, ref) SELECT text, session_id, "
    "CASE kind WHEN 'request' THEN 'user' ELSE 'assistant' END, id FROM messages WHERE text != ''",
    "INSERT INTO search_index (text, session_id, kind, ref) SELECT result, session_id, 'tool', "
    "operation_id || ':' || tool_call_id FROM tool_calls WHERE result IS NOT NULL",
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for statement in _STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for name in ("search_index_message", "search_index_tool_insert", "search_index_tool_result"):
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.execute("DROP TABLE IF EXISTS search_index")
