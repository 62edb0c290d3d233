"""`cowork backup` while a turn streams, and `cowork restore` of it: consistent, checked, nothing lost."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.sqlite_file]


def cowork(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COWORK_")} | {"COWORK_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "cowork", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def named(folder: Path, prefix: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(prefix))


async def test_a_backup_taken_mid_turn_restores_consistently(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    home = tmp_path / "home"
    backup = tmp_path / "saved.db"
    mock_llm.set_script([MockResponse(text="done"), MockResponse(text="slow " * 600, chunk_size=5, chunk_delay_s=0.01)])
    with ServerProcess(home, workspace, env=provider_env("openai", mock_llm.openai_base_url)) as server:
        client = await EventClient.connect(server.address)
        sid = (await client.call("session/create", {}))["id"]
        first = await client.call("turn/start", {"sessionId": sid, "text": "one", "clientMessageId": "1"})
        assert await client.wait_turn_end(first["operationId"]) == "done"
        streaming = await client.call("turn/start", {"sessionId": sid, "text": "two", "clientMessageId": "2"})
        await client.wait_for(lambda evs: sum(e.type == "model_stream_chunk" for e in evs) >= 10)

        taken = cowork(home, "backup", str(backup))  # while the answer streams
        assert taken.returncode == 0, taken.stderr
        assert "Backed up 1 sessions" in taken.stdout and str(backup) in taken.stdout
        assert (backup.stat().st_mode & 0o777) == 0o600
        assert named(tmp_path, "saved") == ["saved.db"]  # one file, no -wal or -shm beside it
        again = cowork(home, "backup", str(backup))
        assert again.returncode == 1 and "exists already" in again.stderr

        refused = cowork(home, "restore", str(backup), "--yes")  # the server still runs
        assert refused.returncode == 1 and "cowork server stop" in refused.stderr
        await client.call("turn/cancel", {"sessionId": sid})
        await client.wait_turn_end(streaming["operationId"])
        await client.close()

    not_db = tmp_path / "not.db"
    not_db.write_text("hello", encoding="utf-8")
    assert cowork(home, "restore", str(not_db), "--yes").returncode == 1
    unconfirmed = cowork(home, "restore", str(backup))
    assert unconfirmed.returncode == 2 and "--yes" in unconfirmed.stderr
    restored = cowork(home, "restore", str(backup), "--yes")
    assert restored.returncode == 0, restored.stderr
    assert len(named(home, "cowork.db.before-restore-")) == 1 and "kept as" in restored.stdout
    with sqlite3.connect(home / "cowork.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    with ServerProcess(home, workspace, env=provider_env("openai", mock_llm.openai_base_url)) as server:
        client = await EventClient.connect(server.address)
        got = await client.call("session/get", {"sessionId": sid})
        assert [m["text"] for m in got["messages"]][:2] == ["one", "done"]
        # The turn that was streaming when the copy was taken: recovered as interrupted, resumable.
        info = await client.call("operation/get", {"operationId": streaming["operationId"]})
        assert info["status"] == "interrupted"
        replay = await client.call("events/replay", {"sessionId": sid, "afterSeq": 0, "limit": 10_000})
        assert [e["seq"] for e in replay["events"]] == list(range(1, len(replay["events"]) + 1))
        await client.close()


def test_a_backup_to_a_file_name_with_uri_characters(tmp_path: Path) -> None:
    from cowork.store import Database
    from cowork.store._backup import backup_database, check_backup

    db = Database.sqlite(tmp_path / "cowork.db")
    db.migrate()
    db.close()
    odd = tmp_path / "a dir#1" / "backup?v=2.db"
    odd.parent.mkdir()
    info = backup_database(tmp_path / "cowork.db", odd)
    assert (info.path, info.sessions) == (odd, 0) and check_backup(odd).revision == info.revision
    assert named(odd.parent, "") == ["backup?v=2.db"]


@pytest.mark.parametrize("command", [["backup"], ["restore", "saved.db", "--yes"]])
def test_on_postgresql_backup_and_restore_name_pg_dump_and_touch_nothing(tmp_path: Path, command: list[str]) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("COWORK_")} | {
        "COWORK_HOME": str(home),
        "COWORK_DATABASE_URL": "postgresql://127.0.0.1:5432/test",
    }
    done = subprocess.run(
        [sys.executable, "-m", "cowork", *command], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2 and "pg_dump" in done.stderr, done.stderr
    assert not (home / "cowork.db").exists()
