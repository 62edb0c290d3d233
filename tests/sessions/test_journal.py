"""The journal: write before tell, per-session order, group commit, one bad write does not sink the others."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cowork.protocol import LogLine, SessionEvent
from cowork.sessions import EventBus, Journal
from cowork.store import Connection, Database, SessionRow, repos

pytestmark = pytest.mark.anyio
NOW = datetime(2026, 11, 21, tzinfo=UTC)


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[tuple[Database, EventBus, Journal]]:
    db = Database.sqlite(tmp_path / "cowork.db")
    db.migrate()
    for sid in ("s1", "s2"):
        row = SessionRow(sid, "t", "/w", None, None, NOW, NOW)
        db.write_sync(lambda c, row=row: repos.sessions.insert(c, row))  # type: ignore[misc]  # mypy cannot type a lambda default
    bus = EventBus()
    journal = Journal(db, bus)
    journal.start()
    yield db, bus, journal
    await journal.stop()
    db.close()


async def test_subscribers_see_only_committed_events(setup: tuple[Database, EventBus, Journal]) -> None:
    db, bus, journal = setup
    seen_in_db: list[bool] = []

    def subscriber(event: SessionEvent) -> None:
        rows = db.read_sync(lambda c: repos.events.after(c, event.session_id, event.seq - 1, 1))
        seen_in_db.append(bool(rows) and rows[0].seq == event.seq)

    bus.subscribe("s1", subscriber)
    for i in range(20):
        journal.emit("s1", LogLine(text=str(i)))
    await journal.flush()
    assert seen_in_db == [True] * 20


async def test_seq_is_contiguous_per_session_in_emit_order(setup: tuple[Database, EventBus, Journal]) -> None:
    db, bus, journal = setup
    got: dict[str, list[tuple[int, str]]] = {"s1": [], "s2": []}
    for sid in got:
        bus.subscribe(sid, lambda e, sid=sid: got[sid].append((e.seq, e.payload.text)))  # type: ignore[misc]
    futures = [journal.emit("s1" if i % 3 else "s2", LogLine(text=str(i))) for i in range(300)]
    await asyncio.gather(*futures)
    for items in got.values():
        assert [seq for seq, _ in items] == list(range(1, len(items) + 1))
        assert [int(text) for _, text in items] == sorted(int(text) for _, text in items)
    last = db.read_sync(lambda c: repos.sessions.get(c, "s1"))
    assert last is not None and last.last_seq == len(got["s1"])


async def test_deltas_are_group_committed(
    setup: tuple[Database, EventBus, Journal], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _bus, journal = setup
    transactions = 0
    original = db.write

    async def counting(fn):
        nonlocal transactions
        transactions += 1
        return await original(fn)

    monkeypatch.setattr(db, "write", counting)
    for i in range(200):
        journal.emit("s1", LogLine(text=str(i)))
    await journal.flush()
    assert transactions < 20


async def test_a_failing_mutation_fails_alone(setup: tuple[Database, EventBus, Journal]) -> None:
    _db, bus, journal = setup
    delivered: list[str] = []
    bus.subscribe("s1", lambda e: delivered.append(e.payload.text))  # type: ignore[union-attr]

    def explode(conn: Connection) -> None:
        raise RuntimeError("boom")

    first = journal.emit("s1", LogLine(text="a"))
    bad = journal.emit("s1", LogLine(text="b"), mutate=explode)
    last = journal.emit("s1", LogLine(text="c"))
    await asyncio.wait([first, bad, last])
    assert first.result() is not None and last.result() is not None
    with pytest.raises(RuntimeError):
        bad.result()
    assert delivered == ["a", "c"]
    assert [first.result().seq, last.result().seq] == [1, 2]  # type: ignore[union-attr]


async def test_mutation_commits_with_its_event(setup: tuple[Database, EventBus, Journal]) -> None:
    db, _bus, journal = setup
    await journal.append(
        "s1", LogLine(text="renamed"), mutate=lambda c: repos.sessions.update(c, "s1", now=NOW, title="New title")
    )
    row = db.read_sync(lambda c: repos.sessions.get(c, "s1"))
    assert row is not None and row.title == "New title" and row.last_seq == 1
