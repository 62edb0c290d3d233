"""Spans: the trace of every turn (OpenTelemetry spans our exporter stores; see `cowork.observability`).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "spans",
        sa.Column("trace_id", sa.String(32), primary_key=True),
        sa.Column("span_id", sa.String(16), primary_key=True),
        sa.Column("parent_span_id", sa.String(16)),
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("start_us", sa.BigInteger, nullable=False),
        sa.Column("end_us", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("status_message", sa.Text),
        sa.Column("session_id", sa.String(64)),
        sa.Column("operation_id", sa.String(64)),
        sa.Column("cost_usd", sa.Float),
        sa.Column("input_tokens", sa.Integer),
        sa.Column("output_tokens", sa.Integer),
        sa.Column("attributes", sa.Text, nullable=False),
        sa.Column("events", sa.Text),
        sa.Index("ix_spans_start", "start_us"),
        sa.Index("ix_spans_session", "session_id", "start_us"),
        sa.Index("ix_spans_operation", "operation_id"),
    )


def downgrade() -> None:
    op.drop_table("spans")
