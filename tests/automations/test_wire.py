"""Automations through a real server process: approvals that park a run and reach a connected client as a
notification, and SIGKILL at points in a flow (finished steps are never run again)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cowork.clients.connection import RpcError
from cowork.testing.client import EventClient
from cowork.testing.core import TEST_TOOLS_PLUGIN, marks
from cowork.testing.mockllm import MockLLMServer
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MARKED = """
name: marked
steps:
  - id: first
    type: toolCall
    tool: mark
    arguments: {label: one}
  - id: pause
    type: delay
    seconds: 1.5
  - id: slow
    type: toolCall
    tool: sleep
    arguments: {label: two, seconds: 60}
  - id: last
    type: toolCall
    tool: mark
    arguments: {label: three}
"""


def server_for(tmp_path: Path, workspace: Path, mock: MockLLMServer) -> ServerProcess:
    env = provider_env("openai", mock.openai_base_url) | {
        "COWORK_TOOLS__PLUGINS": json.dumps([TEST_TOOLS_PLUGIN]),
        "COWORK_TEST_MARKS": str(tmp_path / "marks.txt"),
    }
    return ServerProcess(tmp_path / "home", workspace, env=env)


async def until(predicate: Callable[[], Any], within: float = 30) -> Any:
    async def wait() -> Any:
        while not (found := predicate()):  # noqa: ASYNC110 - polls what the server wrote
            await asyncio.sleep(0.05)
        return found

    return await asyncio.wait_for(wait(), within)


async def run_state(client: EventClient, run_id: str) -> dict[str, Any]:
    [run] = (await client.call("automation/runs", {"runId": run_id}))["runs"]
    return run


async def until_status(client: EventClient, run_id: str, *statuses: str, within: float = 30) -> dict[str, Any]:
    async def wait() -> dict[str, Any]:
        while (run := await run_state(client, run_id))["status"] not in statuses:  # noqa: ASYNC110 - polls the server
            await asyncio.sleep(0.1)
        return run

    return await asyncio.wait_for(wait(), within)


async def test_a_parked_run_notifies_a_connected_client_and_approving_resumes_it(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    with server_for(tmp_path, workspace, mock_llm) as server:
        client = await EventClient.connect(server.address)
        await client.call("tool/setPolicy", {"name": "mark", "policy": "always"})
        info = await client.call("automation/create", {"text": MARKED.replace("seconds: 60", "seconds: 0.1")})
        assert info["name"] == "marked" and info["tool"] == "flow_marked"
        run = await client.call("automation/run", {"id": "marked"})

        def delivered() -> list[dict[str, Any]]:
            return [p for m, p in client.notifications if m == "notification/delivered"]

        [note] = await until(delivered)
        assert note["kind"] == "automation_approval" and note["tier"] == "urgent" and note["runId"] == run["id"]
        assert "mark" in note["body"]
        waiting = await until_status(client, run["id"], "waiting_for_human")
        assert waiting["pending"]["stepId"] == "first" and waiting["pending"]["tool"] == "mark"
        assert marks(tmp_path / "marks.txt") == []

        def pushed() -> list[dict[str, Any]]:
            return [p for m, p in client.notifications if m == "automation/run" and p["id"] == run["id"]]

        # Run announcements are batched (50 ms), so the push may trail the poll that saw the parked run.
        await until(lambda: pushed() and pushed()[-1]["status"] == "waiting_for_human")

        await client.call("automation/respond", {"runId": run["id"], "approve": True})
        # `last` is a mark too: the policy asks again for that step, and only for that one.
        waiting = await until_status(client, run["id"], "waiting_for_human")
        assert waiting["pending"]["stepId"] == "last"
        await client.call("automation/respond", {"runId": run["id"], "approve": True})
        done = await until_status(client, run["id"], "done", "failed")
        assert done["status"] == "done", done
        assert marks(tmp_path / "marks.txt") == ["mark one", "start two", "end two", "mark three"]
        listed = await client.call("notification/list", {})
        assert [n["kind"] for n in listed["notifications"]] == ["automation_approval", "automation_approval"]
        # Answering the run answered its approval notifications: no client keeps offering them.
        assert [n["response"] for n in listed["notifications"]] == ["accept", "accept"]
        assert (await client.call("notification/list", {"unanswered": True}))["notifications"] == []
        answered = await client.call("notification/respond", {"id": note["id"], "response": "dismiss"})
        assert answered["response"] == "dismiss"
        with pytest.raises(RpcError) as unknown:
            await client.call("notification/respond", {"id": "nope", "response": "dismiss"})
        assert unknown.value.code == "notification_not_found"
        await client.close()


async def test_sigkill_in_a_delay_resumes_and_in_a_side_effecting_step_asks_before_running_it_again(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    marks_file = tmp_path / "marks.txt"
    server = server_for(tmp_path, workspace, mock_llm)
    server.start()
    try:
        client = await EventClient.connect(server.address)
        await client.call("automation/create", {"text": MARKED})
        run = await client.call("automation/run", {"id": "marked"})
        # Killed in the delay, after `first` finished.
        await until(lambda: marks(marks_file) == ["mark one"])
        # The step's effect comes before its record: wait for the record too (on PostgreSQL it can trail the file).
        for _ in range(200):
            state = await until_status(client, run["id"], "running")
            if [s["status"] for s in state["steps"]][:1] == ["done"]:
                break
            await asyncio.sleep(0.05)
        assert [s["status"] for s in state["steps"]][:1] == ["done"]
        server.kill()
        await client.close()

        server.restart()
        client = await EventClient.connect(server.address)
        # The delay goes on by itself; `first` is not run again; killed again inside `slow` (side effects).
        await until(lambda: marks(marks_file) == ["mark one", "start two"])
        server.kill()
        await client.close()

        server.restart()
        client = await EventClient.connect(server.address)
        state = await until_status(client, run["id"], "interrupted")
        assert [(s["stepId"], s["status"]) for s in state["steps"]] == [
            ("first", "done"), ("pause", "done"), ("slow", "interrupted"),
        ]  # fmt: skip
        assert state["error"]["code"] == "interrupted"
        await asyncio.sleep(0.5)
        assert marks(marks_file) == ["mark one", "start two"]  # nothing re-ran by itself

        resumed = await client.call("automation/resume", {"runId": run["id"]})
        assert resumed["status"] == "waiting_for_human" and resumed["pending"]["stepId"] == "slow"
        assert "may or may not" in resumed["pending"]["reason"]
        with pytest.raises(RpcError) as again:
            await client.call("automation/resume", {"runId": run["id"]})
        assert again.value.code == "not_resumable"
        await client.call("automation/cancel", {"runId": run["id"]})
        cancelled = await run_state(client, run["id"])
        assert cancelled["status"] == "cancelled"
        assert marks(marks_file) == ["mark one", "start two"]
        await client.close()
    finally:
        server.stop()
