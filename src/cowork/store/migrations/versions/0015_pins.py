"""Pinned documents: files of a folder the user wants in every turn's context (`rag_pins`).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rag_pins",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("scope", sa.Text, nullable=False),
        sa.Column("uri", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("scope", "uri", name="uq_rag_pins"),
    )


def downgrade() -> None:
    op.drop_table("rag_pins")
