"""The usage ledger: one row per model call, for spend per session, per request, per day, and budgets."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._rows import UsageRow
from .._schema import usage_records as t
from ._util import to_values

__all__ = [
    "Totals",
    "by_day",
    "by_model",
    "by_operation",
    "costliest_request_since",
    "insert",
    "insert_returning_id",
    "request_spend",
    "spend_since",
    "totals",
]

_INSERT = t.insert()


@dataclass(frozen=True, slots=True)
class Totals:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    unknown_cost_calls: int = 0
    """Calls whose model has no known price (counted at 0)."""


def insert(conn: Connection, row: UsageRow) -> None:
    conn.execute(_INSERT, to_values(row))


_SUMS = (
    sa.func.count(),
    sa.func.coalesce(sa.func.sum(t.c.input_tokens), 0),
    sa.func.coalesce(sa.func.sum(t.c.output_tokens), 0),
    sa.func.coalesce(sa.func.sum(t.c.cached_tokens), 0),
    sa.func.coalesce(sa.func.sum(t.c.reasoning_tokens), 0),
    sa.func.coalesce(sa.func.sum(t.c.cost_usd), 0.0),
    sa.func.coalesce(sa.func.sum(sa.case((t.c.cost_known, 0), else_=1)), 0),
)


def _totals(values: tuple[Any, ...]) -> Totals:
    calls, inp, out, cached, reasoning, cost, unknown = values
    return Totals(int(calls), int(inp), int(out), int(cached), int(reasoning), float(cost), int(unknown))


def totals(
    conn: Connection,
    *,
    session_id: str | None = None,
    root_operation_ids: list[str] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> Totals:
    stmt = sa.select(*_SUMS)
    if session_id is not None:
        stmt = stmt.where(t.c.session_id == session_id)
    if root_operation_ids is not None:
        stmt = stmt.where(t.c.root_operation_id.in_(root_operation_ids))
    if since is not None:
        stmt = stmt.where(t.c.created_at >= since)
    if until is not None:
        stmt = stmt.where(t.c.created_at < until)
    row = conn.execute(stmt).one()
    return _totals(tuple(row))


def spend_since(conn: Connection, starts: dict[str, datetime], *, root_operation_id: str | None) -> dict[str, float]:
    """Spend since each of several instants (keyed by name) and, under `"interaction"`, of one request. One query.

    Under `"last_id"`, the highest row id there is (the rows the sums cover are all at or below it; read in the same
    statement, so from the same snapshot)."""
    earliest = min(starts.values())
    columns = [
        sa.func.coalesce(sa.func.sum(sa.case((t.c.created_at >= start, t.c.cost_usd), else_=0.0)), 0.0).label(name)
        for name, start in starts.items()
    ]
    condition = t.c.created_at >= earliest
    if root_operation_id is not None:
        columns.append(
            sa.func.coalesce(
                sa.func.sum(sa.case((t.c.root_operation_id == root_operation_id, t.c.cost_usd), else_=0.0)), 0.0
            ).label("interaction")
        )
        condition = sa.or_(condition, t.c.root_operation_id == root_operation_id)
    last_id = sa.select(sa.func.coalesce(sa.func.max(t.c.id), 0)).scalar_subquery().label("last_id")
    row = conn.execute(sa.select(*columns, last_id).where(condition)).one()
    return {key: float(value) for key, value in row._mapping.items()}


def request_spend(conn: Connection, root_operation_id: str, *, up_to_id: int) -> float:
    """Spend of one request (its calls and its sub-agents') over the rows with ids up to `up_to_id`."""
    stmt = sa.select(sa.func.coalesce(sa.func.sum(t.c.cost_usd), 0.0)).where(
        t.c.root_operation_id == root_operation_id, t.c.id <= up_to_id
    )
    return float(conn.execute(stmt).scalar_one())


def insert_returning_id(conn: Connection, row: UsageRow) -> int:
    """`insert`, returning the new row's id."""
    key = conn.execute(_INSERT, to_values(row)).inserted_primary_key
    assert key is not None
    return int(key[0])


def by_model(
    conn: Connection, *, session_id: str | None = None, since: datetime | None = None
) -> list[tuple[str, str, Totals]]:
    stmt = (
        sa.select(t.c.provider, t.c.model, *_SUMS).group_by(t.c.provider, t.c.model).order_by(t.c.provider, t.c.model)
    )
    if session_id is not None:
        stmt = stmt.where(t.c.session_id == session_id)
    if since is not None:
        stmt = stmt.where(t.c.created_at >= since)
    return [(r[0], r[1], _totals(tuple(r[2:]))) for r in conn.execute(stmt)]


def by_operation(conn: Connection, session_id: str) -> list[tuple[str, Totals]]:
    """Per top-level operation (sub-agents' calls counted with the request that spawned them), oldest first."""
    stmt = (
        sa.select(t.c.root_operation_id, *_SUMS)
        .where(t.c.session_id == session_id)
        .group_by(t.c.root_operation_id)
        .order_by(sa.func.min(t.c.id))
    )
    return [(r[0], _totals(tuple(r[1:]))) for r in conn.execute(stmt)]


def by_day(conn: Connection, *, since: datetime, until: datetime) -> list[tuple[datetime, float, int, int]]:
    """Each call's time, cost and tokens in a range; the caller buckets them by its local calendar day."""
    stmt = (
        sa.select(t.c.created_at, t.c.cost_usd, t.c.input_tokens, t.c.output_tokens)
        .where(t.c.created_at >= since, t.c.created_at < until)
        .order_by(t.c.created_at)
    )
    return [(r[0], float(r[1]), int(r[2]), int(r[3])) for r in conn.execute(stmt)]


def costliest_request_since(conn: Connection, since: datetime) -> float:
    """The most any one request (a turn with its sub-agents) cost since an instant."""
    per_request = (
        sa.select(sa.func.sum(t.c.cost_usd).label("cost"))
        .where(t.c.created_at >= since)
        .group_by(t.c.root_operation_id)
        .subquery()
    )
    value = conn.execute(sa.select(sa.func.max(per_request.c.cost))).scalar()
    return float(value or 0.0)
