"""Operation leases (`operation_leases`): which replica runs an operation, until when.

Taking a lease is one statement (an upsert whose update only applies when the lease is the taker's own or has
expired), so two replicas racing for one operation cannot both win, on either engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from .._schema import operation_leases as t

__all__ = ["acquire", "expired", "held_elsewhere", "holder", "release", "renew"]


def acquire(conn: Connection, operation_id: str, owner: str, *, now: datetime, ttl: float) -> bool:
    """Take (or extend) the lease on an operation for `owner`; False when another replica holds it unexpired."""
    expires = now + timedelta(seconds=ttl)
    values = {"operation_id": operation_id, "owner": owner, "expires_at": expires}
    changes = {"owner": owner, "expires_at": expires}
    mine_or_expired = sa.or_(t.c.owner == owner, t.c.expires_at < now)
    if conn.dialect.name == "postgresql":
        pg = postgresql.insert(t).values(values)
        conn.execute(pg.on_conflict_do_update(index_elements=[t.c.operation_id], set_=changes, where=mine_or_expired))
    else:
        lite = sqlite.insert(t).values(values)
        conn.execute(lite.on_conflict_do_update(index_elements=[t.c.operation_id], set_=changes, where=mine_or_expired))
    return holder(conn, operation_id) == owner


def renew(conn: Connection, owner: str, operation_ids: Sequence[str], *, now: datetime, ttl: float) -> set[str]:
    """Extend `owner`'s leases on these operations; returns the ids it no longer holds (taken over, or released)."""
    if not operation_ids:
        return set()
    conn.execute(
        t.update()
        .where(t.c.owner == owner, t.c.operation_id.in_(operation_ids))
        .values(expires_at=now + timedelta(seconds=ttl))
    )
    held = conn.execute(
        sa.select(t.c.operation_id).where(t.c.owner == owner, t.c.operation_id.in_(operation_ids))
    ).scalars()
    return set(operation_ids) - set(held)


def release(conn: Connection, operation_id: str, owner: str) -> None:
    conn.execute(t.delete().where(t.c.operation_id == operation_id, t.c.owner == owner))


def holder(conn: Connection, operation_id: str, *, now: datetime | None = None) -> str | None:
    """Who holds the operation's lease (None when nobody does; with `now`, an expired lease counts as nobody's)."""
    stmt = sa.select(t.c.owner).where(t.c.operation_id == operation_id)
    if now is not None:
        stmt = stmt.where(t.c.expires_at >= now)
    return conn.execute(stmt).scalar()


def held_elsewhere(conn: Connection, operation_ids: Sequence[str], owner: str, *, now: datetime) -> set[str]:
    """Which of these operations another replica holds an unexpired lease on."""
    if not operation_ids:
        return set()
    stmt = sa.select(t.c.operation_id).where(
        t.c.operation_id.in_(operation_ids), t.c.owner != owner, t.c.expires_at >= now
    )
    return set(conn.execute(stmt).scalars())


def expired(conn: Connection, *, now: datetime) -> list[str]:
    """What is leased by a replica that stopped renewing."""
    return list(conn.execute(sa.select(t.c.operation_id).where(t.c.expires_at < now)).scalars())
