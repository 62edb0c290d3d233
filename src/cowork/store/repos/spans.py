"""Spans: the stored traces (see `cowork.observability`): written in batches, listed per trace, pruned by age and
count."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._rows import SpanRow, TraceRow
from .._schema import spans as t

__all__ = ["count", "forget_session", "get_trace", "insert_many", "list_traces", "prune", "trace_of_operation"]


_FIELDS = tuple(f.name for f in fields(SpanRow))


def insert_many(conn: Connection, rows: Sequence[SpanRow]) -> None:
    """Store finished spans; a span stored already (an exporter retrying a batch) is left as it is."""
    if not rows:
        return
    stmt = t.insert().prefix_with("OR IGNORE") if conn.dialect.name == "sqlite" else t.insert()
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        stmt = pg_insert(t).on_conflict_do_nothing()
    conn.execute(stmt, [{name: getattr(row, name) for name in _FIELDS} for row in rows])  # (asdict deep-copies)


def _row(r: sa.Row[tuple[object, ...]]) -> SpanRow:
    return SpanRow(**{c.name: getattr(r, c.name) for c in t.columns})


def get_trace(conn: Connection, trace_id: str, *, limit: int = 5000) -> list[SpanRow]:
    """A trace's spans in start order (at most `limit`)."""
    stmt = sa.select(t).where(t.c.trace_id == trace_id).order_by(t.c.start_us, t.c.span_id).limit(limit)
    return [_row(r) for r in conn.execute(stmt)]


def trace_of_operation(conn: Connection, operation_id: str) -> str | None:
    """The trace an operation's spans belong to (None: none stored)."""
    stmt = sa.select(t.c.trace_id).where(t.c.operation_id == operation_id).limit(1)
    return conn.execute(stmt).scalar()


def list_traces(
    conn: Connection,
    *,
    session_id: str | None = None,
    since_us: int | None = None,
    until_us: int | None = None,
    min_duration_us: int | None = None,
    failed: bool | None = None,
    min_cost_usd: float | None = None,
    limit: int = 50,
) -> list[TraceRow]:
    """Traces, newest first, summed over their spans; filters on the trace as a whole."""
    start, end = sa.func.min(t.c.start_us), sa.func.max(t.c.end_us)
    any_error = sa.func.max(sa.case((t.c.status == "error", 1), else_=0))
    cost = sa.func.coalesce(sa.func.sum(t.c.cost_usd), 0.0)
    stmt = sa.select(
        t.c.trace_id,
        start.label("start_us"),
        end.label("end_us"),
        sa.func.count().label("span_count"),
        any_error.label("failed"),
        cost.label("cost_usd"),
        sa.func.coalesce(sa.func.sum(t.c.input_tokens), 0).label("input_tokens"),
        sa.func.coalesce(sa.func.sum(t.c.output_tokens), 0).label("output_tokens"),
        sa.func.max(t.c.session_id).label("session_id"),
    ).group_by(t.c.trace_id)
    if session_id is not None:
        stmt = stmt.where(t.c.trace_id.in_(sa.select(t.c.trace_id).where(t.c.session_id == session_id)))
    if since_us is not None:
        stmt = stmt.having(start >= since_us)
    if until_us is not None:
        stmt = stmt.having(start < until_us)
    if min_duration_us is not None:
        stmt = stmt.having(end - start >= min_duration_us)
    if failed is not None:
        stmt = stmt.having(any_error == (1 if failed else 0))
    if min_cost_usd is not None:
        stmt = stmt.having(cost >= min_cost_usd)
    rows = conn.execute(stmt.order_by(start.desc()).limit(limit)).all()
    roots: dict[str, tuple[str, str | None]] = {}
    ids = [r.trace_id for r in rows]
    if ids:
        root_stmt = (
            sa.select(t.c.trace_id, t.c.name, t.c.operation_id, t.c.start_us)
            .where(t.c.trace_id.in_(ids), t.c.parent_span_id.is_(None))
            .order_by(t.c.start_us)
        )
        for r in conn.execute(root_stmt):
            roots.setdefault(r.trace_id, (r.name, r.operation_id))
    return [
        TraceRow(
            trace_id=r.trace_id,
            start_us=int(r.start_us),
            end_us=int(r.end_us),
            span_count=int(r.span_count),
            failed=bool(r.failed),
            cost_usd=float(r.cost_usd),
            input_tokens=int(r.input_tokens),
            output_tokens=int(r.output_tokens),
            session_id=r.session_id,
            operation_id=roots.get(r.trace_id, (None, None))[1],
            name=roots.get(r.trace_id, (None, None))[0],
        )
        for r in rows
    ]


def count(conn: Connection) -> int:
    return int(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one())


def prune(conn: Connection, *, older_than_us: int, keep: int) -> int:
    """Delete spans that started before `older_than_us`, then the oldest past the newest `keep`; how many went."""
    gone = conn.execute(t.delete().where(t.c.start_us < older_than_us)).rowcount
    cutoff = conn.execute(sa.select(t.c.start_us).order_by(t.c.start_us.desc()).offset(keep).limit(1)).scalar()
    if cutoff is not None:
        gone += conn.execute(t.delete().where(t.c.start_us <= cutoff)).rowcount
    return int(gone)


def forget_session(conn: Connection, session_id: str) -> None:
    """Delete the traces a session's spans belong to (with the spans of theirs that name no session: MCP calls)."""
    traces = sa.select(t.c.trace_id).where(t.c.session_id == session_id).distinct()
    conn.execute(t.delete().where(t.c.trace_id.in_(traces)))
