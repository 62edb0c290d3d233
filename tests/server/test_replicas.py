"""Two server processes (replicas) on one PostgreSQL schema: a client on B streams a turn started through A; when A
is killed mid-turn, B takes its operation over within the lease time and the turn resumes there, with no event lost
or told twice and no side effect repeated without asking; approvals and cancellation reach the operation wherever it
runs."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from cowork.clients.connection import RpcError
from cowork.protocol import SessionEvent
from cowork.testing.client import EventClient
from cowork.testing.core import TEST_TOOLS_PLUGIN, marks
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall
from cowork.testing.postgres import PostgresSchema, postgres_problem
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.slow,
    pytest.mark.own_postgres,
    pytest.mark.skipif(postgres_problem() is not None, reason=str(postgres_problem())),
]

LEASE = 1.5


@pytest.fixture
def schema() -> Any:
    with PostgresSchema() as made:
        yield made


def replica(tmp_path: Path, name: str, workspace: Path, mock: MockLLMServer, url: str) -> ServerProcess:
    env = provider_env("openai", mock.openai_base_url) | {
        "COWORK_DATABASE_URL": url,
        "COWORK_REPLICAS__LEASE_SECONDS": str(LEASE),
        "COWORK_TOOLS__PLUGINS": json.dumps([TEST_TOOLS_PLUGIN]),
        "COWORK_TOOLS__AUTO_APPROVE": json.dumps(["sleep"]),
        "COWORK_TEST_MARKS": str(tmp_path / "marks.txt"),
    }
    return ServerProcess(tmp_path / name, workspace, env=env)


async def until(predicate: Callable[[], bool], within: float = 20) -> None:
    async def wait() -> None:
        while not predicate():  # noqa: ASYNC110 - polls a file a tool writes
            await asyncio.sleep(0.05)

    await asyncio.wait_for(wait(), within)


def drop_listeners(schema: PostgresSchema) -> None:
    with psycopg.connect(schema.server, autocommit=True) as conn:
        dropped = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND query LIKE 'LISTEN%%' AND pid <> pg_backend_pid()"
        ).fetchall()
    assert len(dropped) >= 2


def of_type(events: list[SessionEvent], kind: str) -> list[Any]:
    return [e.payload for e in events if e.type == kind]


async def replay(client: EventClient, session_id: str) -> list[dict[str, Any]]:
    page = await client.call("events/replay", {"sessionId": session_id, "afterSeq": 0, "limit": 10_000})
    assert not page["hasMore"]
    return list(page["events"])


def assert_told_once_in_order(log: list[dict[str, Any]], told: list[SessionEvent], since: int) -> None:
    """What a live subscriber was told is the log after `since`: every event, once, in order, as stored."""
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    seqs = [e.seq for e in told]
    assert seqs == list(range(since + 1, since + 1 + len(seqs))), seqs
    by_seq = {e["seq"]: e for e in log}
    for event in told:
        assert by_seq[event.seq] == event.model_dump(mode="json", by_alias=True, exclude_none=True)


async def test_a_client_on_b_streams_a_turn_started_on_a_and_answers_its_approval(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer, schema: PostgresSchema
) -> None:
    mock_llm.set_script(
        [
            MockResponse(text="thinking " * 60, chunk_size=9, chunk_delay_s=0.005),
            MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "approved on b"})]),
            MockResponse(text="all done"),
        ]
    )
    with (
        replica(tmp_path, "a", workspace, mock_llm, schema.url) as a,
        replica(tmp_path, "b", workspace, mock_llm, schema.url) as b,
    ):
        on_a = await EventClient.connect(a.address)
        on_b = await EventClient.connect(b.address)
        sid = (await on_a.call("session/create", {}))["id"]
        since = (await on_b.call("session/subscribe", {"sessionId": sid}))["lastSeq"]
        first = await on_a.call("turn/start", {"sessionId": sid, "text": "talk", "clientMessageId": "1"})
        assert await on_b.wait_turn_end(first["operationId"]) == "done"
        assert "".join(p.text for p in of_type(on_b.events, "model_stream_chunk")) == "thinking " * 60

        # PostgreSQL drops every replica's listening connection: they listen again, and B's client misses nothing
        # committed meanwhile (the newest event is delivered again and the client reads the gap from the log).
        drop_listeners(schema)
        second = await on_a.call("turn/start", {"sessionId": sid, "text": "mark", "clientMessageId": "2"})
        await on_b.wait_for(lambda evs: len(of_type(evs, "approval_requested")) == 1)
        (asked,) = of_type(on_b.events, "approval_requested")
        await on_b.call("approval/respond", {"requestId": asked.request_id, "approved": True})
        assert await on_b.wait_turn_end(second["operationId"]) == "done"
        assert marks(tmp_path / "marks.txt") == ["mark approved on b"]

        # An approval answered on B while the operation runs on A (a safe call of the same step is under way):
        # B passes the answer to A, which runs the approved call beside the running one.
        mock_llm.set_script(
            [
                MockResponse(
                    tool_calls=[
                        MockToolCall(name="sleep", arguments={"label": "beside", "seconds": 3}),
                        MockToolCall(name="mark", arguments={"label": "forwarded"}),
                    ]
                ),
                MockResponse(text="both done"),
            ]
        )
        third = await on_a.call("turn/start", {"sessionId": sid, "text": "both", "clientMessageId": "3"})
        await on_b.wait_for(lambda evs: len(of_type(evs, "approval_requested")) == 2)
        await until(lambda: "start beside" in marks(tmp_path / "marks.txt"))
        asked = of_type(on_b.events, "approval_requested")[-1]
        assert asked.name == "mark"
        await on_b.call("approval/respond", {"requestId": asked.request_id, "approved": True})
        await until(lambda: "mark forwarded" in marks(tmp_path / "marks.txt"))
        assert "end beside" not in marks(tmp_path / "marks.txt")  # run while the sleep still ran on A
        assert await on_b.wait_turn_end(third["operationId"]) == "done"
        assert_told_once_in_order(await replay(on_b, sid), on_b.events, since)
        # A session listed through either replica is the same session.
        assert (await on_b.call("session/get", {"sessionId": sid}))["session"]["id"] == sid
        await on_a.close()
        await on_b.close()


async def test_a_cancel_sent_to_b_stops_a_turn_running_on_a(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer, schema: PostgresSchema
) -> None:
    mock_llm.set_script(
        [MockResponse(tool_calls=[MockToolCall(name="sleep", arguments={"label": "z", "seconds": 30})])]
    )
    with (
        replica(tmp_path, "a", workspace, mock_llm, schema.url) as a,
        replica(tmp_path, "b", workspace, mock_llm, schema.url) as b,
    ):
        on_a = await EventClient.connect(a.address)
        on_b = await EventClient.connect(b.address)
        sid = (await on_a.call("session/create", {}))["id"]
        op = (await on_a.call("turn/start", {"sessionId": sid, "text": "sleep", "clientMessageId": "1"}))["operationId"]
        await until(lambda: marks(tmp_path / "marks.txt") == ["start z"])
        # A new message through B does not cut the turn running on A short: B says it is busy, as A would.
        with pytest.raises(RpcError) as refused:
            await on_b.call("turn/start", {"sessionId": sid, "text": "another", "clientMessageId": "2"})
        assert refused.value.code == "busy"
        assert (await on_b.call("turn/cancel", {"sessionId": sid, "operationId": op}))["cancelled"] is True
        assert await on_a.wait_turn_end(op) == "cancelled"
        assert "end z" not in marks(tmp_path / "marks.txt")
        await on_a.close()
        await on_b.close()


@pytest.mark.parametrize("point", ["streaming", "in a tool with side effects", "waiting for approval"])
async def test_killing_a_mid_turn_b_takes_over_within_the_lease(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer, schema: PostgresSchema, point: str
) -> None:
    marks_file = tmp_path / "marks.txt"
    if point == "streaming":
        mock_llm.set_script(
            [MockResponse(text="slow " * 400, chunk_size=5, chunk_delay_s=0.01), MockResponse(text="resumed on b")]
        )
    elif point == "in a tool with side effects":
        mock_llm.set_script(
            [
                MockResponse(tool_calls=[MockToolCall(name="sleep", arguments={"label": "s", "seconds": 20})]),
                MockResponse(text="resumed on b"),
            ]
        )
    else:
        mock_llm.set_script(
            [MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "w"})]), MockResponse(text="ok")]
        )
    a = replica(tmp_path, "a", workspace, mock_llm, schema.url).start()
    with replica(tmp_path, "b", workspace, mock_llm, schema.url) as b:
        try:
            on_a = await EventClient.connect(a.address)
            on_b = await EventClient.connect(b.address)
            sid = (await on_a.call("session/create", {}))["id"]
            since = (await on_b.call("session/subscribe", {"sessionId": sid}))["lastSeq"]
            op = (await on_a.call("turn/start", {"sessionId": sid, "text": "go", "clientMessageId": "1"}))[
                "operationId"
            ]
            if point == "streaming":
                await on_b.wait_for(lambda evs: len(of_type(evs, "model_stream_chunk")) >= 20)
            elif point == "in a tool with side effects":
                await until(lambda: marks(marks_file) == ["start s"])
            else:
                await on_b.wait_for(lambda evs: len(of_type(evs, "approval_requested")) == 1)
            a.kill()
            killed = time.monotonic()
            await on_a.close()

            if point == "waiting for approval":
                # Nothing runs while it waits: the answer on B runs it on B.
                (asked,) = of_type(on_b.events, "approval_requested")
                await on_b.call("approval/respond", {"requestId": asked.request_id, "approved": True})
                assert await on_b.wait_turn_end(op) == "done"
                assert marks(marks_file) == ["mark w"]
            else:
                # B tells its clients the turn goes on (not that it ended), and records it as interrupted first.
                await on_b.wait_for(
                    lambda evs: any("took it over" in (p.reason or "") for p in of_type(evs, "operation_status"))
                )
                assert not any(p.status == "interrupted" for p in of_type(on_b.events, "operation_status"))
                # Taken over within the lease plus one sweep (renewals every third, sweeps every two thirds of it).
                assert time.monotonic() - killed < LEASE * 3 + 5
                if point == "in a tool with side effects":
                    # Interrupted mid-effect: B asks before running it again, and runs it only once approved.
                    await on_b.wait_for(lambda evs: len(of_type(evs, "approval_requested")) == 1)
                    (again,) = of_type(on_b.events, "approval_requested")
                    assert again.name == "sleep" and again.rerun
                    assert marks(marks_file) == ["start s"]
                    await on_b.call("approval/respond", {"requestId": again.request_id, "approved": False})
                await on_b.wait_for(
                    lambda evs: any(p.status in ("done", "error") for p in of_type(evs, "operation_status"))
                )
                assert of_type(on_b.events, "model_stream_chunk")[-1].text.endswith("b") or point != "streaming"
                info = await on_b.call("operation/get", {"operationId": op})
                assert info["status"] == "done" and info["summary"] == "resumed on b"
                assert marks(marks_file) == (["start s"] if point != "streaming" else [])
            assert_told_once_in_order(await replay(on_b, sid), on_b.events, since)
            await on_b.close()
        finally:
            a.kill()


async def test_an_automation_made_through_a_is_known_to_b_at_once(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer, schema: PostgresSchema
) -> None:
    flow = "name: tidy\nsteps:\n  - id: look\n    type: toolCall\n    tool: glob\n    arguments: {pattern: '*'}\n"
    with (
        replica(tmp_path, "a", workspace, mock_llm, schema.url) as a,
        replica(tmp_path, "b", workspace, mock_llm, schema.url) as b,
    ):
        on_a = await EventClient.connect(a.address)
        on_b = await EventClient.connect(b.address)
        await on_a.call("automation/create", {"text": flow})
        await until(lambda: any(m == "automation/changed" for m, _ in on_b.notifications))
        changed = [p for m, p in on_b.notifications if m == "automation/changed"]
        assert changed[-1]["name"] == "tidy" and not changed[-1]["deleted"]
        # B reads its flows again: the flow is a tool there too, and runs there.
        tools = {t["name"] for t in (await on_b.call("tool/list", {}))["tools"]}
        assert "flow_tidy" in tools
        run = await on_b.call("automation/run", {"id": "tidy"})
        for _ in range(100):
            [state] = (await on_b.call("automation/runs", {"runId": run["id"]}))["runs"]
            if state["status"] == "done":
                break
            await asyncio.sleep(0.1)
        assert state["status"] == "done"
        await on_a.call("automation/delete", {"id": "tidy"})
        await until(lambda: any(p["deleted"] for m, p in on_b.notifications if m == "automation/changed"))
        tools = {t["name"] for t in (await on_b.call("tool/list", {}))["tools"]}
        assert "flow_tidy" not in tools
        await on_a.close()
        await on_b.close()


async def test_a_run_waiting_on_a_and_its_notification_reach_a_client_on_b(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer, schema: PostgresSchema
) -> None:
    """What is pushed besides session events reaches every replica's clients: a run that waits on A for approval,
    the urgent notification it sends, and the run's end once a client on B has approved it."""
    flow = "name: stamp\nsteps:\n  - id: m\n    type: toolCall\n    tool: mark\n    arguments: {label: flow}\n"
    with (
        replica(tmp_path, "a", workspace, mock_llm, schema.url) as a,
        replica(tmp_path, "b", workspace, mock_llm, schema.url) as b,
    ):
        on_a = await EventClient.connect(a.address)
        on_b = await EventClient.connect(b.address)
        await on_a.call("tool/setPolicy", {"name": "mark", "policy": "always"})
        await on_a.call("automation/create", {"text": flow})
        run = await on_a.call("automation/run", {"id": "stamp"})

        def pushed(method: str) -> list[dict[str, Any]]:
            return [p for m, p in on_b.notifications if m == method]

        def run_is(status: str) -> bool:
            return any(p["id"] == run["id"] and p["status"] == status for p in pushed("automation/run"))

        await until(lambda: run_is("waiting_for_human"))
        waiting = [p for p in pushed("automation/run") if p["status"] == "waiting_for_human"][-1]
        assert waiting["pending"]["tool"] == "mark" and waiting["steps"]
        await until(lambda: any(p["runId"] == run["id"] for p in pushed("notification/delivered")))
        [notice] = pushed("notification/delivered")
        assert notice["kind"] == "automation_approval" and notice["tier"] == "urgent"
        assert [m for m, _ in on_a.notifications].count("notification/delivered") == 1  # told once on each replica

        await on_b.call("automation/respond", {"runId": run["id"], "approve": True})
        await until(lambda: run_is("done"))
        await until(
            lambda: any(
                p["id"] == run["id"] and p["status"] == "done" for m, p in on_a.notifications if m == "automation/run"
            )
        )
        assert marks(tmp_path / "marks.txt") == ["mark flow"]
        await on_a.close()
        await on_b.close()


