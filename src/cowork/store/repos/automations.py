"""Automations, their runs and the runs' steps (`automations`, `automation_runs`, `automation_run_steps`).

JSON columns are written and read as JSON text here, so callers deal in plain values.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._schema import automation_run_steps as steps_t
from .._schema import automation_runs as runs_t
from .._schema import automations as t

__all__ = [
    "AutomationRow",
    "RunRow",
    "RunStepRow",
    "delete",
    "due",
    "get",
    "get_by_name",
    "get_run",
    "get_step",
    "insert",
    "insert_run",
    "last_runs",
    "list_all",
    "put_step",
    "runs",
    "runs_with_status",
    "set_enabled",
    "set_next_fire",
    "set_session",
    "steps_of",
    "update",
    "update_run",
]


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


@dataclass(frozen=True, slots=True)
class AutomationRow:
    id: str
    name: str
    definition: dict[str, Any]
    enabled: bool
    version: int
    created_at: datetime
    updated_at: datetime
    next_fire_at: datetime | None
    session_id: str | None


@dataclass(frozen=True, slots=True)
class RunRow:
    id: str
    automation_id: str
    automation_name: str
    version: int
    definition: dict[str, Any]
    status: str
    trigger: dict[str, Any]
    inputs: dict[str, Any]
    fire_key: str | None
    started_at: datetime
    finished_at: datetime | None
    outputs: dict[str, Any]
    resume_at: int | None
    result: Any
    error: dict[str, str] | None
    pending: dict[str, Any] | None
    approved_step: str | None
    session_id: str | None


@dataclass(frozen=True, slots=True)
class RunStepRow:
    run_id: str
    step_id: str
    position: int
    type: str
    status: str
    input: Any = None
    output: Any = None
    error: dict[str, str] | None = None
    note: str | None = None
    started_at: datetime | None = None
    duration_ms: float | None = None


def _automation(r: Any) -> AutomationRow:
    return AutomationRow(
        r.id,
        r.name,
        json.loads(r.definition),
        bool(r.enabled),
        r.version,
        r.created_at,
        r.updated_at,
        r.next_fire_at,
        r.session_id,
    )


def _run(r: Any) -> RunRow:
    return RunRow(
        r.id,
        r.automation_id,
        r.automation_name,
        r.version,
        json.loads(r.definition),
        r.status,
        json.loads(r.trigger),
        json.loads(r.inputs),
        r.fire_key,
        r.started_at,
        r.finished_at,
        json.loads(r.outputs),
        r.resume_at,
        _load(r.result),
        _load(r.error),
        _load(r.pending),
        r.approved_step,
        r.session_id,
    )


def _step(r: Any) -> RunStepRow:
    return RunStepRow(
        r.run_id,
        r.step_id,
        r.position,
        r.type,
        r.status,
        _load(r.input),
        _load(r.output),
        _load(r.error),
        r.note,
        r.started_at,
        r.duration_ms,
    )


# -- automations ------------------------------------------------------------------------------------------------


def insert(conn: Connection, row: AutomationRow) -> None:
    conn.execute(
        t.insert().values(
            id=row.id,
            name=row.name,
            definition=json.dumps(row.definition),
            enabled=row.enabled,
            version=row.version,
            created_at=row.created_at,
            updated_at=row.updated_at,
            next_fire_at=row.next_fire_at,
            session_id=row.session_id,
        )
    )


def update(conn: Connection, row: AutomationRow) -> None:
    conn.execute(
        t.update()
        .where(t.c.id == row.id)
        .values(
            name=row.name,
            definition=json.dumps(row.definition),
            enabled=row.enabled,
            version=row.version,
            updated_at=row.updated_at,
            next_fire_at=row.next_fire_at,
        )
    )


def get(conn: Connection, automation_id: str) -> AutomationRow | None:
    r = conn.execute(sa.select(t).where(t.c.id == automation_id)).first()
    return _automation(r) if r is not None else None


def get_by_name(conn: Connection, name: str) -> AutomationRow | None:
    r = conn.execute(sa.select(t).where(t.c.name == name)).first()
    return _automation(r) if r is not None else None


def list_all(conn: Connection) -> list[AutomationRow]:
    return [_automation(r) for r in conn.execute(sa.select(t).order_by(t.c.name))]


def delete(conn: Connection, automation_id: str) -> bool:
    run_ids = sa.select(runs_t.c.id).where(runs_t.c.automation_id == automation_id)
    conn.execute(steps_t.delete().where(steps_t.c.run_id.in_(run_ids)))
    conn.execute(runs_t.delete().where(runs_t.c.automation_id == automation_id))
    return bool(conn.execute(t.delete().where(t.c.id == automation_id)).rowcount)


def set_enabled(
    conn: Connection, automation_id: str, enabled: bool, next_fire_at: datetime | None, now: datetime
) -> None:
    conn.execute(
        t.update().where(t.c.id == automation_id).values(enabled=enabled, next_fire_at=next_fire_at, updated_at=now)
    )


def set_next_fire(conn: Connection, automation_id: str, next_fire_at: datetime | None) -> None:
    conn.execute(t.update().where(t.c.id == automation_id).values(next_fire_at=next_fire_at))


def set_session(conn: Connection, automation_id: str, session_id: str) -> None:
    conn.execute(t.update().where(t.c.id == automation_id).values(session_id=session_id))


def due(conn: Connection, now: datetime) -> list[AutomationRow]:
    """Enabled automations whose next fire time has come."""
    stmt = sa.select(t).where(t.c.enabled == sa.true(), t.c.next_fire_at.is_not(None), t.c.next_fire_at <= now)
    return [_automation(r) for r in conn.execute(stmt)]


# -- runs -------------------------------------------------------------------------------------------------------


def insert_run(conn: Connection, row: RunRow) -> bool:
    """Record a new run; False (and nothing written) when its automation already has a run for this `fire_key`."""
    if row.fire_key is not None:
        taken = conn.execute(
            sa.select(runs_t.c.id).where(runs_t.c.automation_id == row.automation_id, runs_t.c.fire_key == row.fire_key)
        ).first()
        if taken is not None:
            return False
    try:
        with conn.begin_nested():  # replicas firing the same schedule at once: the unique key lets one through
            _insert_run(conn, row)
    except sa.exc.IntegrityError:
        if row.fire_key is None:
            raise
        return False
    return True


def _insert_run(conn: Connection, row: RunRow) -> None:
    conn.execute(
        runs_t.insert().values(
            id=row.id,
            automation_id=row.automation_id,
            automation_name=row.automation_name,
            version=row.version,
            definition=json.dumps(row.definition),
            status=row.status,
            trigger=json.dumps(row.trigger),
            inputs=json.dumps(row.inputs),
            fire_key=row.fire_key,
            started_at=row.started_at,
            finished_at=row.finished_at,
            outputs=json.dumps(row.outputs),
            resume_at=row.resume_at,
            result=_dump(row.result),
            error=_dump(row.error),
            pending=_dump(row.pending),
            approved_step=row.approved_step,
            session_id=row.session_id,
        )
    )


def update_run(conn: Connection, run_id: str, **values: Any) -> None:
    """Change some of a run's columns (JSON ones given as values)."""
    for name in ("outputs", "result", "error", "pending"):
        if name in values:
            values[name] = _dump(values[name])
    conn.execute(runs_t.update().where(runs_t.c.id == run_id).values(**values))


