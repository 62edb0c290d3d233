"""The schema: created by migrations from a blank file, identical to what the repositories expect, in WAL mode."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from cowork.store import Database
from cowork.store._schema import metadata


def test_blank_database_migrates_to_head_and_matches_the_schema(tmp_path: Path) -> None:
    db = Database.sqlite(tmp_path / "cowork.db")
    head = db.migrate()
    assert head is not None and db.current_revision() == head
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'cowork.db'}")
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    engine.dispose()
    db.close()
    assert diff == [], f"migrations and cowork.store._schema disagree: {diff}"


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
