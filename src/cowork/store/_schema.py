"""Table definitions the repositories query. Migrations create and change them; a test keeps the two in step.

Long because it is every table in one place, each with the docstring that says what its rows are.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

__all__ = [
    "UTCDateTime",
    "activity_spans",
    "automation_run_steps",
    "automation_runs",
    "automations",
    "checkpoint_files",
    "checkpoints",
    "context_summaries",
    "events",
    "human_requests",
    "ingest_jobs",
    "mcp_installs",
    "mcp_servers",
    "messages",
    "metadata",
    "notification_responses",
    "notifications",
    "operation_inputs",
    "operations",
    "rag_chunks",
    "rag_citations",
    "rag_pins",
    "rag_sources",
    "rag_staged",
    "session_files",
    "sessions",
    "settings",
    "spans",
    "tool_calls",
    "tool_policies",
    "usage_records",
]


class UTCDateTime(sa.TypeDecorator[datetime]):
    """Timezone-aware UTC timestamps on every engine (SQLite stores naive text; we re-attach UTC on read)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; use datetime.now(UTC)")
        return value.astimezone(UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


metadata = sa.MetaData()

sessions = sa.Table(
    "sessions",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("workspace", sa.Text, nullable=False),
    sa.Column("provider", sa.String(100)),
    sa.Column("model", sa.String(200)),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
    sa.Column("last_seq", sa.Integer, nullable=False, server_default="0"),
    sa.Column("todos", sa.Text, nullable=False, server_default="[]"),
    sa.Column("network", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("yolo", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("reasoning_effort", sa.String(16)),
    sa.Column("allowances", sa.Text, nullable=False, server_default="[]"),
    sa.Column("plan_mode", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Index("ix_sessions_updated_at", "updated_at"),
)

tool_policies = sa.Table(
    "tool_policies",
    metadata,
    sa.Column("tool", sa.String(300), primary_key=True),
    sa.Column("policy", sa.String(16), nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
)

events = sa.Table(
    "events",
    metadata,
    sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("type", sa.String(64), nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
)

operations = sa.Table(
    "operations",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    sa.Column("client_message_id", sa.String(200)),
    sa.Column("origin", sa.String(32), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("provider", sa.String(100)),
    sa.Column("model", sa.String(200)),
    sa.Column("step_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("error_code", sa.String(64)),
    sa.Column("error_message", sa.Text),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
    sa.Column("thread_id", sa.String(64), nullable=False),
    sa.Column("parent_operation_id", sa.String(64)),
    sa.Column("agent_type", sa.String(16)),
    sa.Column("input_tokens", sa.Integer, nullable=False, server_default="0"),
    sa.Column("output_tokens", sa.Integer, nullable=False, server_default="0"),
    sa.Column("cached_tokens", sa.Integer, nullable=False, server_default="0"),
    sa.Column("reasoning_tokens", sa.Integer, nullable=False, server_default="0"),
    sa.Column("cost_usd", sa.Float, nullable=False, server_default="0"),
    sa.Column("summary", sa.Text),
    sa.Column("ask_id", sa.String(64)),
    sa.Column("tier", sa.String(40)),
    sa.UniqueConstraint("session_id", "client_message_id", name="uq_operations_client_message"),
    sa.Index("ix_operations_status", "status"),
    sa.Index("ix_operations_session", "session_id", "created_at"),
    sa.Index("ix_operations_parent", "parent_operation_id"),
)

messages = sa.Table(
    "messages",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    sa.Column("operation_id", sa.String(64), sa.ForeignKey("operations.id", ondelete="CASCADE"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("text", sa.Text, nullable=False, server_default=""),
    sa.Column("model_message", sa.Text, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("thread_id", sa.String(64), nullable=False),
    sa.Column("superseded", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("excluded", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.UniqueConstraint("thread_id", "position", name="uq_messages_thread_position"),
    sa.Index("ix_messages_session", "session_id"),
)

tool_calls = sa.Table(
    "tool_calls",
    metadata,
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
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
)

human_requests = sa.Table(
    "human_requests",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    sa.Column("operation_id", sa.String(64), sa.ForeignKey("operations.id", ondelete="CASCADE"), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("tool_call_id", sa.String(200)),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("response", sa.Text),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("resolved_at", UTCDateTime),
    sa.Index("ix_human_requests_session", "session_id", "status"),
    sa.Index("ix_human_requests_operation", "operation_id", "status"),
)

operation_inputs = sa.Table(
    "operation_inputs",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("operation_id", sa.String(64), sa.ForeignKey("operations.id", ondelete="CASCADE"), nullable=False),
    sa.Column("session_id", sa.String(64), nullable=False),
    sa.Column("client_message_id", sa.String(200), nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.UniqueConstraint("session_id", "client_message_id", name="uq_operation_inputs_client_message"),
    sa.Index("ix_operation_inputs_operation", "operation_id", "status"),
)

context_summaries = sa.Table(
    "context_summaries",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("thread_id", sa.String(64), nullable=False),
    sa.Column("operation_id", sa.String(64), nullable=False),
    sa.Column("up_to_position", sa.Integer, nullable=False),
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Index("ix_context_summaries_thread", "thread_id", "up_to_position"),
)

usage_records = sa.Table(
    "usage_records",
    metadata,
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
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Index("ix_usage_records_created_at", "created_at"),
    sa.Index("ix_usage_records_session", "session_id"),
    sa.Index("ix_usage_records_root", "root_operation_id"),
)

settings = sa.Table(
    "settings",
    metadata,
    sa.Column("key", sa.String(200), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
)

mcp_servers = sa.Table(
    "mcp_servers",
    metadata,
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
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
)

mcp_installs = sa.Table(
    "mcp_installs",
    metadata,
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
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
    sa.Index("ix_mcp_installs_name", "name"),
)


session_files = sa.Table(
    "session_files",
    metadata,
    sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("path", sa.Text, primary_key=True),
    sa.Column("baseline", sa.Text),
    sa.Column("created_at", UTCDateTime, nullable=False),
)
"""Each file a session changed with `edit` or `write`, and its text before the first change (NULL: it did not
exist), so `session/diff` can show what the session changed."""


checkpoints = sa.Table(
    "checkpoints",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    sa.Column("workspace", sa.Text, nullable=False),
    sa.Column("operation_id", sa.String(64), nullable=False),
    sa.Column("tool_call_id", sa.String(128), nullable=False),
    sa.Column("tool", sa.String(200), nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("undone_at", UTCDateTime),
    sa.Index("ix_checkpoints_session", "session_id", "id"),
    sa.Index("ix_checkpoints_created", "created_at"),
)
"""One per tool call that changed a session's folder (see `cowork.sessions.Checkpoints`)."""

checkpoint_files = sa.Table(
    "checkpoint_files",
    metadata,
    sa.Column("checkpoint_id", sa.Integer, sa.ForeignKey("checkpoints.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("path", sa.Text, primary_key=True),
    sa.Column("before_blob", sa.String(40)),
    sa.Column("before_mode", sa.Integer, nullable=False),
    sa.Column("after_blob", sa.String(40)),
    sa.Column("after_mode", sa.Integer, nullable=False),
    sa.Column("size", sa.Integer, nullable=False, server_default="0"),
)
"""What a checkpoint's call changed, path by path (relative to the folder): git object id and mode before and
after (mode 0: absent; no id with a mode: not kept). `size`: the bytes kept for it."""


spans = sa.Table(
    "spans",
    metadata,
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
"""Finished spans (`cowork.observability`): ids as lowercase hex, times in microseconds since the epoch, status
`ok | error | unset`; the session, operation, cost and tokens copied out of the attributes so traces can be listed
and filtered without reading them. No foreign key: a span may outlive (or precede) the rows it names."""


rag_sources = sa.Table(
    "rag_sources",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("scope", sa.Text, nullable=False),
    sa.Column("uri", sa.Text, nullable=False),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("content_hash", sa.String(64), nullable=False),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("mtime_ns", sa.BigInteger, nullable=False),
    sa.Column("chunk_count", sa.Integer, nullable=False),
    sa.Column("embedder", sa.String(200), nullable=False),
    sa.Column("error", sa.Text),
    sa.Column("indexed_at", UTCDateTime, nullable=False),
    sa.UniqueConstraint("kind", "scope", "uri", name="uq_rag_sources_uri"),
)
"""What the retrieval index holds (`cowork.retrieval`): one row per indexed file or page, per kind (`documents`,
`conversations`, `activity`, `observations`) and scope (a workspace's absolute path, or `user`). `content_hash` is
the sha256 of the file's bytes: an unchanged file is never converted or embedded again."""

rag_chunks = sa.Table(
    "rag_chunks",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("source_id", sa.Integer, sa.ForeignKey("rag_sources.id", ondelete="CASCADE"), nullable=False),
    sa.Column("ordinal", sa.Integer, nullable=False),
    sa.Column("heading", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("vector", sa.LargeBinary),
    sa.Index("ix_rag_chunks_source", "source_id", "ordinal"),
)
"""A source's chunks in order: the heading path they sit under, their text, and their embedding (float32 bytes,
unit length, made by the source's `embedder`). Their text is also in the full-text table `rag_fts` (FTS5 on SQLite,
rowid = id; tsvectors on PostgreSQL, id = id), which migrations own."""

rag_staged = sa.Table(
    "rag_staged",
    metadata,
    sa.Column("embedder", sa.String(200), primary_key=True),
    sa.Column("text_hash", sa.String(40), primary_key=True),
    sa.Column("vector", sa.LargeBinary, nullable=False),
)
"""Vectors of a file still being indexed, committed batch by batch (keyed by the embedded text's sha1): a job
stopped inside a large file reuses them instead of embedding those chunks again. Cleared when the file's chunks
are stored."""

ingest_jobs = sa.Table(
    "ingest_jobs",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("scope", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("spec", sa.Text, nullable=False),
    sa.Column("total", sa.Integer, nullable=False),
    sa.Column("done", sa.Integer, nullable=False),
    sa.Column("failed", sa.Integer, nullable=False),
    sa.Column("chunks", sa.Integer, nullable=False),
    sa.Column("error", sa.Text),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
    sa.Index("ix_ingest_jobs_status", "status"),
)
"""Ingestion jobs (`pending → processing → done | paused | failed | cancelled`): `spec` (JSON) names what to index;
`done` counts the files finished, each committed with its chunks, so a restart resumes after the last one."""


rag_citations = sa.Table(
    "rag_citations",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    sa.Column("operation_id", sa.String(64), nullable=False),
    sa.Column("chunk_id", sa.Integer, nullable=False),
    sa.Column("score", sa.Float),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Index("ix_rag_citations_session", "session_id", "id"),
)
"""The passages an answer was given (context assembly or `searchDocuments`), by operation: backfill re-offers the
most recent ones when a follow-up's own search finds too little. No foreign key to `rag_chunks`: a re-indexed file
gets new chunk ids, and a citation of a chunk that is gone is simply skipped."""


rag_pins = sa.Table(
    "rag_pins",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("scope", sa.Text, nullable=False),
    sa.Column("uri", sa.Text, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.UniqueConstraint("scope", "uri", name="uq_rag_pins"),
)
"""Files of a folder (`scope`, its absolute path; `uri`, the file relative to it) pinned by the user: their passages
go first into every turn's context in that folder. By path, not chunk id, so a pin outlives re-indexing."""


activity_spans = sa.Table(
    "activity_spans",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("app", sa.Text, nullable=False),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("process", sa.Text),
    sa.Column("started_at", UTCDateTime, nullable=False),
    sa.Column("ended_at", UTCDateTime, nullable=False),
    sa.Index("ix_activity_spans_started", "started_at"),
    sa.Index("ix_activity_spans_ended", "ended_at"),
)
"""Captured activity (`cowork.capture`): one row per stretch of time in one window (same application and title),
written while it lasts (its `ended_at` moves on) so a crash loses at most one flush interval. Nothing of an excluded
application or title is ever written."""

automations = sa.Table(
    "automations",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("name", sa.String(100), nullable=False, unique=True),
    sa.Column("definition", sa.Text, nullable=False),
    sa.Column("enabled", sa.Boolean, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
    sa.Column("next_fire_at", UTCDateTime),
    sa.Column("session_id", sa.String(32)),
)
"""Saved flows (`cowork.automations.Flow` as JSON in `definition`); `next_fire_at` is a cron flow's next fire time,
moved forward in the same transaction that records the runs it fires (so a restart never fires one twice)."""

automation_runs = sa.Table(
    "automation_runs",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("automation_id", sa.String(32), nullable=False),
    sa.Column("automation_name", sa.String(100), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("definition", sa.Text, nullable=False),
    sa.Column("status", sa.String(24), nullable=False),
    sa.Column("trigger", sa.Text, nullable=False),
    sa.Column("inputs", sa.Text, nullable=False),
    sa.Column("fire_key", sa.String(200)),
    sa.Column("started_at", UTCDateTime, nullable=False),
    sa.Column("finished_at", UTCDateTime),
    sa.Column("outputs", sa.Text, nullable=False),
    sa.Column("resume_at", sa.Integer),
    sa.Column("result", sa.Text),
    sa.Column("error", sa.Text),
    sa.Column("pending", sa.Text),
    sa.Column("approved_step", sa.String(64)),
    sa.Column("session_id", sa.String(32)),
    sa.UniqueConstraint("automation_id", "fire_key", name="uq_automation_runs_fire"),
    sa.Index("ix_automation_runs_automation", "automation_id", "started_at"),
    sa.Index("ix_automation_runs_status", "status"),
)
"""One run of a flow: the definition it ran (a snapshot, so an edit never changes a run in progress), its state
(`outputs` so far and `resume_at`, the next step), and what it waits for. `fire_key` (a cron time, a file event) is
unique per automation: a trigger that fires twice for the same moment records one run."""

automation_run_steps = sa.Table(
    "automation_run_steps",
    metadata,
    sa.Column("run_id", sa.String(32), primary_key=True),
    sa.Column("step_id", sa.String(64), primary_key=True),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("type", sa.String(24), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("input", sa.Text),
    sa.Column("output", sa.Text),
    sa.Column("error", sa.Text),
    sa.Column("note", sa.Text),
    sa.Column("started_at", UTCDateTime),
    sa.Column("duration_ms", sa.Float),
)
"""Each step of a run: recorded as started before its effect and as finished (with its output) after it, so a crash
between the two is seen as an interrupted step, never re-run by itself."""

notifications = sa.Table(
    "notifications",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("kind", sa.String(200), nullable=False),
    sa.Column("tier", sa.String(16), nullable=False),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("delivered_at", UTCDateTime, nullable=False),
    sa.Column("count", sa.Integer, nullable=False),
    sa.Column("run_id", sa.String(32)),
    sa.Column("automation_id", sa.String(32)),
    sa.Column("response", sa.String(16)),
    sa.Column("responded_at", UTCDateTime),
    sa.Column("desktop", sa.Boolean, nullable=False),
    sa.Index("ix_notifications_delivered", "delivered_at"),
)
"""Notifications the proactive engine delivered, and how the user answered each."""

notification_responses = sa.Table(
    "notification_responses",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("kind", sa.String(200), nullable=False),
    sa.Column("response", sa.String(16), nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Index("ix_notification_responses_kind", "kind", "at"),
)
"""The dismissal history the notification gates learn from (`cowork.notify.DismissalHistory`): it outlives restarts."""

operation_leases = sa.Table(
    "operation_leases",
    metadata,
    sa.Column("operation_id", sa.String(64), primary_key=True),
    sa.Column("owner", sa.String(64), nullable=False),
    sa.Column("expires_at", UTCDateTime, nullable=False),
)
"""Which replica runs an operation, until when (see `cowork.runtime.Leases`): renewed while it runs, deleted when it
stops; one whose time passed belongs to a replica that died, and another takes the operation over."""