async def test_a_file_trigger_fires_one_run_across_replicas_and_the_other_leads_when_one_dies(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer, schema: PostgresSchema
) -> None:
    flow = (
        "name: inbox\ntrigger: {type: file, patterns: ['inbox/*.txt'], events: [created]}\n"
        "steps:\n  - id: look\n    type: toolCall\n    tool: glob\n    arguments: {pattern: 'inbox/*'}\n"
    )
    (workspace / "inbox").mkdir()
    a = replica(tmp_path, "a", workspace, mock_llm, schema.url).start()  # the first to start leads
    with replica(tmp_path, "b", workspace, mock_llm, schema.url) as b:
        try:
            on_b = await EventClient.connect(b.address)
            await on_b.call("automation/create", {"text": flow})
            await asyncio.sleep(1.5)  # both replicas read it and watch the folder

            async def runs() -> list[dict[str, Any]]:
                return list((await on_b.call("automation/runs", {"id": "inbox"}))["runs"])

            (workspace / "inbox" / "one.txt").write_text("1")
            for _ in range(100):
                if await runs():
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(2)  # a second replica's run would have started by now
            assert len(await runs()) == 1
            a.kill()
            await asyncio.sleep(LEASE * 2)  # A's leadership runs out; B takes it at its next beat
            (workspace / "inbox" / "two.txt").write_text("2")
            for _ in range(100):
                if len(await runs()) == 2:
                    break
                await asyncio.sleep(0.1)
            assert len(await runs()) == 2
            await on_b.close()
        finally:
            a.kill()
