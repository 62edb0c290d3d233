"""Session search (`repos.search`): the same hits, snippets and matches from SQLite's FTS5 and PostgreSQL's own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from cowork.store import Database, MessageRow, OperationRow, SessionRow, ToolCallRow, repos

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)

LONG = (
    "Before anything else we looked at the logs of the nightly job, and then at the configuration of the "
    "deployment, until the flux capacitor turned out to need 1.21 gigawatts of power from the old reactor that "
    "nobody had touched (see plant/reactor.txt) for a very long time and that the facilities team was about to retire."
)


def _session(conn: sa.Connection, sid: str, workspace: str, when: datetime) -> None:
    row = SessionRow(id=sid, title=f"title {sid}", workspace=workspace, provider=None, model=None,
                     created_at=when, updated_at=when)  # fmt: skip
    repos.sessions.insert(conn, row)
    op = OperationRow(f"op-{sid}", sid, None, "chat", "done", None, None, when, when, thread_id=sid)
    repos.operations.insert(conn, op)


def _fill(db: Database) -> None:
    def write(conn: sa.Connection) -> None:
        _session(conn, "s1", "/w/one", NOW)
        _session(conn, "s2", "/w/two", NOW + timedelta(seconds=1))
        messages = [
            MessageRow("m1", "s1", "op-s1", 0, "request", "How do retries work?", "{}", NOW, thread_id="s1"),
            MessageRow("m2", "s1", "op-s1", 1, "response", "Retries back off: 1s, 2s, 4s.", "{}", NOW, thread_id="s1"),
            MessageRow("m3", "s1", "op-s1", 2, "response", "", "{}", NOW, thread_id="s1"),
            MessageRow("m4", "s2", "op-s2", 0, "request", "What does the machine need?", "{}", NOW, thread_id="s2"),
        ]
        for message in messages:
            repos.messages.insert(conn, message)
        call = ToolCallRow("op-s2", "call-1", "s2", 0, "read", "{}", False, "running", NOW, NOW)
        repos.tool_calls.insert_many(conn, [call])
        repos.tool_calls.update(conn, "op-s2", "call-1", status="done", now=NOW, result=LONG)

    db.write_sync(write)


def _search(db: Database, text: str, workspace: str | None = None) -> list[repos.search.SearchHit]:
    return db.read_sync(lambda c: repos.search.search(c, text, workspace=workspace, limit=10))


def test_every_word_is_required_and_a_tool_result_is_found_with_its_snippet(db: Database) -> None:
    _fill(db)
    (hit,) = _search(db, "flux CAPACITOR")
    assert (hit.session_id, hit.kind, hit.ref, hit.title, hit.workspace) == ("s2", "tool", "op-s2:call-1",
                                                                             "title s2", "/w/two")  # fmt: skip
    assert [hit.snippet[start:end] for start, end in hit.matches] == ["flux", "capacitor"]
    assert "gigawatts" in hit.snippet and hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert len(hit.snippet.split()) <= 17
    assert _search(db, "flux reactorless") == []
    # File names are words apart, as FTS5's unicode61 has them (PostgreSQL's own parser keeps them whole).
    assert [h.ref for h in _search(db, "txt reactor")] == [h.ref for h in _search(db, "plant/reactor.txt")] == [hit.ref]


def test_messages_are_found_by_kind_and_a_workspace_keeps_its_own(db: Database) -> None:
    _fill(db)
    assert [(h.session_id, h.kind, h.ref) for h in _search(db, "retries work")] == [("s1", "user", "m1")]
    assert {(h.kind, h.ref) for h in _search(db, "retries")} == {("user", "m1"), ("assistant", "m2")}
    (said,) = _search(db, "machine")
    assert (said.snippet, said.matches) == ("What does the machine need?", [(14, 21)])
    assert _search(db, "machine", workspace="/w/one") == []
    assert [h.session_id for h in _search(db, "machine", workspace="/w/two")] == ["s2"]


def test_no_query_syntax_gets_through(db: Database) -> None:
    _fill(db)
    assert _search(db, 'retries" OR "NEAR(x') == []
    assert _search(db, "retries OR machine") == []
    assert _search(db, "   ") == []
    # A word is a phrase of its letters and digits: "back-off?" is "back off", in that order.
    assert [h.ref for h in _search(db, "back-off? 2s")] == ["m2"]
    assert [h.ref for h in _search(db, "back_off: 2s,")] == ["m2"]
    assert _search(db, "off-back") == []
    assert [h.ref for h in _search(db, "1.21")] == ["op-s2:call-1"]  # not one number to PostgreSQL's parser either


def test_a_deleted_session_leaves_the_index(db: Database) -> None:
    _fill(db)
    assert db.write_sync(lambda c: repos.sessions.delete(c, "s2"))
    assert _search(db, "flux") == []
    assert [h.session_id for h in _search(db, "retries")] == ["s1", "s1"]
