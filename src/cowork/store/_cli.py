"""`cowork backup [FILE]` and `cowork restore FILE`: the database copied out while Cowork runs, and put back while
it does not. Exit codes: 0 done; 1 it could not be done (the message says why); 2 bad usage."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from cowork.config import CoworkPaths, private_dir

from ._backup import BackupError, backup_database, check_backup, known_revisions, restore_database

__all__ = ["main_backup", "main_restore"]


def _on_postgres(command: str) -> bool:
    """True (after saying what to use instead) when this Cowork's store is PostgreSQL, which has its own tools."""
    url = os.environ.get("COWORK_DATABASE_URL") or ""
    if not url.startswith(("postgres://", "postgresql://", "postgresql+psycopg://")):
        return False
    print(
        f"cowork {command}: the store is PostgreSQL (COWORK_DATABASE_URL); {command} copies Cowork's SQLite file. "
        "Use PostgreSQL's own pg_dump and pg_restore instead.",
        file=sys.stderr,
    )
    return True


def main_backup(home: Path, target: Path | None) -> int:
    if _on_postgres("backup"):
        return 2
    paths = CoworkPaths(home)
    if target is None:
        folder = home / "backups"
        private_dir(folder)
        target = folder / f"cowork-{datetime.now(UTC):%Y%m%d-%H%M%S}.db"
    try:
        info = backup_database(
            paths.database, target.expanduser().absolute(), _progress if sys.stderr.isatty() else None
        )
    except BackupError as exc:
        _clear_progress()
        print(f"cowork backup: {exc}", file=sys.stderr)
        return 1
    _clear_progress()
    print(f"Backed up {info.sessions} sessions ({info.size / 1e6:.1f} MB, checked) to {info.path}")
    print("API keys are not in it: they stay in the credential store.")
    return 0


def main_restore(home: Path, backup: Path, *, yes: bool, server_running: bool) -> int:
    if _on_postgres("restore"):
        return 2
    paths = CoworkPaths(home)
    if server_running:
        print("cowork restore: the Cowork server is running; stop it first (cowork server stop).", file=sys.stderr)
        return 1
    backup = backup.expanduser().absolute()
    try:
        info = check_backup(backup)
    except BackupError as exc:
        print(f"cowork restore: {exc}", file=sys.stderr)
        return 1
    if not yes:
        if not sys.stdin.isatty():
            print("cowork restore: confirm with --yes (nothing was changed).", file=sys.stderr)
            return 2
        answer = input(
            f"Replace Cowork's database with {backup} ({info.sessions} sessions)? The current one is kept beside it. "
            "[y/N] "
        )
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing was changed.")
            return 0
    try:
        kept = restore_database(backup, paths.database, known_revisions())
    except BackupError as exc:
        print(f"cowork restore: {exc}", file=sys.stderr)
        return 1
    print(f"Restored {info.sessions} sessions from {backup}.")
    if kept is not None:
        print(f"The database it replaced is kept as {kept}.")
    return 0


def _progress(done: int, total: int) -> None:
    percent = 100 * done // total if total else 100
    bar = "█" * (percent // 5) + "░" * (20 - percent // 5)
    print(f"\rbacking up {bar} {percent:3d}% ({done:,} of {total:,} pages)", end="", file=sys.stderr, flush=True)


def _clear_progress() -> None:
    if sys.stderr.isatty():
        print("\r\033[K", end="", file=sys.stderr, flush=True)
