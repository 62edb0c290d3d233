"""Repositories against a real SQLite file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from cowork.store import Database, EventRow, MessageRow, OperationRow, SessionRow, repos

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def session(id_: str, title: str = "t", when: datetime = NOW) -> SessionRow:
    return SessionRow(id=id_, title=title, workspace="/w", provider=None, model=None, created_at=when, updated_at=when)


def test_session_round_trip_keeps_utc(db: Database) -> None:
    db.write_sync(lambda c: repos.sessions.insert(c, session("s1")))
    row = db.read_sync(lambda c: repos.sessions.get(c, "s1"))
    assert row == session("s1")
    assert row is not None and row.created_at.tzinfo is not None


def test_list_newest_first_with_title_search(db: Database) -> None:
    db.write_sync(lambda c: repos.sessions.insert(c, session("a", "alpha report", NOW)))
    db.write_sync(lambda c: repos.sessions.insert(c, session("b", "beta 100%", NOW + timedelta(seconds=1))))
    db.write_sync(lambda c: repos.sessions.insert(c, session("c", "gamma", NOW + timedelta(seconds=2))))
    assert [s.id for s in db.read_sync(lambda c: repos.sessions.list_recent(c, limit=10))] == ["c", "b", "a"]
    assert [s.id for s in db.read_sync(lambda c: repos.sessions.list_recent(c, limit=10, query="REPORT"))] == ["a"]
    # LIKE wildcards in the query are literal.
    assert [s.id for s in db.read_sync(lambda c: repos.sessions.list_recent(c, limit=10, query="%"))] == ["b"]
    assert [s.id for s in db.read_sync(lambda c: repos.sessions.list_recent(c, limit=1, offset=1))] == ["b"]


def test_seq_allocation_is_per_session_and_contiguous(db: Database) -> None:
    db.write_sync(lambda c: repos.sessions.insert(c, session("s1")))
    db.write_sync(lambda c: repos.sessions.insert(c, session("s2")))
    assert db.write_sync(lambda c: repos.sessions.allocate_seqs(c, "s1", 3, now=NOW)) == 3
    assert db.write_sync(lambda c: repos.sessions.allocate_seqs(c, "s2", 1, now=NOW)) == 1
    assert db.write_sync(lambda c: repos.sessions.allocate_seqs(c, "s1", 2, now=NOW)) == 5
    with pytest.raises(LookupError):
        db.write_sync(lambda c: repos.sessions.allocate_seqs(c, "nope", 1, now=NOW))


def test_events_after_in_order_with_limit(db: Database) -> None:
    db.write_sync(lambda c: repos.sessions.insert(c, session("s1")))
    rows = [EventRow("s1", i, "log", f'{{"text":"{i}"}}', NOW) for i in range(1, 6)]
    db.write_sync(lambda c: repos.events.insert_many(c, rows))
    got = db.read_sync(lambda c: repos.events.after(c, "s1", 2, 2))
    assert [r.seq for r in got] == [3, 4]
    with pytest.raises(sa.exc.IntegrityError):
        db.write_sync(lambda c: repos.events.insert_many(c, [rows[0]]))


def test_operations_are_unique_per_client_message(db: Database) -> None:
    db.write_sync(lambda c: repos.sessions.insert(c, session("s1")))
    op = OperationRow("op1", "s1", "cm1", "chat", "running", "openai", "m", NOW, NOW, thread_id="s1")
    db.write_sync(lambda c: repos.operations.insert(c, op))
    assert db.read_sync(lambda c: repos.operations.find_by_client_message(c, "s1", "cm1")) == op
    with pytest.raises(sa.exc.IntegrityError):
        db.write_sync(
            lambda c: repos.operations.insert(
                c, OperationRow("op2", "s1", "cm1", "chat", "running", None, None, NOW, NOW)
            )
        )
    db.write_sync(
        lambda c: repos.operations.set_status(
            c, "op1", "error", now=NOW, step_count=3, error_code="x", error_message="y"
        )
    )
    got = db.read_sync(lambda c: repos.operations.get(c, "op1"))
    assert got is not None and (got.status, got.step_count, got.error_code) == ("error", 3, "x")
    assert db.read_sync(lambda c: repos.operations.with_status(c, ["running"])) == []


def test_messages_positions(db: Database) -> None:
    db.write_sync(lambda c: repos.sessions.insert(c, session("s1")))
    db.write_sync(
        lambda c: repos.operations.insert(c, OperationRow("op1", "s1", None, "chat", "running", None, None, NOW, NOW))
    )
    assert db.read_sync(lambda c: repos.messages.next_position(c, "s1")) == 0
    for i, text in enumerate(["hi", "", "hello"]):
        row = MessageRow(f"m{i}", "s1", "op1", i, "request" if i != 2 else "response", text, "{}", NOW)
        db.write_sync(lambda c, row=row: repos.messages.insert(c, row))  # type: ignore[misc]
    assert db.read_sync(lambda c: repos.messages.next_position(c, "s1")) == 3
    assert [m.id for m in db.read_sync(lambda c: repos.messages.for_session(c, "s1", only_with_text=True))] == [
        "m0",
        "m2",
    ]
