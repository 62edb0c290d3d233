"""Per-session network and --yolo switches; per-tool approval overrides (always | never).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("network", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("yolo", sa.Boolean, nullable=False, server_default=sa.false()))
    op.create_table(
        "tool_policies",
        sa.Column("tool", sa.String(300), primary_key=True),
        sa.Column("policy", sa.String(16), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("tool_policies")
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("yolo")
        batch.drop_column("network")
