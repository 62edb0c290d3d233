"""Replicas on one port: `cowork serve --reuse-port` twice on one host:port and one PostgreSQL schema; the kernel
spreads connections over both and each sees what the other wrote. A bad `--database-url` and a shared port of 0 are
refused before anything binds."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cowork.clients.connection import ServerAddress
from cowork.testing.client import EventClient
from cowork.testing.postgres import PostgresSchema, postgres_problem
from cowork.testing.server import ServerProcess

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.own_postgres]

TOKEN = "replica-test-token"
CONNECTIONS = 40
"""With two listeners the kernel puts all of them on one with probability 2^-39."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COWORK_HOME": str(tmp_path / "home")}
    return subprocess.run(
        [sys.executable, "-m", "cowork", "serve", "--workspace", str(tmp_path), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.fixture
def schema() -> Iterator[PostgresSchema]:
    problem = postgres_problem()
    if problem is not None:
        pytest.skip(problem)
    with PostgresSchema() as created:
        yield created


async def test_two_replicas_share_one_port_and_one_database(
    tmp_path: Path, workspace: Path, schema: PostgresSchema
) -> None:
    port = free_port()
    args = ("--reuse-port", "--database-url", schema.url)
    replicas = [
        ServerProcess(tmp_path / f"home{n}", workspace, env={"COWORK_TOKEN": TOKEN}, args=args, port=port)
        for n in range(2)
    ]
    # One after the other: the first migrates the empty schema, the second finds it migrated.
    with replicas[0], replicas[1]:
        assert replicas[0].url == replicas[1].url == f"http://127.0.0.1:{port}"
        address = ServerAddress(f"http://127.0.0.1:{port}", TOKEN)
        clients = [await EventClient.connect(address) for _ in range(CONNECTIONS)]
        try:
            answers = await asyncio.gather(*(c.call("initialize", {"clientInfo": {"name": "t"}}) for c in clients))
            pids = [answer["serverInfo"]["pid"] for answer in answers]
            assert set(pids) == {replicas[0].pid, replicas[1].pid}
            # A session made through one replica is listed through the other: one database behind both.
            first = pids.index(replicas[0].pid)
            second = pids.index(replicas[1].pid)
            created = await clients[first].call("session/create", {})
            listed = await clients[second].call("session/list", {})
            assert created["id"] in [s["id"] for s in listed["sessions"]]
        finally:
            await asyncio.gather(*(c.close() for c in clients))
        # Each replica announced itself in its own home.
        for replica in replicas:
            assert (replica.home / "server.json").is_file()


def test_a_second_server_without_reuse_port_cannot_take_the_port(tmp_path: Path, workspace: Path) -> None:
    port = free_port()
    with ServerProcess(tmp_path / "home0", workspace, args=("--reuse-port",), port=port):
        result = serve(tmp_path, "--port", str(port))
    assert result.returncode == 2
    assert f"Cannot listen on 127.0.0.1:{port}" in result.stderr


def test_reuse_port_with_port_zero_is_refused(tmp_path: Path) -> None:
    result = serve(tmp_path, "--reuse-port", "--port", "0")
    assert result.returncode == 2
    assert "server.reuse_port needs a port" in result.stderr
    assert not (tmp_path / "home" / "server.json").exists()


@pytest.mark.parametrize("url", ["mysql://me:secret@db/cowork", "postgresql://", "127.0.0.1:5432/test"])
def test_a_bad_database_url_is_refused_without_echoing_it(tmp_path: Path, url: str) -> None:
    result = serve(tmp_path, "--database-url", url)
    assert result.returncode == 2
    assert "command line: database_url: not a database URL Cowork can use" in result.stderr
    assert "secret" not in result.stderr


def test_the_database_url_flag_wins_over_the_environment(tmp_path: Path) -> None:
    # A good COWORK_DATABASE_URL does not hide a bad flag: the flag is the one read.
    env = {**os.environ, "COWORK_HOME": str(tmp_path / "home"), "COWORK_DATABASE_URL": "sqlite:///x.db"}
    result = subprocess.run(
        [sys.executable, "-m", "cowork", "serve", "--workspace", str(tmp_path), "--database-url", "oracle://x"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 2
    assert "(oracle://…)" in result.stderr
