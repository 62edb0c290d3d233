"""Cowork's home is private to the user: a real server under umask 022 leaves nothing other users can read.

The conversations (the database and its WAL), the logs, the token and the discovery file are 0600 in a 0700 home,
and a home an older Cowork left readable is tightened at start. Files the agent writes in the workspace keep the
modes the umask gives them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cowork.testing.client import EventClient
from cowork.testing.files import mode, umask
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import ServerProcess, provider_env
from cowork.tools import cap_output

pytestmark = [pytest.mark.anyio]

UMASK = 0o022
DATABASE_FILES = (
    () if os.environ.get("COWORK_TEST_ENGINE") == "postgres" else ("cowork.db", "cowork.db-wal", "cowork.db-shm")
)
"""On PostgreSQL (the suite's second half) the store is not a file in the home."""
PRIVATE_FILES = (*DATABASE_FILES, "logs/server.log", "auth/token", "server.json")


def server_for(tmp_path: Path, workspace: Path, mock: MockLLMServer, home: Path | None = None) -> ServerProcess:
    env = provider_env("openai", mock.openai_base_url) | {
        "COWORK_TOOLS__AUTO_APPROVE": json.dumps(["write"]),
        # Small enough that reading big.txt is cut and its full text saved under tool-output/.
        "COWORK_TOOLS__OUTPUT_LIMIT_CHARS": "1000",
    }
    return ServerProcess(home or tmp_path / "home", workspace, env=env, umask=UMASK)


def write_big_file(workspace: Path) -> None:
    text = "".join(f"line {i} of a file too long to keep inline\n" for i in range(200))
    (workspace / "big.txt").write_text(text, encoding="utf-8")


async def one_turn(server: ServerProcess, mock: MockLLMServer) -> str:
    """A turn that writes a workspace file and reads one too long to keep inline; returns the session id."""
    mock.set_script(
        [
            MockResponse(
                tool_calls=[
                    MockToolCall(name="write", arguments={"filePath": "answer.txt", "content": "42\n"}),
                    MockToolCall(name="read", arguments={"filePath": "big.txt"}),
                ]
            ),
            MockResponse(text="Done."),
        ]
    )
    client = await EventClient.connect(server.address)
    try:
        sid: str = (await client.call("session/create", {}))["id"]
        started = await client.call("turn/start", {"sessionId": sid, "text": "write and read", "clientMessageId": "m1"})
        assert await client.wait_turn_end(started["operationId"]) == "done"
    finally:
        await client.close()
    return sid


@pytest.mark.slow
async def test_real_server_under_umask_022_keeps_home_private(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    write_big_file(workspace)
    (workspace / "answer.txt").write_text("41\n", encoding="utf-8")  # what the write replaces is kept for /undo
    (workspace / "answer.txt").chmod(0o644)
    server = server_for(tmp_path, workspace, mock_llm)
    home = server.home
    with server:
        sid = await one_turn(server, mock_llm)
        # Checked while the server runs: a clean shutdown folds the WAL back and removes it and the SHM.
        assert mode(home) == 0o700
        assert {name: mode(home / name) for name in PRIVATE_FILES} == dict.fromkeys(PRIVATE_FILES, 0o600)
        assert {name: mode(home / name) for name in ("logs", "auth", "tool-output", "run")} == dict.fromkeys(
            ("logs", "auth", "tool-output", "run"), 0o700
        )
        saved = list((home / "tool-output" / sid).iterdir())
        assert len(saved) == 1 and "line 199 of" in saved[0].read_text(encoding="utf-8")
        assert mode(home / "tool-output" / sid) == 0o700
        assert mode(saved[0]) == 0o600
        # The checkpoint of the write keeps a copy of what the folder held: private too.
        kept = [p for p in (home / "checkpoints").rglob("*") if p.is_file()]
        assert any("objects" in p.parts for p in kept)
        assert {p: mode(p) & 0o077 for p in kept} == dict.fromkeys(kept, 0)
        assert {mode(p) for p in [home / "checkpoints", *(home / "checkpoints").rglob("*")] if p.is_dir()} == {0o700}
    # The agent's own files are the user's: the server did not change its umask to make the home private.
    assert (workspace / "answer.txt").read_text(encoding="utf-8") == "42\n"
    assert mode(workspace / "answer.txt") == 0o644


@pytest.mark.slow
async def test_a_home_left_readable_is_tightened_at_start(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    write_big_file(workspace)
    parent = tmp_path / "parent"
    parent.mkdir()
    parent.chmod(0o755)
    server = server_for(tmp_path, workspace, mock_llm, home=parent / "home")
    home = server.home
    server.start()
    sid = await one_turn(server, mock_llm)
    # SIGKILL keeps the WAL, the SHM and a stale server.json, as an older Cowork that crashed would leave them.
    server.kill()
    left = [*PRIVATE_FILES, f"tool-output/{sid}"]
    assert all((home / name).exists() for name in left)
    for path in [home, *(home / name for name in ("logs", "auth", "tool-output", "run", f"tool-output/{sid}"))]:
        path.chmod(0o755)
    for path in [*(home / name for name in PRIVATE_FILES), *(home / "tool-output" / sid).iterdir()]:
        path.chmod(0o644)
    (home / "config.toml").write_text("# the user's own file\n", encoding="utf-8")
    (home / "config.toml").chmod(0o644)

    with server:
        # Checked before any request: tightening happens at start, not when a file is next written.
        assert mode(home) == 0o700
        assert {name: mode(home / name) for name in PRIVATE_FILES} == dict.fromkeys(PRIVATE_FILES, 0o600)
        assert mode(home / "tool-output" / sid) == 0o700
        assert [mode(p) for p in (home / "tool-output" / sid).iterdir()] == [0o600]
        assert mode(parent) == 0o755  # never a parent of the home
        assert mode(home / "config.toml") == 0o644  # the user's file, not ours to change
    said = "".join(server.output)
    if DATABASE_FILES:
        assert f"{home / 'cowork.db'} was readable by other users (mode 644); tightened to 0600." in said
    assert f"under {home} private to this user" in said


def test_cut_tool_output_is_saved_private_whatever_the_umask(tmp_path: Path) -> None:
    with umask(UMASK):
        cap_output("x" * 5000, limit=1000, save_dir=tmp_path / "tool-output" / "s1", stem="read-call_1")
    assert mode(tmp_path / "tool-output" / "s1") == 0o700
    assert mode(tmp_path / "tool-output" / "s1" / "read-call_1.txt") == 0o600


def test_saving_over_a_readable_tool_output_file_tightens_it(tmp_path: Path) -> None:
    folder = tmp_path / "s1"
    folder.mkdir(mode=0o755)
    (folder / "read-call_1.txt").write_text("old", encoding="utf-8")
    (folder / "read-call_1.txt").chmod(0o644)
    with umask(UMASK):
        cap_output("y" * 5000, limit=1000, save_dir=folder, stem="read-call_1")
    assert (mode(folder), mode(folder / "read-call_1.txt")) == (0o700, 0o600)
    assert (folder / "read-call_1.txt").read_text(encoding="utf-8") == "y" * 5000
