"""Automations, their runs and steps, and delivered notifications (see `cowork.automations`, `cowork.notify`).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "automations",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("definition", sa.Text, nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_fire_at", sa.DateTime(timezone=True)),
        sa.Column("session_id", sa.String(32)),
    )
    op.create_table(
        "automation_runs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("automation_id", sa.String(32), nullable=False),
        sa.Column("automation_name", sa.String(100), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("definition", sa.Text, nullable=False),
        sa.Column("status", sa.String(24), nullable=False),
        sa.Column("trigger", sa.Text, nullable=False),
        sa.Column("inputs", sa.Text, nullable=False),
        sa.Column("fire_key", sa.String(200)),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.Column("outputs", sa.Text, nullable=False),
        sa.Column("resume_at", sa.Integer),
        sa.Column("result", sa.Text),
        sa.Column("error", sa.Text),
        sa.Column("pending", sa.Text),
        sa.Column("approved_step", sa.String(64)),
        sa.Column("session_id", sa.String(32)),
        sa.UniqueConstraint("automation_id", "fire_key", name="uq_automation_runs_fire"),
    )
    op.create_index("ix_automation_runs_automation", "automation_runs", ["automation_id", "started_at"])
    op.create_index("ix_automation_runs_status", "automation_runs", ["status"])
    op.create_table(
        "automation_run_steps",
        sa.Column("run_id", sa.String(32), primary_key=True),
        sa.Column("step_id", sa.String(64), primary_key=True),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("type", sa.String(24), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("input", sa.Text),
        sa.Column("output", sa.Text),
        sa.Column("error", sa.Text),
        sa.Column("note", sa.Text),
        sa.Column("started_at", sa.DateTime(timezone=True)),
        sa.Column("duration_ms", sa.Float),
    )
    op.create_table(
        "notifications",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("kind", sa.String(200), nullable=False),
        sa.Column("tier", sa.String(16), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("run_id", sa.String(32)),
        sa.Column("automation_id", sa.String(32)),
        sa.Column("response", sa.String(16)),
        sa.Column("responded_at", sa.DateTime(timezone=True)),
        sa.Column("desktop", sa.Boolean, nullable=False),
    )
    op.create_index("ix_notifications_delivered", "notifications", ["delivered_at"])
    op.create_table(
        "notification_responses",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(200), nullable=False),
        sa.Column("response", sa.String(16), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_notification_responses_kind", "notification_responses", ["kind", "at"])


def downgrade() -> None:
    for table in ("notification_responses", "notifications", "automation_run_steps", "automation_runs", "automations"):
        op.drop_table(table)
