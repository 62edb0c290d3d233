"""Checkpoints: before each tool call that changed a session's folder, what it changed (each path before and after).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "checkpoints",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("workspace", sa.Text, nullable=False),
        sa.Column("operation_id", sa.String(64), nullable=False),
        sa.Column("tool_call_id", sa.String(128), nullable=False),
        sa.Column("tool", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("undone_at", sa.DateTime(timezone=True)),
        sa.Index("ix_checkpoints_session", "session_id", "id"),
        sa.Index("ix_checkpoints_created", "created_at"),
    )
    op.create_table(
        "checkpoint_files",
        sa.Column("checkpoint_id", sa.Integer, sa.ForeignKey("checkpoints.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("path", sa.Text, primary_key=True),
        sa.Column("before_blob", sa.String(40)),
        sa.Column("before_mode", sa.Integer, nullable=False),
        sa.Column("after_blob", sa.String(40)),
        sa.Column("after_mode", sa.Integer, nullable=False),
        sa.Column("size", sa.Integer, nullable=False, server_default="0"),
    )


def downgrade() -> None:
    op.drop_table("checkpoint_files")
    op.drop_table("checkpoints")
