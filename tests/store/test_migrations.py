"""The schema: created by migrations from a blank file, identical to what the repositories expect, in WAL mode."""

from __future__ import annotations

import sqlite3
from functools import partial
from pathlib import Path

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from cowork.store import Database
from cowork.store._engine import HEAD, MIGRATIONS
from cowork.store._schema import metadata

# The full-text indexes are not in the metadata: on SQLite FTS5 virtual tables with shadow tables (migrations 0009,
# 0013), on PostgreSQL expression indexes and a tsvector table (0018).
NOT_FTS = {
    "include_name": lambda name, kind, _parent: (
        not (kind in ("table", "index") and str(name).startswith(("search_index", "rag_fts")))
    )
}


def test_blank_database_migrates_to_head_and_matches_the_schema(tmp_path: Path) -> None:
    db = Database.sqlite(tmp_path / "cowork.db")
    head = db.migrate()
    assert head is not None and db.current_revision() == head
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'cowork.db'}")
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts=NOT_FTS), metadata)
    engine.dispose()
    db.close()
    assert diff == [], f"migrations and cowork.store._schema disagree: {diff}"


def test_the_engine_under_test_migrates_to_head_and_matches_the_schema(db: Database) -> None:
    """The same on PostgreSQL when the suite runs there (the `db` fixture's engine)."""
    assert db.current_revision() == HEAD
    diff = db.read_sync(lambda c: compare_metadata(MigrationContext.configure(c, opts=NOT_FTS), metadata))
    assert diff == [], f"migrations and cowork.store._schema disagree on {db.dialect}: {diff}"


def test_chunks_indexed_before_0018_are_found_by_keyword_after_it(tmp_path: Path, database_url: str | None) -> None:
    """0018 gives PostgreSQL its `rag_fts` and fills it from the chunks already there (SQLite had FTS5 since 0013)."""
    from alembic import command

    from cowork.store import repos

    db = Database.from_url(database_url, tmp_path / "cowork.db")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))

    def at_0017(conn: sa.Connection) -> None:
        config.attributes["connection"] = conn
        command.upgrade(config, "0017")
        now = "2026-11-27 12:00:00+00:00"
        conn.exec_driver_sql(
            "INSERT INTO rag_sources (id, kind, scope, uri, title, content_hash, size, mtime_ns, chunk_count, "
            f"embedder, indexed_at) VALUES (1, 'documents', '/w', 'a.md', 'Budget', 'h', 1, 1, 1, 'e', '{now}')"
        )
        conn.exec_driver_sql(
            "INSERT INTO rag_chunks (id, source_id, ordinal, heading, text) "
            "VALUES (1, 1, 0, 'Plans', 'Quarterly revenues rose.')"
        )
        if conn.dialect.name == "sqlite":  # what the repository of that revision wrote beside the chunk
            conn.exec_driver_sql("INSERT INTO rag_fts (rowid, text, heading) VALUES (1, 'Quarterly revenues rose.', "
                                 "'Budget Plans')")  # fmt: skip

    db.write_sync(at_0017)
    assert db.migrate() == HEAD

    def found(*terms: str) -> list[int]:
        return db.read_sync(lambda c: repos.retrieval.fts_search(c, terms, "documents", "/w", 10))

    assert found("revenue") == found("budget", "nothing") == [1]
    assert found("expenses") == []
    db.close()


def _drop(table: str, conn: sa.Connection) -> None:
    conn.exec_driver_sql(f"DROP TABLE {table}")


def test_head_constant_is_the_migrations_head() -> None:
    """`HEAD` lets a database already at the newest schema start without Alembic: a new migration must move it."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == HEAD


def test_a_database_at_head_is_not_migrated_again_and_an_older_one_is(tmp_path: Path) -> None:
    db = Database.sqlite(tmp_path / "cowork.db")
    assert db.migrate() == HEAD
    db.write_sync(lambda c: c.exec_driver_sql("UPDATE alembic_version SET version_num = '0014'"))
    db.write_sync(lambda c: c.exec_driver_sql("DROP TABLE rag_pins"))  # what 0015 creates
    db.write_sync(lambda c: c.exec_driver_sql("DROP TABLE activity_spans"))  # what 0016 creates
    for table in ("automations", "automation_runs", "automation_run_steps", "notifications", "notification_responses"):
        db.write_sync(partial(_drop, table))  # what 0017 creates
    db.write_sync(partial(_drop, "operation_leases"))  # what 0019 creates
    assert db.current_revision() == "0014"
    assert db.migrate() == HEAD and db.current_revision() == HEAD
    assert db.read_sync(lambda c: sa.inspect(c).has_table("rag_pins"))
    assert db.read_sync(lambda c: sa.inspect(c).has_table("activity_spans"))
    assert db.read_sync(lambda c: sa.inspect(c).has_table("automation_runs"))
    assert db.read_sync(lambda c: sa.inspect(c).has_table("operation_leases"))
    db.close()


def test_a_database_with_two_revisions_is_refused(tmp_path: Path) -> None:
    db = Database.sqlite(tmp_path / "cowork.db")
    db.migrate()
    db.write_sync(lambda c: c.exec_driver_sql("INSERT INTO alembic_version VALUES ('0014')"))
    try:
        db.migrate()
    except RuntimeError as error:
        assert "several schema revisions" in str(error)
    else:
        raise AssertionError("a database with two revisions was accepted")
    db.close()


def test_migrate_is_idempotent(tmp_path: Path) -> None:
    db = Database.sqlite(tmp_path / "cowork.db")
    assert db.migrate() == db.migrate()
    db.close()


def test_wal_mode_busy_timeout_and_foreign_keys(tmp_path: Path) -> None:
    db = Database.sqlite(tmp_path / "cowork.db")
    db.migrate()

    def pragmas(conn: sa.Connection) -> tuple[object, object, object]:
        return (
            conn.exec_driver_sql("PRAGMA journal_mode").scalar(),
            conn.exec_driver_sql("PRAGMA busy_timeout").scalar(),
            conn.exec_driver_sql("PRAGMA foreign_keys").scalar(),
        )

    assert db.write_sync(pragmas) == ("wal", 10_000, 1)
    assert db.read_sync(pragmas)[0] == "wal"
    db.close()
    # The mode is stored in the file itself, so any other reader sees it too.
    raw = sqlite3.connect(tmp_path / "cowork.db")
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


def _upgrade_to(path: Path, revision: str) -> None:
    """Bring a database file to `revision` with the project's own migrations (as an old Cowork would have)."""
    from alembic import command
    from alembic.config import Config

    from cowork.store._engine import MIGRATIONS

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
    engine.dispose()


