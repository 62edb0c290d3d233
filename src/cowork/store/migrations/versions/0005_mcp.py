"""MCP issue: servers added over the protocol (config files are an import format; these rows win).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mcp_servers",
        sa.Column("name", sa.String(40), primary_key=True),
        sa.Column("transport", sa.String(16), nullable=False),
        sa.Column("command", sa.Text),
        sa.Column("args", sa.Text, nullable=False, server_default="[]"),
        sa.Column("env", sa.Text, nullable=False, server_default="{}"),
        sa.Column("url", sa.Text),
        sa.Column("headers", sa.Text, nullable=False, server_default="{}"),
        sa.Column("cwd", sa.Text),
        sa.Column("enabled", sa.Boolean, nullable=False, server_default=sa.true()),
        sa.Column("auto_start", sa.Boolean, nullable=False, server_default=sa.true()),
        sa.Column("policy", sa.String(16), nullable=False, server_default="manual"),
        sa.Column("allowed_tools", sa.Text, nullable=False, server_default="[]"),
        sa.Column("source", sa.String(16), nullable=False, server_default="database"),
        sa.Column("workspace", sa.Text),
        sa.Column("tools", sa.Text, nullable=False, server_default="[]"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("mcp_servers")
