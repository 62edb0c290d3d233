"""Backups of the database: an online, consistent copy (SQLite's backup API), checked, and its restore.

A backup can be taken while the server runs and a turn streams: the backup API copies one consistent snapshot
(pages changed meanwhile make it start over on the changed pages). What it holds is the database alone; API keys
live in the credential store (the OS keyring or `auth/`), never in the database, so they are not in a backup.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from alembic.config import Config
from alembic.script import ScriptDirectory

from cowork.config import PRIVATE_FILE_MODE

from ._engine import MIGRATIONS

__all__ = ["BackupError", "BackupInfo", "backup_database", "check_backup", "known_revisions", "restore_database"]

Progress = Callable[[int, int], None]
"""Called with (pages copied, pages in all) as the copy goes."""

_PAGES_PER_STEP = 512


class BackupError(Exception):
    """A backup or restore could not be done; the message says why and what to do."""


@dataclass(frozen=True)
class BackupInfo:
    path: Path
    revision: str | None
    sessions: int
    size: int


def backup_database(database: Path, target: Path, progress: Progress | None = None) -> BackupInfo:
    """Copy `database` to `target` (a new file, 0600), then check the copy.

    Raises:
        BackupError: there is no database, `target` exists, or the copy is not sound.
    """
    if not database.is_file():
        raise BackupError(f"There is no Cowork database at {database} to back up.")
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    except FileExistsError:
        raise BackupError(f"{target} exists already; name another file.") from None
    except OSError as exc:
        raise BackupError(f"Could not create {target}: {exc.strerror}.") from None
    os.close(fd)
    try:
        with contextlib.closing(sqlite3.connect(database, timeout=30)) as source:
            with contextlib.closing(sqlite3.connect(target)) as copy:
                source.backup(copy, pages=_PAGES_PER_STEP, progress=_reporter(progress))
                # One self-contained file: the copy keeps the source's WAL mode, which would leave -wal and -shm
                # files beside it whenever it is opened.
                copy.execute("PRAGMA journal_mode=DELETE")
        return check_backup(target)
    except (sqlite3.Error, BackupError) as exc:
        target.unlink(missing_ok=True)
        raise BackupError(f"The backup failed: {exc}") from None


def check_backup(path: Path) -> BackupInfo:
    """What a backup holds, after SQLite's integrity check.

    Raises:
        BackupError: not a database, or a damaged one.
    """
    try:
        with contextlib.closing(sqlite3.connect(_read_only(path), uri=True)) as db:
            verdict = db.execute("PRAGMA integrity_check").fetchone()
            if verdict is None or verdict[0] != "ok":
                raise BackupError(f"{path} is damaged: {verdict[0] if verdict else 'no answer'}.")
            revision = db.execute("SELECT version_num FROM alembic_version").fetchone()
            sessions = db.execute("SELECT count(*) FROM sessions").fetchone()
    except sqlite3.Error as exc:
        raise BackupError(f"{path} is not a Cowork backup ({exc}).") from None
    return BackupInfo(path, revision[0] if revision else None, int(sessions[0]) if sessions else 0, path.stat().st_size)


def restore_database(backup: Path, database: Path, known_revisions: set[str]) -> Path | None:
    """Put `backup` in place of `database`, keeping the database it replaces beside it; returns where that went.

    The server must not be running (the caller checks). A backup from a newer Cowork (a migration this one does not
    know) is refused; an older one is brought up to date by the next start's migrations.

    Raises:
        BackupError: the backup is unsound or from a newer Cowork, or the files could not be moved.
    """
    info = check_backup(backup)
    if info.revision is not None and info.revision not in known_revisions:
        raise BackupError(
            f"{backup} comes from a newer Cowork (schema {info.revision}); update Cowork before restoring it."
        )
    kept: Path | None = None
    if database.exists():
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        kept = database.with_name(f"{database.name}.before-restore-{stamp}")
        with contextlib.closing(sqlite3.connect(database, timeout=30)) as current:
            current.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the main file before it moves
        database.rename(kept)
        for suffix in ("-wal", "-shm"):
            Path(f"{database}{suffix}").unlink(missing_ok=True)
    try:
        fd = os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE_MODE)
        os.close(fd)
        with contextlib.closing(sqlite3.connect(_read_only(backup), uri=True)) as source:
            with contextlib.closing(sqlite3.connect(database)) as target:
                source.backup(target, pages=_PAGES_PER_STEP)
    except (OSError, sqlite3.Error) as exc:
        database.unlink(missing_ok=True)
        if kept is not None:
            kept.rename(database)
        raise BackupError(f"The restore failed and nothing changed: {exc}") from None
    return kept


def known_revisions() -> set[str]:
    """Every schema revision this Cowork's migrations know."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return {script.revision for script in ScriptDirectory.from_config(config).walk_revisions()}


def _read_only(path: Path) -> str:
    """A read-only SQLite URI for `path` (percent-encoded: a `?` or `#` in a file name stays part of it)."""
    return f"{path.absolute().as_uri()}?mode=ro"


def _reporter(progress: Progress | None) -> Callable[[int, int, int], None] | None:
    if progress is None:
        return None

    def report(_status: int, remaining: int, total: int) -> None:
        progress(total - remaining, total)

    return report