def test_a_database_from_the_oldest_revision_upgrades_with_its_data(tmp_path: Path) -> None:
    # This found that rebuilding `sessions` with foreign keys on cascaded and deleted every operation and message.
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    from cowork.runtime._history import dump_message
    from cowork.runtime._loading import read_thread
    from cowork.store import repos

    path = tmp_path / "cowork.db"
    _upgrade_to(path, "0001")
    when = "2026-11-01 10:00:00.000000"
    request = dump_message(ModelRequest(parts=[UserPromptPart("where is the retry logic?")]))
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO sessions (id, title, workspace, provider, model, created_at, updated_at, last_seq) "
            f"VALUES ('ses_1', 'Retry logic', '/home/max/proj', 'openai', 'gpt-5', '{when}', '{when}', 2)"
        )
        conn.exec_driver_sql(
            "INSERT INTO operations (id, session_id, client_message_id, origin, status, provider, model, step_count, "
            f"created_at, updated_at) VALUES ('op_1', 'ses_1', 'c1', 'chat', 'done', 'openai', 'gpt-5', 1, '{when}', "
            f"'{when}')"
        )
        conn.execute(
            sa.text(
                "INSERT INTO messages (id, session_id, operation_id, position, kind, text, model_message, created_at) "
                "VALUES ('msg_1', 'ses_1', 'op_1', 0, 'request', 'where is the retry logic?', :m, :t)"
            ),
            {"m": request, "t": when},
        )
        for seq, kind in ((1, "user_message"), (2, "operation_status")):
            conn.exec_driver_sql(
                f"INSERT INTO events (session_id, seq, type, payload, created_at) VALUES ('ses_1', {seq}, '{kind}', "
                f"'{{}}', '{when}')"
            )
    engine.dispose()

    db = Database.sqlite(path)
    head = db.migrate()
    assert db.current_revision() == head != "0001"
    session = db.read_sync(lambda c: repos.sessions.get(c, "ses_1"))
    operation = db.read_sync(lambda c: repos.operations.get(c, "op_1"))
    thread = db.read_sync(lambda c: read_thread(c, "ses_1"))
    events = db.read_sync(lambda c: repos.events.after(c, "ses_1", 0, 10))
    # Foreign keys were off only while the tables were rebuilt.
    assert db.write_sync(lambda c: c.exec_driver_sql("PRAGMA foreign_keys").scalar()) == 1
    db.close()
    assert session is not None and (session.title, session.workspace, session.todos) == (
        "Retry logic",
        "/home/max/proj",
        "[]",
    )
    assert (session.network, session.yolo, session.reasoning_effort) == (False, False, None)
    # Every operation of that time was a chat turn on its session's main thread.
    assert operation is not None and (operation.thread_id, operation.status, operation.parent_operation_id) == (
        "ses_1",
        "done",
        None,
    )
    assert [m.parts[0].content for m in thread.messages] == ["where is the retry logic?"]  # type: ignore[union-attr]
    assert [e.type for e in events] == ["user_message", "operation_status"]
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts=NOT_FTS), metadata)
    engine.dispose()
    assert diff == [], f"an upgraded database differs from the schema: {diff}"


def test_the_search_triggers_survive_every_later_migration(tmp_path: Path) -> None:
    """A migration that rebuilds `messages` or `tool_calls` on SQLite (a batch alter) drops their triggers, and
    `session/search` silently stops finding new messages (0014 did, before it used a plain ADD COLUMN)."""
    db = Database.sqlite(tmp_path / "cowork.db")
    db.migrate()
    triggers = db.read_sync(
        lambda c: {r[0] for r in c.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    )
    db.close()
    assert {"search_index_message", "search_index_tool_insert", "search_index_tool_result"} <= triggers
