"""The SQLite file and the WAL, SHM and journal beside it are private to the user, whatever the umask."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sqlalchemy as sa

from cowork.store import Database
from cowork.testing.files import mode


def written(path: Path) -> Database:
    """A migrated database with one committed write, its WAL and SHM still there (the connections stay open)."""
    db = Database.sqlite(path)
    db.migrate()
    db.write_sync(lambda conn: conn.execute(sa.text("CREATE TABLE probe (x INTEGER)")))
    return db


def test_database_and_its_wal_and_shm_are_0600_under_umask_022(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        db = written(tmp_path / "cowork.db")
    finally:
        os.umask(previous)
    try:
        names = ["cowork.db", "cowork.db-wal", "cowork.db-shm"]
        assert {name: mode(tmp_path / name) for name in names} == dict.fromkeys(names, 0o600)
    finally:
        db.close()


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
def test_readable_database_files_are_tightened_on_open(tmp_path: Path, suffix: str) -> None:
    written(tmp_path / "cowork.db").close()
    path = tmp_path / f"cowork.db{suffix}"
    if not path.exists():
        path.touch()  # a crash can leave any of them behind
    path.chmod(0o644)
    db = Database.sqlite(tmp_path / "cowork.db")
    try:
        assert mode(path) == 0o600
    finally:
        db.close()
