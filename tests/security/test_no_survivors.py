"""No command outlives a killed server: SIGKILL a real server mid-command, and nothing of the command lives on to
do its work after the crash; the re-run prompt says the earlier run was stopped."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import anyio
import psutil
import pytest

from cowork.protocol import ApprovalRequested, ToolCallStatus
from cowork.runtime._runner import rerun_reason
from cowork.runtime._state import LedgerEntry
from cowork.sandbox import find_bwrap, runs_directory
from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import ServerProcess, provider_env

pytestmark = pytest.mark.anyio
needs_bwrap = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed (apt install bubblewrap)")


def processes_with(token: str) -> list[psutil.Process]:
    """Live processes whose command line mentions `token` (unique to one test)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if proc.info["status"] != psutil.STATUS_ZOMBIE and token in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


async def eventually(condition: Callable[[], bool], within: float = 20) -> bool:
    """Poll `condition()` until it holds or about `within` seconds pass; whether it held."""
    for _ in range(int(within / 0.05)):
        if condition():
            return True
        await anyio.sleep(0.05)
    return condition()


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_bwrap)])
async def test_a_command_running_when_the_server_is_killed_never_finishes_its_work(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer, sandbox: bool
) -> None:
    token = f"survivor{os.getpid()}x{int(sandbox)}"
    started, gate, marker = (workspace / f"{token}.{suffix}" for suffix in ("started", "go", "done"))
    # The shell runs a second shell (a grandchild of the server) that does the work once the test opens the gate:
    # the parent-death signal only reaches the first one.
    inner = f"until [ -e {gate} ]; do sleep 0.05; done; sleep 0.1; touch {marker}"
    command = f"touch {started}; bash -c '{inner}'; echo {token} finished"
    mock_llm.set_script(
        [MockResponse(tool_calls=[MockToolCall(name="bash", arguments={"command": command})]), MockResponse(text="ok")]
    )
    env = provider_env("openai", mock_llm.openai_base_url) | {
        "COWORK_TOOLS__SANDBOX__ENABLED": json.dumps(sandbox),
    }
    server = ServerProcess(tmp_path / "home", workspace, env=env)
    server.start()
    client = await EventClient.connect(server.address)
    try:
        sid = (await client.call("session/create", {}))["id"]
        op = (await client.call("turn/start", {"sessionId": sid, "text": "work", "clientMessageId": "w"}))[
            "operationId"
        ]
        await client.wait_for(lambda evs: any(isinstance(e.payload, ApprovalRequested) for e in evs), within=30)
        (approval,) = [e.payload for e in client.events if isinstance(e.payload, ApprovalRequested)]
        await client.call("approval/respond", {"requestId": approval.request_id, "approved": True})
        assert await eventually(lambda: started.exists() and len(processes_with(token)) >= 2)
        assert list(runs_directory(tmp_path / "home").glob("*.json"))  # on record while it runs

        server.kill()
        await client.close()
        if not sandbox:
            # The kernel killed the shell Cowork started; its child lives on until the next start stops it.
            assert await eventually(lambda: len(processes_with(token)) == 1)
        else:
            # bubblewrap took everything in the sandbox with it.
            assert await eventually(lambda: processes_with(token) == [])

        server.start()
        client = await EventClient.connect(server.address)
        assert await eventually(lambda: processes_with(token) == [], within=10)
        assert list(runs_directory(tmp_path / "home").glob("*.json")) == []
        gate.touch()
        await anyio.sleep(1.0)  # ten times what the work would take once the gate is open
        assert not marker.exists()
        assert processes_with(token) == []

        info = await client.call("operation/get", {"operationId": op})
        assert info["status"] == "interrupted" and [c["status"] for c in info["toolCalls"]] == ["interrupted"]
        client.events.clear()
        await client.call("session/subscribe", {"sessionId": sid})
        await client.call("operation/resume", {"operationId": op})
        await client.wait_for(lambda evs: any(isinstance(e.payload, ApprovalRequested) for e in evs), within=30)
        (again,) = [e.payload for e in client.events if isinstance(e.payload, ApprovalRequested)]
        assert again.rerun and again.name == "bash"
        assert again.reason.startswith("It was still running when Cowork stopped and has been stopped;"), again.reason
        await client.call("approval/respond", {"requestId": again.request_id, "approved": False})
        assert await client.wait_turn_end(op, within=30) == "done"
        assert not marker.exists()
    finally:
        await client.close()
        server.stop()
        for proc in processes_with(token):
            proc.kill()


def interrupted(meta: dict[str, object]) -> LedgerEntry:
    return LedgerEntry("c", 1, "bash", {"command": "make"}, True, ToolCallStatus.INTERRUPTED, meta=meta)


@pytest.mark.parametrize(
    ("earlier", "reason"),
    [
        (
            {"state": "finished", "exitCode": 0},
            "It finished (exit code 0) before Cowork stopped, but its result was not saved; running it again will "
            "repeat its effects.",
        ),
        (
            {"state": "stopped"},
            "It was still running when Cowork stopped and has been stopped; it may have done part of its work. "
            "Running it again may repeat its effects.",
        ),
        (
            {"state": "running"},
            "It was still running when Cowork stopped and could not be stopped: it may still be running. Running it "
            "again may repeat its effects.",
        ),
        (None, "It was running when Cowork stopped; running it again may repeat its effects."),
    ],
)
def test_the_rerun_prompt_says_how_the_earlier_run_ended(earlier: dict[str, object] | None, reason: str) -> None:
    assert rerun_reason(interrupted({"earlierRun": earlier} if earlier else {})) == reason
