"""Checkpoints: the tool calls that changed a session's folder and what each changed (see `cowork.sessions`)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._rows import CheckpointFileRow, CheckpointRow
from .._schema import checkpoint_files as f
from .._schema import checkpoints as t

__all__ = ["for_session", "insert", "live_blobs", "mark_undone", "prune", "sizes"]


def insert(conn: Connection, row: CheckpointRow) -> int:
    """Store a checkpoint and its files; its id."""
    values = {c.name: getattr(row, c.name) for c in t.columns if c.name != "id"}
    key = conn.execute(t.insert().values(**values)).inserted_primary_key
    assert key is not None
    checkpoint_id = int(key[0])
    if row.files:
        conn.execute(
            f.insert(),
            [
                {
                    "checkpoint_id": checkpoint_id,
                    "path": file.path,
                    "before_blob": file.before_blob,
                    "before_mode": file.before_mode,
                    "after_blob": file.after_blob,
                    "after_mode": file.after_mode,
                    "size": file.size,
                }
                for file in row.files
            ],
        )
    return checkpoint_id


def _with_files(conn: Connection, rows: list[CheckpointRow]) -> list[CheckpointRow]:
    if not rows:
        return rows
    files: dict[int, list[CheckpointFileRow]] = {}
    ids = [r.id for r in rows]
    for start in range(0, len(ids), 500):
        stmt = sa.select(f).where(f.c.checkpoint_id.in_(ids[start : start + 500])).order_by(f.c.path)
        for r in conn.execute(stmt):
            files.setdefault(r.checkpoint_id, []).append(
                CheckpointFileRow(r.path, r.before_blob, r.before_mode, r.after_blob, r.after_mode, r.size)
            )
    return [
        CheckpointRow(
            r.id,
            r.session_id,
            r.workspace,
            r.operation_id,
            r.tool_call_id,
            r.tool,
            r.created_at,
            r.undone_at,
            tuple(files.get(r.id, ())),
        )
        for r in rows
    ]


def for_session(conn: Connection, session_id: str) -> list[CheckpointRow]:
    """The session's checkpoints with their files, newest first."""
    stmt = sa.select(t).where(t.c.session_id == session_id).order_by(t.c.id.desc())
    rows = [
        CheckpointRow(
            r.id, r.session_id, r.workspace, r.operation_id, r.tool_call_id, r.tool, r.created_at, r.undone_at
        )
        for r in conn.execute(stmt)
    ]
    return _with_files(conn, rows)


def mark_undone(conn: Connection, ids: Iterable[int], *, now: datetime) -> None:
    ids = list(ids)
    if ids:
        conn.execute(t.update().where(t.c.id.in_(ids), t.c.undone_at.is_(None)).values(undone_at=now))


def sizes(conn: Connection) -> list[tuple[int, str, int]]:
    """`(id, workspace, bytes kept for it)` of every checkpoint, oldest first."""
    stmt = (
        sa.select(t.c.id, t.c.workspace, sa.func.coalesce(sa.func.sum(f.c.size), 0))
        .select_from(t.outerjoin(f, f.c.checkpoint_id == t.c.id))
        .group_by(t.c.id, t.c.workspace)
        .order_by(t.c.id)
    )
    return [(r[0], r[1], int(r[2])) for r in conn.execute(stmt)]


def prune(conn: Connection, *, older_than: datetime, ids: Iterable[int] = ()) -> tuple[int, list[str]]:
    """Delete the checkpoints made before `older_than` and those in `ids`; how many, and the folders they were of."""
    cond = t.c.created_at < older_than
    ids = list(ids)
    if ids:
        cond = sa.or_(cond, t.c.id.in_(ids))
    workspaces = sorted({r[0] for r in conn.execute(sa.select(t.c.workspace).where(cond).distinct())})
    doomed = sa.select(t.c.id).where(cond)
    conn.execute(f.delete().where(f.c.checkpoint_id.in_(doomed)))
    count = conn.execute(t.delete().where(cond)).rowcount
    return count, workspaces


def live_blobs(conn: Connection, workspace: str) -> set[str]:
    """Every object id a remaining checkpoint of this folder refers to."""
    stmt = (
        sa.select(f.c.before_blob, f.c.after_blob)
        .select_from(f.join(t, f.c.checkpoint_id == t.c.id))
        .where(t.c.workspace == workspace)
    )
    out: set[str] = set()
    for before, after in conn.execute(stmt):
        out.update(b for b in (before, after) if b)
    return out
