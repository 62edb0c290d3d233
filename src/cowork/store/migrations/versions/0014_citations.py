"""Citations and grounded refusals: the passages each answer was given (`rag_citations`, read back by context
assembly's backfill), and messages left out of the model's context (`messages.excluded`, a grounded refusal and the
question it refused).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rag_citations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("operation_id", sa.String(64), nullable=False),
        sa.Column("chunk_id", sa.Integer, nullable=False),
        sa.Column("score", sa.Float),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Index("ix_rag_citations_session", "session_id", "id"),
    )
    # A plain ADD COLUMN, not a batch rebuild: rebuilding `messages` on SQLite would drop the triggers that keep
    # `search_index` (migration 0009) current.
    op.add_column("messages", sa.Column("excluded", sa.Boolean, nullable=False, server_default=sa.false()))


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS search_index_message")
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("excluded")
    if op.get_bind().dialect.name == "sqlite":  # the rebuilt table needs its trigger back (see 0009)
        op.execute(
            "CREATE TRIGGER search_index_message AFTER INSERT ON messages WHEN new.text != '' BEGIN "
            "INSERT INTO search_index (text, session_id, kind, ref) VALUES (new.text, new.session_id, "
            "CASE new.kind WHEN 'request' THEN 'user' ELSE 'assistant' END, new.id); END"
        )
    op.drop_table("rag_citations")
