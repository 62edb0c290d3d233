"""The database engine: one serialized writer, a few concurrent readers, versioned migrations; SQLite or PostgreSQL.

Blocking database calls run on worker threads (one for writes, a small bounded pool for reads) so the event loop
never waits on disk. Callers hand in a function of a SQLAlchemy `Connection`; it runs inside one transaction.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import urllib.parse
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool, StaticPool

__all__ = ["Database"]

T = TypeVar("T")

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).parent / "migrations"
HEAD = "0019"
"""The newest migration's revision. A database already there starts without importing Alembic (about a fifth of
the server's start-up imports); `tests/store/test_migrations.py` checks it is the migrations' head."""
_BUSY_TIMEOUT_MS = 10_000
_MIGRATION_LOCK = 0x636F776F726B  # "cowork": the advisory lock replicas migrate under
_PRIVATE = 0o600


def _revision(engine: Engine) -> str | None:
    """The schema's revision as Alembic records it (None for a blank database), read without importing Alembic."""
    with engine.connect() as conn:
        return _revision_on(conn)


def _revision_on(conn: Connection) -> str | None:
    if not sa.inspect(conn).has_table("alembic_version"):
        return None
    rows = conn.exec_driver_sql("SELECT version_num FROM alembic_version").fetchall()
    if len(rows) > 1:
        raise RuntimeError(f"the database has several schema revisions at once: {[r[0] for r in rows]}")
    return rows[0][0] if rows else None