def get_run(conn: Connection, run_id: str) -> RunRow | None:
    r = conn.execute(sa.select(runs_t).where(runs_t.c.id == run_id)).first()
    return _run(r) if r is not None else None


def runs(conn: Connection, *, automation_id: str | None = None, limit: int = 50) -> list[RunRow]:
    stmt = sa.select(runs_t).order_by(runs_t.c.started_at.desc(), runs_t.c.id.desc()).limit(limit)
    if automation_id is not None:
        stmt = stmt.where(runs_t.c.automation_id == automation_id)
    return [_run(r) for r in conn.execute(stmt)]


def runs_with_status(conn: Connection, statuses: Sequence[str]) -> list[RunRow]:
    stmt = sa.select(runs_t).where(runs_t.c.status.in_(list(statuses))).order_by(runs_t.c.started_at)
    return [_run(r) for r in conn.execute(stmt)]


def last_runs(conn: Connection) -> dict[str, RunRow]:
    """Each automation's newest run."""
    newest = (
        sa.select(runs_t.c.automation_id, sa.func.max(runs_t.c.started_at).label("at"))
        .group_by(runs_t.c.automation_id)
        .subquery()
    )
    stmt = sa.select(runs_t).join(
        newest, sa.and_(runs_t.c.automation_id == newest.c.automation_id, runs_t.c.started_at == newest.c.at)
    )
    return {row.automation_id: row for row in map(_run, conn.execute(stmt))}


# -- steps ------------------------------------------------------------------------------------------------------


def put_step(conn: Connection, row: RunStepRow) -> None:
    """Record a step's state (a step re-run after an approval or a resume replaces its earlier record)."""
    conn.execute(steps_t.delete().where(steps_t.c.run_id == row.run_id, steps_t.c.step_id == row.step_id))
    conn.execute(
        steps_t.insert().values(
            run_id=row.run_id,
            step_id=row.step_id,
            position=row.position,
            type=row.type,
            status=row.status,
            input=_dump(row.input),
            output=_dump(row.output),
            error=_dump(row.error),
            note=row.note,
            started_at=row.started_at,
            duration_ms=row.duration_ms,
        )
    )


def get_step(conn: Connection, run_id: str, step_id: str) -> RunStepRow | None:
    r = conn.execute(sa.select(steps_t).where(steps_t.c.run_id == run_id, steps_t.c.step_id == step_id)).first()
    return _step(r) if r is not None else None


def steps_of(conn: Connection, run_ids: Sequence[str]) -> dict[str, list[RunStepRow]]:
    if not run_ids:
        return {}
    stmt = sa.select(steps_t).where(steps_t.c.run_id.in_(list(run_ids))).order_by(steps_t.c.position)
    found: dict[str, list[RunStepRow]] = {run_id: [] for run_id in run_ids}
    for r in conn.execute(stmt):
        found[r.run_id].append(_step(r))
    return found
