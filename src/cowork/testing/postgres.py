"""A private PostgreSQL schema per test: the suite's PostgreSQL half and the replica tests run in one.

The server is the machine's own (127.0.0.1:5432, database `test`, trust authentication) unless
`COWORK_TEST_POSTGRES` names another. Each schema is created empty, reached through a URL whose `search_path`
names it (so every table Cowork creates lands there) and dropped with all it holds at the end.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import urllib.parse
from pathlib import Path
from types import TracebackType

import psycopg

from cowork.store import Connection, Database

__all__ = ["DEFAULT_SERVER", "PostgresSchema", "postgres_problem", "start_postgres", "store_of", "store_text"]

DEFAULT_SERVER = "postgresql://127.0.0.1:5432/test"


def server_url() -> str:
    return os.environ.get("COWORK_TEST_POSTGRES") or DEFAULT_SERVER


def postgres_problem(url: str | None = None) -> str | None:
    """Why PostgreSQL cannot be used here (None when it can)."""
    try:
        with psycopg.connect(url or server_url(), connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"PostgreSQL at {url or server_url()} is not reachable: {str(exc).strip().splitlines()[0]}"
    return None


def start_postgres() -> str | None:
    """Start the machine's PostgreSQL cluster if it is installed but stopped (Debian's `pg_ctlcluster`).

    Returns:
        Why it could not be used (None when it answers).
    """
    if postgres_problem() is None:
        return None
    clusters = Path("/etc/postgresql")
    if shutil.which("pg_ctlcluster") is None or not clusters.is_dir():
        return "PostgreSQL is not installed here (no pg_ctlcluster, no /etc/postgresql)"
    for version in sorted(p.name for p in clusters.iterdir()):
        subprocess.run(
            ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "start"],
            check=False,
            capture_output=True,
            timeout=60,
        )
    return postgres_problem()


class PostgresSchema:
    """A new empty schema on the test server; `url` reaches it. A context manager: dropped on exit."""

    def __init__(self, server: str | None = None) -> None:
        self.server = server or server_url()
        self.name = f"cowork_test_{secrets.token_hex(6)}"

    @property
    def url(self) -> str:
        parts = urllib.parse.urlsplit(self.server)
        # Commits need not wait for the disk in tests: a killed server loses nothing, only a crash of PostgreSQL would.
        # %20, not +, between the options: libpq's own URL parser (the listener's) does not read + as a space.
        query = urllib.parse.urlencode(
            {"options": f"-csearch_path={self.name} -csynchronous_commit=off"}, quote_via=urllib.parse.quote
        )
        return urllib.parse.urlunsplit(parts._replace(query=query))

    def create(self) -> PostgresSchema:
        with psycopg.connect(self.server, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{self.name}"')
        return self

    def drop(self) -> None:
        with psycopg.connect(self.server, autocommit=True) as conn:
            conn.execute("SET lock_timeout = '20s'")  # a connection left open must not hang the suite
            conn.execute(f'DROP SCHEMA IF EXISTS "{self.name}" CASCADE')

    def __enter__(self) -> PostgresSchema:
        return self.create()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.drop()


def store_of(home: Path) -> Database:
    """The store a server with this home uses in this test: the test's PostgreSQL schema when the suite runs on
    PostgreSQL (COWORK_DATABASE_URL), else the SQLite file in the home. Close it when done."""
    return Database.from_url(os.environ.get("COWORK_DATABASE_URL"), home / "cowork.db")


def store_text(home: Path) -> str:
    """Every row of every table of the store a server with this home uses, as text (to check what was never
    written), on either engine."""
    import sqlalchemy as sa

    store = store_of(home)

    def dump(conn: Connection) -> str:
        lines = []
        for table in sa.inspect(conn).get_table_names():
            for row in conn.execute(sa.text(f'SELECT * FROM "{table}"')):
                lines.append(f"{table}: {tuple(row)!r}")
        return "\n".join(lines)

    try:
        return store.read_sync(dump)
    finally:
        store.close()