def _sqlite_engine(path: Path, *, writer: bool) -> Engine:
    engine = sa.create_engine(
        f"sqlite:///{path}",
        connect_args={"check_same_thread": False, "timeout": _BUSY_TIMEOUT_MS / 1000},
        pool_size=1 if writer else 4,
        max_overflow=0,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy, not the sqlite3 module, decide when transactions begin (the module's implicit BEGIN
        # would defeat BEGIN IMMEDIATE below).
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # The writer takes the write lock up front, so a transaction never fails half-way on a lock upgrade.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if writer else "BEGIN")

    return engine


def postgres_url(url: str) -> str:
    """A PostgreSQL URL in the form SQLAlchemy opens with psycopg 3 (`postgresql://` and `postgres://` name it)."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    raise ValueError(f"not a PostgreSQL URL: {url.split('://')[0]}://…")


def _postgres_engine(url: str, *, writer: bool) -> Engine:
    # Readers see one snapshot per transaction, as SQLite's do; REPEATABLE READ never fails a read-only transaction.
    # The writer keeps READ COMMITTED: several replicas write at once and must see each other's committed rows.
    return sa.create_engine(
        postgres_url(url),
        pool_size=1 if writer else 4,
        max_overflow=0,
        pool_pre_ping=True,
        isolation_level="READ COMMITTED" if writer else "REPEATABLE READ",
    )


def _private_database_files(path: Path) -> None:
    """Make the database file 0600, creating it empty if missing, and tighten the files SQLite keeps beside it.

    SQLite creates its -wal, -shm and -journal files with the database file's mode, whatever the umask; so a database
    file that is 0600 before the first connection keeps all of them private. Ones an older Cowork left looser are
    tightened here.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, _PRIVATE)
    except FileExistsError:
        pass
    else:
        try:
            os.fchmod(fd, _PRIVATE)  # exactly 0600, whatever the umask took
        finally:
            os.close(fd)  # SQLite takes an empty file for a new database
    for file in (path, *(path.with_name(path.name + suffix) for suffix in ("-wal", "-shm", "-journal"))):
        try:
            mode = file.lstat().st_mode
            if stat.S_ISREG(mode) and stat.S_IMODE(mode) != _PRIVATE:
                os.chmod(file, _PRIVATE)
                log.warning("%s was readable by other users (mode %o); tightened to 0600.", file, stat.S_IMODE(mode))
        except FileNotFoundError:
            continue


def _pragma(conn: Connection, pragma: str) -> None:
    """Run a PRAGMA on the raw connection, outside any transaction (SQLAlchemy would open one first)."""
    raw = conn.connection.driver_connection
    assert raw is not None
    raw.execute(f"PRAGMA {pragma}")


class Database:
    """A store engine: a SQLite file (one machine) or PostgreSQL (several replicas), behind the same interface."""

    def __init__(self, writer: Engine, reader: Engine, *, max_readers: int = 4) -> None:
        self._writer = writer
        self._reader = reader
        # Plain executors rather than anyio's worker threads: a hop costs about two thirds as much, and every
        # journal batch makes one.
        self._write_pool = ThreadPoolExecutor(1, thread_name_prefix="cowork-db-write")
        self._read_pool = ThreadPoolExecutor(max_readers, thread_name_prefix="cowork-db-read")

    @classmethod
    def sqlite(cls, path: Path) -> Database:
        """Open (creating if needed) a SQLite database file in WAL mode, readable and writable by this user only."""
        path.parent.mkdir(parents=True, exist_ok=True)
        _private_database_files(path)
        return cls(_sqlite_engine(path, writer=True), _sqlite_engine(path, writer=False))

    @classmethod
    def postgres(cls, url: str) -> Database:
        """Connect to PostgreSQL (`postgresql://user@host:port/db`; `?options=-csearch_path%3Dschema` picks a
        schema). Nothing is created but the schema's tables, by `migrate`.

        Raises:
            ValueError: `url` is not a PostgreSQL URL.
        """
        return cls(_postgres_engine(url, writer=True), _postgres_engine(url, writer=False))

    @classmethod
    def from_url(cls, url: str | None, sqlite_path: Path) -> Database:
        """The configured store: PostgreSQL when `url` names one, else the SQLite file at `sqlite_path`.

        Raises:
            ValueError: `url` names another kind of database.
        """
        if not url:
            return cls.sqlite(sqlite_path)
        if url.startswith("sqlite:///"):
            return cls.sqlite(Path(url[len("sqlite:///") :]))
        return cls.postgres(url)

    @classmethod
    def sqlite_readonly(cls, path: Path) -> Database:
        """Open an existing SQLite database file for reading only (`cowork doctor`): nothing is created or re-moded.

        Raises:
            FileNotFoundError: there is no database at `path`.
        """
        if not path.is_file():
            raise FileNotFoundError(path)
        # SQLite's URI form is the only way to say read-only; `uri=true` tells SQLAlchemy to pass it on as one.
        url = f"sqlite:///file:{urllib.parse.quote(str(path))}?mode=ro&uri=true"
        engine = sa.create_engine(url, poolclass=NullPool, connect_args={"check_same_thread": False})
        return cls(engine, engine, max_readers=1)

    @classmethod
    def memory(cls) -> Database:
        """An in-memory SQLite database (benchmarks, throwaway cores): one connection, one thread for all work."""
        engine = sa.create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None
            dbapi_conn.execute("PRAGMA foreign_keys=ON")

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            conn.exec_driver_sql("BEGIN")

        db = cls(engine, engine, max_readers=1)
        # One connection: reads must not run beside a write on another thread.
        db._read_pool = db._write_pool
        return db

    @property
    def dialect(self) -> str:
        return self._writer.dialect.name

    @property
    def where(self) -> str:
        """Where the store is, for messages: the file, or the PostgreSQL URL without its password."""
        url = self._writer.url
        return str(url.database) if url.get_backend_name() == "sqlite" else url.render_as_string(hide_password=True)

    @property
    def url(self) -> str:
        """Where the store is, password included (for the PostgreSQL listener; never logged)."""
        return self._writer.url.render_as_string(hide_password=False)

    def migrate(self) -> str | None:
        """Upgrade the schema to the newest migration (blocking; call at start-up). Returns the revision."""
        current = _revision(self._writer)
        if current == HEAD:
            return HEAD
        from alembic import command
        from alembic.config import Config
        from alembic.script import ScriptDirectory

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        head = ScriptDirectory.from_config(config).get_current_head()
        if current != head:
            with self._writer.connect() as conn:
                sqlite = conn.dialect.name == "sqlite"
                if not sqlite:
                    # Replicas starting together: one migrates, the others wait here, then find the schema current.
                    conn.exec_driver_sql(f"SELECT pg_advisory_lock({_MIGRATION_LOCK})")
                    conn.commit()
                    migrated_meanwhile = _revision_on(conn) == head
                    conn.commit()
                    if migrated_meanwhile:
                        conn.exec_driver_sql(f"SELECT pg_advisory_unlock({_MIGRATION_LOCK})")
                        conn.commit()
                        return head
                if sqlite:
                    # SQLite migrations rebuild tables (copy, DROP, rename); with foreign keys on, dropping
                    # `sessions` would cascade and delete every operation, message and event. The pragma only
                    # takes effect outside a transaction, so it is set before the migration's transaction.
                    _pragma(conn, "foreign_keys=OFF")
                try:
                    with conn.begin():
                        config.attributes["connection"] = conn
                        command.upgrade(config, "head")
                        if sqlite:
                            broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                            if broken:
                                raise RuntimeError(f"the migration left rows without their parent: {broken[:5]}")
                finally:
                    if sqlite:
                        _pragma(conn, "foreign_keys=ON")
                    else:
                        conn.exec_driver_sql(f"SELECT pg_advisory_unlock({_MIGRATION_LOCK})")
                        conn.commit()
        return head

    def current_revision(self) -> str | None:
        """The schema's revision (None for a blank database)."""
        return _revision(self._reader)

    def write_sync(self, fn: Callable[[Connection], T]) -> T:
        with self._writer.begin() as conn:
            return fn(conn)

    def read_sync(self, fn: Callable[[Connection], T]) -> T:
        with self._reader.begin() as conn:
            return fn(conn)

    async def write(self, fn: Callable[[Connection], T]) -> T:
        """Run `fn` in one write transaction on the single writer; committed when this returns.

        If the caller is cancelled the transaction still runs to its end (commit or rollback) on the writer.
        """
        return await asyncio.get_running_loop().run_in_executor(self._write_pool, self.write_sync, fn)

    def write_from_thread(self, fn: Callable[[Connection], T], timeout: float | None = None) -> T:
        """`write` for code on a thread of its own (not the event loop): queued on the single writer, waited for.

        Raises:
            TimeoutError: the writer did not get to it within `timeout` (it still runs later).
        """
        return self._write_pool.submit(self.write_sync, fn).result(timeout)

    def write_soon(self, fn: Callable[[Connection], T]) -> asyncio.Future[T]:
        """`write` queued at once (before any write asked for later), without waiting for it."""
        return asyncio.wrap_future(self._write_pool.submit(self.write_sync, fn))

    async def read(self, fn: Callable[[Connection], T]) -> T:
        """Run `fn` in a read transaction (a consistent snapshot) on a reader."""
        return await asyncio.get_running_loop().run_in_executor(self._read_pool, self.read_sync, fn)

    def close(self) -> None:
        self._write_pool.shutdown(wait=True)
        self._read_pool.shutdown(wait=True)
        self._writer.dispose()
        if self._reader is not self._writer:
            self._reader.dispose()
