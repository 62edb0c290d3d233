"""Crash recovery with a real server process and SIGKILL: nothing lost, nothing done twice without asking."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from cowork.protocol import ApprovalRequested, SessionEvent
from cowork.store import Connection
from cowork.testing.client import EventClient
from cowork.testing.core import TEST_TOOLS_PLUGIN, marks
from cowork.testing.mockllm import MockLLMServer, MockRequest, MockResponse, MockToolCall
from cowork.testing.postgres import store_of
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def server_for(tmp_path: Path, workspace: Path, mock: MockLLMServer, *, auto_approve: list[str]) -> ServerProcess:
    env = provider_env("openai", mock.openai_base_url) | {
        "COWORK_TOOLS__PLUGINS": json.dumps([TEST_TOOLS_PLUGIN]),
        "COWORK_TOOLS__AUTO_APPROVE": json.dumps(auto_approve),
        "COWORK_TEST_MARKS": str(tmp_path / "marks.txt"),
    }
    return ServerProcess(tmp_path / "home", workspace, env=env)


async def replay(client: EventClient, session_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        page = await client.call("events/replay", {"sessionId": session_id, "afterSeq": after, "limit": 10_000})
        events += page["events"]
        if not page["hasMore"]:
            return events
        after = events[-1]["seq"]


def wire(event: SessionEvent) -> dict[str, Any]:
    return event.model_dump(mode="json", by_alias=True, exclude_none=True)


def assert_log_consistent(log: list[dict[str, Any]], received: list[SessionEvent]) -> None:
    """No gap, no duplicate, and everything a client was told before the kill is in the log unchanged."""
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    by_seq = {e["seq"]: e for e in log}
    for event in received:
        assert by_seq.get(event.seq) == wire(event), f"event {event.seq} was told but is not in the log as told"


async def wait_for(client: EventClient, predicate: Any, within: float = 30) -> None:
    await client.wait_for(predicate, within=within)


def of_type(events: list[SessionEvent], kind: str) -> list[Any]:
    return [e.payload for e in events if e.type == kind]


async def test_kill_mid_stream_mid_tool_and_while_waiting(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    marks_file = tmp_path / "marks.txt"
    server = server_for(tmp_path, workspace, mock_llm, auto_approve=["sleep"])

    # (a) Killed while the model streams.
    mock_llm.set_script([MockResponse(text="slow " * 400, chunk_size=5, chunk_delay_s=0.01)])
    server.start()
    client = await EventClient.connect(server.address)
    sid = (await client.call("session/create", {}))["id"]
    op_a = (await client.call("turn/start", {"sessionId": sid, "text": "talk", "clientMessageId": "a"}))["operationId"]
    await wait_for(client, lambda evs: len(of_type(evs, "model_stream_chunk")) >= 20)
    received = list(client.events)
    server.kill()
    await client.close()

    server.start()
    client = await EventClient.connect(server.address)
    log = await replay(client, sid)
    assert_log_consistent(log, received)
    info = await client.call("operation/get", {"operationId": op_a})
    assert info["status"] == "interrupted" and info["toolCalls"] == []
    assert log[-1]["type"] == "operation_status" and log[-1]["payload"]["status"] == "interrupted"
    mock_llm.set_script([MockResponse(text="finished after the crash")])
    subscribed = await client.call("session/subscribe", {"sessionId": sid})
    assert (await client.call("operation/resume", {"operationId": op_a}))["status"] == "running"
    assert await client.wait_turn_end(op_a) == "done"
    assert (await client.call("operation/get", {"operationId": op_a}))["summary"] == "finished after the crash"
    assert subscribed["pending"] == {"approvals": [], "questions": []}

    # (b) Killed while a tool sleeps: the finished call is not re-run, the unfinished one is asked about again.
    mock_llm.set_script(
        [
            MockResponse(
                tool_calls=[
                    MockToolCall(name="mark", arguments={"label": "b-done"}),
                    MockToolCall(name="sleep", arguments={"label": "b-sleep", "seconds": 3}),
                ]
            ),
            MockResponse(text="both calls complete"),
        ]
    )
    await client.call("session/unsubscribe", {"sessionId": sid})
    client.events.clear()
    op_b = (await client.call("turn/start", {"sessionId": sid, "text": "mark and sleep", "clientMessageId": "b"}))[
        "operationId"
    ]
    # `mark` is not auto-approved: approve it, then wait until the sleep is under way.
    await wait_for(client, lambda evs: len(of_type(evs, "approval_requested")) == 1)
    (approval,) = of_type(client.events, "approval_requested")
    await client.call("approval/respond", {"requestId": approval.request_id, "approved": True})
    await wait_for(client, lambda evs: any(r.name == "mark" for r in of_type(evs, "tool_result")))
    assert "start b-sleep" in marks(marks_file) and "end b-sleep" not in marks(marks_file)
    received = list(client.events)
    server.kill()
    await client.close()

    server.start()
    client = await EventClient.connect(server.address)
    assert_log_consistent(await replay(client, sid), received)
    info = await client.call("operation/get", {"operationId": op_b})
    assert info["status"] == "interrupted"
    assert {c["name"]: c["status"] for c in info["toolCalls"]} == {"mark": "finished", "sleep": "interrupted"}
    await client.call("session/subscribe", {"sessionId": sid})
    await client.call("operation/resume", {"operationId": op_b})
    await wait_for(client, lambda evs: len(of_type(evs, "approval_requested")) == 1)
    (interrupted,) = of_type(client.events, "tool_interrupted")
    assert interrupted.name == "sleep" and interrupted.action == "ask"
    (again,) = of_type(client.events, "approval_requested")
    assert again.name == "sleep" and again.rerun
    await client.call("approval/respond", {"requestId": again.request_id, "approved": True})
    assert await client.wait_turn_end(op_b) == "done"
    assert marks(marks_file).count("mark b-done") == 1  # finished before the kill: never run again
    assert marks(marks_file).count("start b-sleep") == 2 and marks(marks_file).count("end b-sleep") == 1
    results = {r["tool_call_id"]: r["content"] for r in mock_llm.requests[-1].last_tool_results}
    assert sorted(results.values()) == ["marked b-done", "slept 3.0s"]

    # (c) Killed while waiting for approval: still waiting after the restart, and approving then works.
    mock_llm.set_script(
        [MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "c"})]), MockResponse(text="c done")]
    )
    client.events.clear()
    op_c = (await client.call("turn/start", {"sessionId": sid, "text": "mark c", "clientMessageId": "c"}))[
        "operationId"
    ]
    await wait_for(client, lambda evs: len(of_type(evs, "approval_requested")) == 1)
    received = list(client.events)
    server.kill()
    await client.close()

    server.start()
    client = await EventClient.connect(server.address)
    assert_log_consistent(await replay(client, sid), received)
    assert (await client.call("operation/get", {"operationId": op_c}))["status"] == "waiting_for_human"
    subscribed = await client.call("session/subscribe", {"sessionId": sid})
    (pending,) = subscribed["pending"]["approvals"]
    assert pending["name"] == "mark" and pending["operationId"] == op_c
    got = await client.call("session/get", {"sessionId": sid})
    assert got["session"]["activeOperationId"] == op_c and got["pending"] == subscribed["pending"]
    await client.call("approval/respond", {"requestId": pending["requestId"], "approved": True})
    assert await client.wait_turn_end(op_c) == "done"
    assert marks(marks_file).count("mark c") == 1
    await client.close()
    server.stop()


STEPS = 10


def ten_step_script(request: MockRequest) -> MockResponse:
    """Step i (from the tool results so far): mark i (side effects), a short sleep, and peek i (read-only)."""
    since_user: list[dict[str, Any]] = []
    for message in request.messages:
        since_user = [] if message["role"] == "user" else [*since_user, message]
    done = len([m for m in since_user if m["role"] == "tool"]) // 3
    if done >= STEPS:
        return MockResponse(text="all ten steps done", chunk_size=4)
    return MockResponse(
        text=f"step {done}",
        chunk_size=2,
        tool_calls=[
            MockToolCall(name="mark", arguments={"label": str(done)}),
            MockToolCall(name="sleep", arguments={"label": str(done), "seconds": 0.1}),
            MockToolCall(name="peek", arguments={"label": str(done)}),
        ],
    )


async def stop(task: asyncio.Task[None]) -> None:
    # On Python 3.11 `asyncio.wait_for` can swallow a cancellation that lands just as the awaited event arrives
    # (fixed in 3.12): the approver then waits again, for up to an hour, and a plain `await task` hangs the run.
    # Cancel until the task has really ended.
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=0.5)
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def approve_reruns(client: EventClient, operation_id: str) -> None:
    """Approve each re-asked call as it is requested, as a user would after reading the prompt."""
    answered: set[str] = set()
    while True:
        for request in of_type(client.events, "approval_requested"):
            if request.operation_id == operation_id and request.request_id not in answered:
                assert request.rerun, "only an interrupted call is asked about (mark and sleep are auto-approved)"
                answered.add(request.request_id)
                await client.call("approval/respond", {"requestId": request.request_id, "approved": True})
        await client.wait_for(
            lambda evs: any(
                isinstance(e.payload, ApprovalRequested) and e.payload.request_id not in answered for e in evs
            ),
            within=3600,
        )


@pytest.mark.timeout(900)  # thirty kill-restart cycles; each start is a fresh server process
async def test_randomized_kill_points(tmp_path: Path, workspace: Path, mock_llm: MockLLMServer) -> None:
    """Kill the server at random moments of scripted ten-step operations; after every restart the log, the
    ledger and the side effects must be consistent, and resuming must finish the work."""
    rng = random.Random(20261121)
    marks_file = tmp_path / "marks.txt"
    mock_llm.set_script(ten_step_script)
    server = server_for(tmp_path, workspace, mock_llm, auto_approve=["mark", "sleep"])
    server.start()
    client = await EventClient.connect(server.address)
    try:
        sid = (await client.call("session/create", {}))["id"]
        kill_points = 0
        operations = 0
        # How many times a kill caught each side-effect call under way: each such time, the user's approval may run
        # it once more (a call can be caught again in the moment between its effect and its result being saved).
        caught: Counter[str] = Counter()

        while kill_points < 30:
            operations += 1
            marks_file.write_text("", encoding="utf-8")
            caught.clear()
            started = await client.call(
                "turn/start",
                {"sessionId": sid, "text": f"ten steps #{operations}", "clientMessageId": f"op{operations}"},
            )
            op = started["operationId"]
            await asyncio.sleep(rng.uniform(0.05, 1.2))
            while True:
                received = list(client.events)
                server.kill()
                kill_points += 1
                await client.close()
                server.start()
                client = await EventClient.connect(server.address)
                log = await replay(client, sid)
                assert_log_consistent(log, received)
                info = await client.call("operation/get", {"operationId": op})
                # Killed while a re-run approval was waiting for its answer: the request survives the restart.
                waiting = info["status"] == "waiting_for_human"
                assert info["status"] in ("interrupted", "done") or waiting, (info["status"], info.get("errorMessage"))
                if waiting:
                    pending = info["pending"]["approvals"]
                    assert pending and all(a["rerun"] for a in pending), info["pending"]
                for call in info["toolCalls"]:
                    # `approved`: the answer was committed but the call had not started; resuming runs it.
                    assert call["status"] in ("finished", "interrupted", "awaiting_approval", "approved"), call
                    assert (call["status"] == "finished") == (call.get("result") is not None)
                    if call["status"] == "interrupted" and call["name"] in ("mark", "sleep"):
                        caught[f"{call['name']} {call['arguments']['label']}"] += 1
                if info["status"] == "done":
                    break
                client.events.clear()
                await client.call("session/subscribe", {"sessionId": sid})
                approver = asyncio.get_running_loop().create_task(approve_reruns(client, op))
                if waiting:
                    for approval in info["pending"]["approvals"]:
                        await client.call("approval/respond", {"requestId": approval["requestId"], "approved": True})
                else:
                    await client.call("operation/resume", {"operationId": op})
                if rng.random() < 0.25:
                    # Sometimes let it finish undisturbed.
                    assert await client.wait_turn_end(op, within=60) == "done"
                    await stop(approver)
                    break
                await asyncio.sleep(rng.uniform(0.05, 1.2))
                await stop(approver)
            lines = marks(marks_file)
            final = await client.call("operation/get", {"operationId": op})
            assert final["status"] == "done", final
            for step in range(STEPS):
                # Exactly once, plus at most once for each time a kill caught it mid-call and the user approved
                # running it again.
                assert 1 <= lines.count(f"mark {step}") <= 1 + caught[f"mark {step}"], (step, lines, caught)
            final = await client.call("operation/get", {"operationId": op})
            assert final["status"] == "done" and final["summary"] == "all ten steps done"
            assert {c["status"] for c in final["toolCalls"]} == {"finished"}
            assert len(final["toolCalls"]) == 3 * STEPS
        print(f"kill points tried: {kill_points} over {operations} operations")
        assert kill_points >= 30
    finally:
        await client.close()
        server.stop()


async def test_an_answer_committed_just_before_a_kill_is_resumable(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    """The process died after an approval was committed but before the operation set off again: after the restart
    the operation is not left waiting with nothing to answer; it is interrupted, and resuming runs the approved call
    once."""
    marks_file = tmp_path / "marks.txt"
    server = server_for(tmp_path, workspace, mock_llm, auto_approve=[])
    mock_llm.set_script(
        [MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "d"})]), MockResponse(text="d done")]
    )
    with server:  # stopped at the end, also when an assertion fails
        await answer_then_die_and_resume(server, tmp_path, marks_file)


async def answer_then_die_and_resume(server: ServerProcess, tmp_path: Path, marks_file: Path) -> None:
    client = await EventClient.connect(server.address)
    sid = (await client.call("session/create", {}))["id"]
    op = (await client.call("turn/start", {"sessionId": sid, "text": "mark d", "clientMessageId": "d"}))["operationId"]
    await wait_for(client, lambda evs: len(of_type(evs, "approval_requested")) == 1)
    (approval,) = of_type(client.events, "approval_requested")
    server.kill()
    await client.close()

    # What `approval/respond` commits, without what follows it (the kill came in between).
    def commit_answer(conn: Connection) -> None:
        conn.execute(
            sa.text("UPDATE human_requests SET status = 'resolved', response = :response WHERE id = :id"),
            {"response": json.dumps({"approved": True}), "id": approval.request_id},
        )
        conn.execute(sa.text("UPDATE tool_calls SET status = 'approved' WHERE operation_id = :op"), {"op": op})

    store = store_of(tmp_path / "home")
    try:
        store.write_sync(commit_answer)
    finally:
        store.close()

    server.start()
    client = await EventClient.connect(server.address)
    info = await client.call("operation/get", {"operationId": op})
    assert info["status"] == "interrupted" and info["pending"] == {"approvals": [], "questions": []}
    assert [c["status"] for c in info["toolCalls"]] == ["approved"]
    await client.call("session/subscribe", {"sessionId": sid})
    assert (await client.call("operation/resume", {"operationId": op}))["status"] == "running"
    assert await client.wait_turn_end(op) == "done"
    assert marks(marks_file).count("mark d") == 1
    await client.close()
