"""MCP install issue: the install state machine's state, persisted at every transition so a restarted Cowork
resumes an install at its pause (secrets are never stored here: they go to the credential store).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mcp_installs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("progress", sa.Integer, nullable=False, server_default="0"),
        sa.Column("message", sa.Text, nullable=False, server_default=""),
        sa.Column("manifest", sa.Text, nullable=False),
        sa.Column("config", sa.Text, nullable=False, server_default="{}"),
        sa.Column("secrets", sa.Text, nullable=False, server_default="[]"),
        sa.Column("dependencies", sa.Text, nullable=False, server_default="[]"),
        sa.Column("tools", sa.Text, nullable=False, server_default="[]"),
        sa.Column("error", sa.Text),
        sa.Column("stderr_tail", sa.Text),
        sa.Column("saved", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_mcp_installs_name", "mcp_installs", ["name"])


def downgrade() -> None:
    op.drop_index("ix_mcp_installs_name", "mcp_installs")
    op.drop_table("mcp_installs")
