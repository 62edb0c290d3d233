"""Operations that survive the process: tool-call ledger, human requests, steering inputs, context summaries,
sub-agent threads, usage and cost, session todos.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("todos", sa.Text, nullable=False, server_default="[]"))

    with op.batch_alter_table("operations") as batch:
        batch.add_column(sa.Column("thread_id", sa.String(64), nullable=True))
        batch.add_column(sa.Column("parent_operation_id", sa.String(64)))
        batch.add_column(sa.Column("agent_type", sa.String(16)))
        for column in ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens"):
            batch.add_column(sa.Column(column, sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("cost_usd", sa.Float, nullable=False, server_default="0"))
        batch.add_column(sa.Column("summary", sa.Text))
    # Every operation so far was a chat turn: it belongs to its session's main thread.
    op.execute("UPDATE operations SET thread_id = session_id")
    with op.batch_alter_table("operations") as batch:
        batch.alter_column("thread_id", existing_type=sa.String(64), nullable=False)
        batch.create_index("ix_operations_parent", ["parent_operation_id"])

    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("thread_id", sa.String(64), nullable=True))
    op.execute("UPDATE messages SET thread_id = session_id")
    with op.batch_alter_table("messages") as batch:
        batch.alter_column("thread_id", existing_type=sa.String(64), nullable=False)
        batch.drop_constraint("uq_messages_position", type_="unique")
        batch.create_unique_constraint("uq_messages_thread_position", ["thread_id", "position"])
        batch.create_index("ix_messages_session", ["session_id"])

    op.create_table(
        "tool_calls",
        sa.Column("operation_id", sa.String(64), sa.ForeignKey("operations.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("tool_call_id", sa.String(200), primary_key=True),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("arguments", sa.Text, nullable=False),
        sa.Column("side_effects", sa.Boolean, nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("result", sa.Text),
        sa.Column("is_error", sa.Boolean),
        sa.Column("meta", sa.Text),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
    )
    op.create_table(
        "human_requests",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("operation_id", sa.String(64), sa.ForeignKey("operations.id", ondelete="CASCADE"), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("tool_call_id", sa.String(200)),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("response", sa.Text),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("resolved_at", _TS),
    )
    op.create_index("ix_human_requests_session", "human_requests", ["session_id", "status"])
    op.create_index("ix_human_requests_operation", "human_requests", ["operation_id", "status"])
    op.create_table(
        "operation_inputs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("operation_id", sa.String(64), sa.ForeignKey("operations.id", ondelete="CASCADE"), nullable=False),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("client_message_id", sa.String(200), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.UniqueConstraint("session_id", "client_message_id", name="uq_operation_inputs_client_message"),
    )
    op.create_index("ix_operation_inputs_operation", "operation_inputs", ["operation_id", "status"])
    op.create_table(
        "context_summaries",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("thread_id", sa.String(64), nullable=False),
        sa.Column("operation_id", sa.String(64), nullable=False),
        sa.Column("up_to_position", sa.Integer, nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("created_at", _TS, nullable=False),
    )
    op.create_index("ix_context_summaries_thread", "context_summaries", ["thread_id", "up_to_position"])


def downgrade() -> None:
    op.drop_table("context_summaries")
    op.drop_table("operation_inputs")
    op.drop_table("human_requests")
    op.drop_table("tool_calls")
    with op.batch_alter_table("messages") as batch:
        batch.drop_index("ix_messages_session")
        batch.drop_constraint("uq_messages_thread_position", type_="unique")
        batch.create_unique_constraint("uq_messages_position", ["session_id", "position"])
        batch.drop_column("thread_id")
    with op.batch_alter_table("operations") as batch:
        batch.drop_index("ix_operations_parent")
        for column in (
            "summary",
            "cost_usd",
            "reasoning_tokens",
            "cached_tokens",
            "output_tokens",
            "input_tokens",
            "agent_type",
            "parent_operation_id",
            "thread_id",
        ):
            batch.drop_column(column)
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("todos")
