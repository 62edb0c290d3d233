"""`trace/list` and `trace/get`: stored spans as the protocol's traces."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import anyio

from cowork.protocol import (
    ErrorCode,
    ErrorSource,
    ProtocolError,
    SpanEventInfo,
    SpanInfo,
    TraceGetParams,
    TraceGetResult,
    TraceListParams,
    TraceListResult,
    TraceSummary,
)
from cowork.store import Database, SpanRow, repos

from ._tracing import Tracing

__all__ = ["TraceQueries"]

_MAX_SPANS = 5000


def _time(micros: int) -> datetime:
    return datetime.fromtimestamp(micros / 1_000_000, UTC)


def _micros(when: datetime | None) -> int | None:
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1_000_000)


def _span(row: SpanRow, origin_us: int) -> SpanInfo:
    attributes: dict[str, Any] = json.loads(row.attributes)
    events = [
        SpanEventInfo(name=e["name"], time=_time(int(e["time_us"])), attributes=e.get("attributes") or {})
        for e in json.loads(row.events or "[]")
    ]
    return SpanInfo(
        span_id=row.span_id,
        parent_span_id=row.parent_span_id,
        name=row.name,
        kind=row.kind,
        start=_time(row.start_us),
        end=_time(row.end_us),
        duration_ms=(row.end_us - row.start_us) / 1000,
        offset_ms=(row.start_us - origin_us) / 1000,
        status=row.status,
        status_message=row.status_message,
        attributes=attributes,
        events=events,
    )


def _not_found(what: str) -> ProtocolError:
    return ProtocolError(
        ErrorCode.TRACE_NOT_FOUND,
        f"No trace stored for {what}: traces are kept for [tracing] keep_days, and only while tracing is on.",
        source=ErrorSource.SERVER,
    )


class TraceQueries:
    """Reads traces; flushes the spans still waiting to be stored first, so the turn that just ended is there."""

    def __init__(self, db: Database, tracing: Tracing) -> None:
        self._db = db
        self._tracing = tracing

    async def _flush(self) -> None:
        await anyio.to_thread.run_sync(self._tracing.flush)

    async def list(self, params: TraceListParams) -> TraceListResult:
        await self._flush()
        rows = await self._db.read(
            lambda conn: repos.spans.list_traces(
                conn,
                session_id=params.session_id,
                since_us=_micros(params.since),
                until_us=_micros(params.until),
                min_duration_us=int(params.min_duration_ms * 1000) if params.min_duration_ms is not None else None,
                failed=params.failed,
                min_cost_usd=params.min_cost_usd,
                limit=params.limit,
            )
        )
        return TraceListResult(
            traces=[
                TraceSummary(
                    trace_id=r.trace_id,
                    name=r.name,
                    session_id=r.session_id,
                    operation_id=r.operation_id,
                    started_at=_time(r.start_us),
                    duration_ms=(r.end_us - r.start_us) / 1000,
                    span_count=r.span_count,
                    failed=r.failed,
                    cost_usd=round(r.cost_usd, 8),
                    input_tokens=r.input_tokens,
                    output_tokens=r.output_tokens,
                )
                for r in rows
            ]
        )

    async def get(self, params: TraceGetParams) -> TraceGetResult:
        """One trace (a sub-agent's operation gives its turn's trace, which holds it).

        Raises:
            ProtocolError: `trace_not_found`.
        """
        await self._flush()
        trace_id = params.trace_id
        what = f"trace {trace_id}"
        if params.operation_id is not None:
            op_id = params.operation_id
            what = f"operation {op_id}"
            trace_id = await self._db.read(lambda conn: repos.spans.trace_of_operation(conn, op_id))
        elif params.session_id is not None:
            sid = params.session_id
            what = f"session {sid}"
            latest = await self._db.read(lambda conn: repos.spans.list_traces(conn, session_id=sid, limit=1))
            trace_id = latest[0].trace_id if latest else None
        if trace_id is None:
            raise _not_found(what)
        tid = trace_id
        rows = await self._db.read(lambda conn: repos.spans.get_trace(conn, tid, limit=_MAX_SPANS + 1))
        if not rows:
            raise _not_found(what)
        truncated = len(rows) > _MAX_SPANS
        rows = rows[:_MAX_SPANS]
        origin = min(r.start_us for r in rows)
        end = max(r.end_us for r in rows)
        model_calls = [r for r in rows if r.cost_usd is not None or r.input_tokens is not None]
        return TraceGetResult(
            trace_id=tid,
            session_id=next((r.session_id for r in rows if r.session_id), None),
            started_at=_time(origin),
            duration_ms=(end - origin) / 1000,
            cost_usd=round(sum(r.cost_usd or 0.0 for r in model_calls), 8),
            input_tokens=sum(r.input_tokens or 0 for r in model_calls),
            output_tokens=sum(r.output_tokens or 0 for r in model_calls),
            spans=[_span(r, origin) for r in rows],
            truncated=truncated,
        )
