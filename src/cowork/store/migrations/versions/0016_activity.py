"""Captured activity: spans of time in one window (`activity_spans`; see `cowork.capture`).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "activity_spans",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("app", sa.Text, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("process", sa.Text),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_activity_spans_started", "activity_spans", ["started_at"])
    op.create_index("ix_activity_spans_ended", "activity_spans", ["ended_at"])


def downgrade() -> None:
    op.drop_table("activity_spans")
