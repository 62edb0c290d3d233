"""Tracing through real turns: the span tree of a turn (steps, model calls with GenAI attributes, tool calls, an MCP
call, approval waits, sub-agents), stored and read back by `trace/list` and `trace/get`, and sent to a real OTLP/HTTP
receiver; filters, pruning, a deleted session's traces, tracing off, a collector that is down."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from cowork.core import Core
from cowork.protocol import (
    ApprovalRequested,
    ApprovalRespondParams,
    OperationStatus,
    OperationStatusChanged,
    ProtocolError,
    SpanInfo,
    TraceGetParams,
    TraceGetResult,
    TraceListParams,
)
from cowork.store import SpanRow, repos
from cowork.testing.core import CoreHarness
from cowork.testing.http import LocalServer, Reply, Seen
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall, tool_step

from ..mcp.conftest import MCP_ENV, stdio_server, wait_status

pytestmark = pytest.mark.anyio

S = OperationStatus


def tree(result: TraceGetResult) -> list[tuple[int, str]]:
    """The spans as (depth, name), depth first, siblings by name (calls of one step run side by side)."""
    children: dict[str | None, list[SpanInfo]] = {}
    ids = {s.span_id for s in result.spans}
    for span in result.spans:
        parent = span.parent_span_id if span.parent_span_id in ids else None
        children.setdefault(parent, []).append(span)
    out: list[tuple[int, str]] = []

    def walk(parent: str | None, depth: int) -> None:
        for span in sorted(children.get(parent, []), key=lambda s: s.name):
            out.append((depth, span.name))
            walk(span.span_id, depth + 1)

    walk(None, 0)
    return out


def named(result: TraceGetResult, name: str) -> list[SpanInfo]:
    return [s for s in result.spans if s.name == name]


async def traced_turn(harness: CoreHarness, core: Core, text: str) -> tuple[str, str, OperationStatusChanged]:
    session = await harness.session(core)
    op = await harness.start(core, session, text)
    done = await harness.status(session, op, S.DONE, S.ERROR)
    return session, op, done


async def test_a_turn_with_two_tool_calls_and_an_mcp_call_yields_its_span_tree(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    received: list[ExportTraceServiceRequest] = []

    def collect(seen: Seen) -> Reply:
        request = ExportTraceServiceRequest()
        request.ParseFromString(seen.body)
        received.append(request)
        return Reply(200, ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf")

    with LocalServer({"/v1/traces": collect}) as collector:
        env = MCP_ENV | {
            "COWORK_TRACING__OTLP_ENDPOINT": collector.url("/v1/traces"),
            "COWORK_TRACING__OTLP_HEADERS": '{"Authorization": "Basic c2VjcmV0"}',
            "COWORK_PRICES": '{"openai:mock-model": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}',
        }
        core = await harness.core(env=env)
        await core.mcp.add(stdio_server("t"))
        await wait_status(core, "t", "running")
        mock_llm.set_script(
            [
                MockResponse(
                    tool_calls=[
                        MockToolCall(name="read", arguments={"filePath": "README.md"}),
                        MockToolCall(name="glob", arguments={"pattern": "**/*.py"}),
                    ]
                ),
                tool_step("mcp__t__echo", text="hello"),
                MockResponse(text="all done"),
            ]
        )
        session, op, done = await traced_turn(harness, core, "look around")
        assert done.status == S.DONE
        assert done.trace_id is not None and len(done.trace_id) == 32
        statuses = harness.payloads(session, OperationStatusChanged)
        assert {s.trace_id for s in statuses if s.operation_id == op} == {done.trace_id}, "every status names it"

        result = await core.traces.get(TraceGetParams(operation_id=op))
        assert result.trace_id == done.trace_id
        assert tree(result) == [
            (0, "invoke_agent cowork"),
            (1, "step 1"),
            (2, "chat mock-model"),
            (2, "execute_tool glob"),
            (2, "execute_tool read"),
            (1, "step 2"),
            (2, "chat mock-model"),
            (2, "execute_tool mcp__t__echo"),
            (3, "tools/call echo"),
            (1, "step 3"),
            (2, "chat mock-model"),
        ]
        root = named(result, "invoke_agent cowork")[0]
        assert root.status == "ok" and root.parent_span_id is None
        assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
        assert root.attributes["gen_ai.conversation.id"] == session
        assert root.attributes["cowork.operation.id"] == op
        assert root.attributes["cowork.status"] == "done" and root.attributes["cowork.steps"] == 3
        chats = named(result, "chat mock-model")
        for chat in chats:
            a = chat.attributes
            assert chat.kind == "client" and chat.status == "ok"
            assert a["gen_ai.operation.name"] == "chat"
            assert a["gen_ai.provider.name"] == "openai" and a["gen_ai.request.model"] == "mock-model"
            assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
            assert a["gen_ai.response.finish_reasons"] in (["tool_call"], ["stop"])
            expected = (a["gen_ai.usage.input_tokens"] * 3.0 + a["gen_ai.usage.output_tokens"] * 15.0) / 1e6
            assert a["cowork.cost_usd"] == pytest.approx(expected)
        assert chats[-1].attributes["cowork.time_to_first_token_ms"] >= 0  # the answer streamed text
        assert result.input_tokens == sum(c.attributes["gen_ai.usage.input_tokens"] for c in chats)
        assert result.cost_usd == pytest.approx(sum(c.attributes["cowork.cost_usd"] for c in chats))
        read = named(result, "execute_tool read")[0]
        assert read.attributes["gen_ai.tool.name"] == "read" and read.attributes["cowork.tool.outcome"] == "ok"
        assert read.attributes["gen_ai.tool.type"] == "function"
        mcp = named(result, "tools/call echo")[0]
        assert mcp.kind == "client" and mcp.attributes["cowork.mcp.server"] == "t"
        assert mcp.attributes["mcp.method.name"] == "tools/call"
        assert named(result, "execute_tool mcp__t__echo")[0].attributes["gen_ai.tool.type"] == "extension"
        for span in result.spans:  # each inside its parent, in time
            parent = next((p for p in result.spans if p.span_id == span.parent_span_id), None)
            if parent is not None:
                assert parent.start <= span.start and span.end <= parent.end, (span.name, parent.name)

        listed = await core.traces.list(TraceListParams(session_id=session))
        assert [t.trace_id for t in listed.traces] == [done.trace_id]
        summary = listed.traces[0]
        assert summary.name == "invoke_agent cowork" and summary.operation_id == op and summary.span_count == 11
        assert not summary.failed and summary.input_tokens == result.input_tokens
        assert summary.cost_usd == pytest.approx(result.cost_usd) and summary.cost_usd > 0
        assert (await core.traces.get(TraceGetParams(session_id=session))).trace_id == done.trace_id

        # The same spans reach the collector (OTLP/HTTP, protobuf), with the configured header.
        def sent() -> set[tuple[str, str]]:
            return {
                (span.trace_id.hex(), span.name)
                for request in received
                for resource in request.resource_spans
                for scope in resource.scope_spans
                for span in scope.spans
            }

        expected = {(done.trace_id, s.name) for s in result.spans}
        deadline = time.monotonic() + 20
        while not expected <= sent() and time.monotonic() < deadline:  # noqa: ASYNC110 - polls the receiver
            await asyncio.sleep(0.1)
        assert expected <= sent()
        assert collector.requests[0].headers["authorization"] == "Basic c2VjcmV0"
        assert collector.requests[0].headers["content-type"] == "application/x-protobuf"
        service = {a.key: a.value.string_value for a in received[0].resource_spans[0].resource.attributes}
        assert service["service.name"] == "cowork"
        health = {s.name: s for s in (await core.health()).subsystems}
        assert health["tracing"].status == "ready"
        await harness.close()  # while the collector still answers


async def test_approval_waits_are_spans_of_their_own_and_a_rejected_call_never_runs(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    core = await harness.core()
    mock_llm.set_script(
        [
            MockResponse(
                tool_calls=[
                    MockToolCall(name="write", arguments={"filePath": "a.txt", "content": "a\n"}),
                    MockToolCall(name="write", arguments={"filePath": "b.txt", "content": "b\n"}),
                ]
            ),
            MockResponse(text="ok"),
        ]
    )
    session = await harness.session(core)
    op = await harness.start(core, session, "write two files")
    await harness.status(session, op, S.WAITING_FOR_HUMAN)
    asks = harness.payloads(session, ApprovalRequested)
    assert len(asks) == 2
    await asyncio.sleep(0.05)  # a measurable wait
    await core.runtime.respond_approval(ApprovalRespondParams(request_id=asks[0].request_id, approved=True))
    await core.runtime.respond_approval(
        ApprovalRespondParams(request_id=asks[1].request_id, approved=False, message="not b")
    )
    await harness.status(session, op, S.DONE)
    result = await core.traces.get(TraceGetParams(operation_id=op))
    approvals = named(result, "approval write")
    assert sorted(a.attributes["cowork.approval.decision"] for a in approvals) == ["approved", "rejected"]
    assert all(a.duration_ms >= 40 for a in approvals)
    runs = named(result, "execute_tool write")
    assert len(runs) == 1, "the rejected call never ran"
    run = runs[0]
    assert run.attributes["cowork.approval.wait_ms"] >= 40
    approved = next(a for a in approvals if a.attributes["cowork.approval.decision"] == "approved")
    assert run.attributes["gen_ai.tool.call.id"] == approved.attributes["gen_ai.tool.call.id"]
    assert run.start >= approved.end, "run time is apart from the wait"
    assert (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()


async def test_a_failed_tool_fails_its_span_and_the_filters_find_it(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    core = await harness.core()
    mock_llm.set_script([tool_step("read", filePath="no/such/file.txt"), MockResponse(text="it is missing")])
    session, op, _ = await traced_turn(harness, core, "read a missing file")
    mock_llm.set_script([MockResponse(text="hi")])
    other_session, other, _ = await traced_turn(harness, core, "hello")

    failed = await core.traces.get(TraceGetParams(operation_id=op))
    chat = named(failed, "chat mock-model")[0]
    assert "cowork.cost_usd" not in chat.attributes and chat.attributes["cowork.price_unknown"] is True
    span = named(failed, "execute_tool read")[0]
    assert span.status == "error" and span.attributes["cowork.tool.outcome"] == "error"
    assert span.status_message and "no/such/file.txt" in span.status_message

    def ops(result: Any) -> set[str | None]:
        return {t.operation_id for t in result.traces}

    assert ops(await core.traces.list(TraceListParams(failed=True))) == {op}
    assert ops(await core.traces.list(TraceListParams(failed=False))) == {other}
    assert ops(await core.traces.list(TraceListParams())) == {op, other}
    assert ops(await core.traces.list(TraceListParams(session_id=other_session))) == {other}
    assert ops(await core.traces.list(TraceListParams(min_duration_ms=10_000_000))) == set()
    assert ops(await core.traces.list(TraceListParams(min_cost_usd=1000))) == set()
    newest = await core.traces.list(TraceListParams(limit=1))
    assert ops(newest) == {other}
    started = newest.traces[0].started_at
    assert ops(await core.traces.list(TraceListParams(until=started))) == {op}
    assert ops(await core.traces.list(TraceListParams(since=started))) == {other}

    with pytest.raises(ProtocolError) as missing:
        await core.traces.get(TraceGetParams(trace_id="0" * 32))
    assert missing.value.code == "trace_not_found"
    with pytest.raises(ProtocolError):
        await core.traces.get(TraceGetParams(operation_id="op_nothing"))

    # Deleting a session deletes its traces; the other stays.
    await core.runtime.delete_session(session)
    assert ops(await core.traces.list(TraceListParams())) == {other}


async def test_a_sub_agent_runs_in_its_turns_trace_under_the_spawn_call(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    core = await harness.core()
    mock_llm.set_script(
        [
            tool_step("spawnAgent", agentType="explore", task="find the notes"),
            MockResponse(text="found them"),  # the sub-agent's answer
            MockResponse(text="the notes are in docs/"),
        ]
    )
    _, op, done = await traced_turn(harness, core, "where are the notes?")
    assert done.status == S.DONE
    result = await core.traces.get(TraceGetParams(operation_id=op))
    spawn = named(result, "execute_tool spawnAgent")[0]
    child = named(result, "invoke_agent explore")[0]
    assert child.parent_span_id == spawn.span_id
    assert child.attributes["cowork.parent_operation.id"] == op
    sub_op = child.attributes["cowork.operation.id"]
    assert (await core.traces.get(TraceGetParams(operation_id=sub_op))).trace_id == result.trace_id
    assert len(named(result, "chat mock-model")) == 3


async def test_tracing_off_stores_nothing_and_says_so(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    core = await harness.core(env={"COWORK_TRACING__ENABLED": "false"})
    mock_llm.set_script([MockResponse(text="hi")])
    _, _, done = await traced_turn(harness, core, "hello")
    assert done.trace_id is None
    assert (await core.traces.list(TraceListParams())).traces == []
    assert await core.db.read(repos.spans.count) == 0
    health = {s.name: s for s in (await core.health()).subsystems}
    assert health["tracing"].status == "disabled" and "enabled = false" in (health["tracing"].reason or "")


async def test_a_collector_that_is_down_degrades_tracing_but_not_the_turn(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    with LocalServer({"/v1/traces": Reply(503, "down", "text/plain")}) as collector:
        core = await harness.core(env={"COWORK_TRACING__OTLP_ENDPOINT": collector.url("/v1/traces")})
        mock_llm.set_script([MockResponse(text="hi")])
        _, op, done = await traced_turn(harness, core, "hello")
        assert done.status == S.DONE
        assert (await core.traces.get(TraceGetParams(operation_id=op))).spans, "still stored locally"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            health = {s.name: s for s in (await core.health()).subsystems}
            if health["tracing"].status == "degraded":
                break
            await asyncio.sleep(0.2)
        assert health["tracing"].status == "degraded"
        assert collector.url("/v1/traces") in (health["tracing"].reason or "")
        await harness.close()


async def test_pruning_keeps_the_newest_spans(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    core = await harness.core(env={"COWORK_TRACING__MAX_SPANS": "1000"})
    mock_llm.set_script([MockResponse(text="hi")])
    _, op, _ = await traced_turn(harness, core, "hello")
    await core.traces.list(TraceListParams())  # flushed
    stored = await core.db.read(repos.spans.count)
    assert stored == 3  # the turn, its step, its model call
    old = [
        SpanRow(
            trace_id=f"{i:032x}",
            span_id=f"{i:016x}",
            parent_span_id=None,
            name="old",
            kind="internal",
            start_us=i,
            end_us=i + 1,
            status="ok",
            status_message=None,
            session_id=None,
            operation_id=None,
            cost_usd=None,
            input_tokens=None,
            output_tokens=None,
            attributes="{}",
        )
        for i in range(1, 1200)
    ]
    await core.db.write(lambda conn: repos.spans.insert_many(conn, old))
    gone = await asyncio.to_thread(core.tracing.prune)
    assert gone == 1199 + 3 - 1000 or gone >= 1199  # everything from 1970 is past keep_days
    assert (await core.traces.get(TraceGetParams(operation_id=op))).spans, "the newest stay"
