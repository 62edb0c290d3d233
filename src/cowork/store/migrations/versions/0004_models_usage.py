"""Models issue: a usage ledger (one row per model call) for per-day spend and budgets; runtime settings
(provider base URLs, budget caps changed from a client); per-session reasoning effort; the router's tier and
the retry group (`ask_id`) of an operation; superseded messages (a "try harder" retry replaces an answer).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "usage_records",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("operation_id", sa.String(64), nullable=False),
        sa.Column("root_operation_id", sa.String(64), nullable=False),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("provider", sa.String(100), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("input_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("output_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cached_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("reasoning_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cost_usd", sa.Float, nullable=False, server_default="0"),
        sa.Column("cost_known", sa.Boolean, nullable=False, server_default=sa.true()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_usage_records_created_at", "usage_records", ["created_at"])
    op.create_index("ix_usage_records_session", "usage_records", ["session_id"])
    op.create_index("ix_usage_records_root", "usage_records", ["root_operation_id"])
    op.create_table(
        "settings",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("reasoning_effort", sa.String(16)))
    with op.batch_alter_table("operations") as batch:
        batch.add_column(sa.Column("ask_id", sa.String(64)))
        batch.add_column(sa.Column("tier", sa.String(40)))
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("superseded", sa.Boolean, nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("superseded")
    with op.batch_alter_table("operations") as batch:
        batch.drop_column("tier")
        batch.drop_column("ask_id")
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("reasoning_effort")
    op.drop_table("settings")
    op.drop_index("ix_usage_records_root", "usage_records")
    op.drop_index("ix_usage_records_session", "usage_records")
    op.drop_index("ix_usage_records_created_at", "usage_records")
    op.drop_table("usage_records")
