"""Operation leases on both engines: one holder at a time, taken over only once expired, renewed and released by
their holder only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cowork.store import Database, repos


def test_one_holder_until_the_lease_expires(db: Database) -> None:
    now = datetime.now(UTC)
    assert db.write_sync(lambda c: repos.leases.acquire(c, "op1", "a", now=now, ttl=10))
    assert not db.write_sync(lambda c: repos.leases.acquire(c, "op1", "b", now=now + timedelta(seconds=5), ttl=10))
    assert db.read_sync(lambda c: repos.leases.holder(c, "op1")) == "a"
    assert db.write_sync(lambda c: repos.leases.acquire(c, "op1", "a", now=now + timedelta(seconds=5), ttl=10))
    later = now + timedelta(seconds=16)  # a's renewed lease ran to now + 15
    assert db.read_sync(lambda c: repos.leases.holder(c, "op1", now=later)) is None
    assert db.read_sync(lambda c: repos.leases.expired(c, now=later)) == ["op1"]
    assert db.write_sync(lambda c: repos.leases.acquire(c, "op1", "b", now=later, ttl=10))
    assert db.read_sync(lambda c: repos.leases.holder(c, "op1", now=later)) == "b"


def test_renew_and_release_touch_only_the_holders_own(db: Database) -> None:
    now = datetime.now(UTC)
    db.write_sync(lambda c: repos.leases.acquire(c, "op1", "a", now=now, ttl=10))
    db.write_sync(lambda c: repos.leases.acquire(c, "op2", "b", now=now, ttl=10))
    lost = db.write_sync(lambda c: repos.leases.renew(c, "a", ["op1", "op2"], now=now + timedelta(seconds=8), ttl=10))
    assert lost == {"op2"}
    assert db.read_sync(lambda c: repos.leases.holder(c, "op1", now=now + timedelta(seconds=17))) == "a"
    assert db.read_sync(lambda c: repos.leases.held_elsewhere(c, ["op1", "op2", "op3"], "a", now=now)) == {"op2"}
    db.write_sync(lambda c: repos.leases.release(c, "op2", "a"))  # not a's: kept
    assert db.read_sync(lambda c: repos.leases.holder(c, "op2")) == "b"
    db.write_sync(lambda c: repos.leases.release(c, "op2", "b"))
    assert db.read_sync(lambda c: repos.leases.holder(c, "op2")) is None
    assert db.write_sync(lambda c: repos.leases.renew(c, "a", [], now=now, ttl=10)) == set()
