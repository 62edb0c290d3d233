"""Operations through the core: approvals (mixed execution), questions, steering, cancel, todos, resume."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from cowork.protocol import (
    ApprovalRequested,
    ApprovalRespondParams,
    Ask,
    AskRespondParams,
    AssistantMessage,
    ErrorCode,
    LogLine,
    OperationStatus,
    ProtocolError,
    Todos,
    ToolCallStatus,
    ToolResult,
    TurnSteerParams,
    UserMessage,
)
from cowork.testing.core import CoreHarness, marks
from cowork.testing.gates import Gate
from cowork.testing.mockllm import MockLLMServer, MockRequest, MockResponse, MockToolCall
from cowork.testing.transcripts import payloads

pytestmark = pytest.mark.anyio
S = OperationStatus


@pytest.fixture(autouse=True)
def marks_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "marks.txt"
    monkeypatch.setenv("COWORK_TEST_MARKS", str(path))
    return path


def calls(*pairs: tuple[str, dict[str, object]]) -> MockResponse:
    return MockResponse(tool_calls=[MockToolCall(name=n, arguments=a) for n, a in pairs])


async def test_mixed_batch_runs_the_safe_call_now_and_the_risky_one_on_approval(
    harness: CoreHarness, mock_llm: MockLLMServer, marks_file: Path
) -> None:
    mock_llm.set_script(
        [calls(("peek", {"label": "safe"}), ("mark", {"label": "risky"})), MockResponse(text="both done")]
    )
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "go")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN)
    assert marks(marks_file) == ["peek safe"]  # the safe call ran at once, the risky one waits
    (request,) = harness.payloads(sid, ApprovalRequested)
    assert request.name == "mark" and request.arguments == {"label": "risky"}
    pending = await core.runtime.pending(sid)
    assert [a.request_id for a in pending.approvals] == [request.request_id]

    result = await core.runtime.respond_approval(ApprovalRespondParams(request_id=request.request_id, approved=True))
    assert not result.duplicate
    await harness.status(sid, op, S.DONE)
    assert marks(marks_file) == ["peek safe", "mark risky"]
    results = {r["tool_call_id"]: r["content"] for r in mock_llm.requests[1].last_tool_results}
    assert sorted(results.values()) == ["marked risky", "peeked safe"]
    assert harness.types(sid).count("approval_resolved") == 1
    # Answering again the same way changes nothing; answering differently is refused with a code.
    again = await core.runtime.respond_approval(ApprovalRespondParams(request_id=request.request_id, approved=True))
    assert again.duplicate
    with pytest.raises(ProtocolError) as info:
        await core.runtime.respond_approval(ApprovalRespondParams(request_id=request.request_id, approved=False))
    assert info.value.code == ErrorCode.ALREADY_RESOLVED
    with pytest.raises(ProtocolError) as info:
        await core.runtime.respond_approval(ApprovalRespondParams(request_id="req_nope", approved=True))
    assert info.value.code == ErrorCode.REQUEST_NOT_FOUND


async def test_a_call_approved_while_its_step_runs_starts_even_if_the_step_ends_while_its_start_is_saved(
    harness: CoreHarness, mock_llm: MockLLMServer, marks_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call approved while the other calls of its step run starts at once. If those end while its start is being
    committed, the turn waits for it (it once found a started call with nothing running it and failed with an
    internal error; the SIGKILL test caught it)."""
    mock_llm.set_script(
        [calls(("sleep", {"label": "s", "seconds": 1.0}), ("mark", {"label": "risky"})), MockResponse(text="done")]
    )
    core = await harness.core(env={"COWORK_TOOLS__AUTO_APPROVE": json.dumps(["sleep"])})
    sid = await harness.session(core)
    op = await harness.start(core, sid, "go")
    await harness.until(sid, lambda _e: bool(harness.payloads(sid, ApprovalRequested)))
    (request,) = harness.payloads(sid, ApprovalRequested)
    assert marks(marks_file) == ["start s"]  # the sleep runs while the mark waits for its answer

    # Hold every commit that only marks calls started (no event) until the sleep has ended.
    hold = asyncio.Event()
    real_emit = core.journal.emit

    def held_emit(session_id: str, payload: object, **kwargs: object) -> asyncio.Future[object]:
        committed = real_emit(session_id, payload, **kwargs)  # type: ignore[arg-type]
        if payload is not None or not kwargs.get("urgent"):
            return committed  # type: ignore[return-value]
        later: asyncio.Future[object] = asyncio.get_running_loop().create_future()

        async def release() -> None:
            await hold.wait()
            await asyncio.wait({committed})
            later.set_result(committed.result())

        tasks.add(asyncio.get_running_loop().create_task(release()))
        return later

    tasks: set[asyncio.Task[None]] = set()
    monkeypatch.setattr(core.journal, "emit", held_emit)
    answer = asyncio.get_running_loop().create_task(
        core.runtime.respond_approval(ApprovalRespondParams(request_id=request.request_id, approved=True))
    )
    await harness.until(sid, lambda _e: any(r.name == "sleep" for r in harness.payloads(sid, ToolResult)))
    await asyncio.sleep(0.2)  # the loop decides what is next with the approved call's start still uncommitted
    hold.set()
    await answer
    await harness.status(sid, op, S.DONE)
    assert marks(marks_file) == ["start s", "end s", "mark risky"]
    assert {r.name for r in harness.payloads(sid, ToolResult)} == {"sleep", "mark"}


async def test_a_rejection_goes_back_to_the_model(
    harness: CoreHarness, mock_llm: MockLLMServer, marks_file: Path
) -> None:
    mock_llm.set_script([calls(("mark", {"label": "x"})), MockResponse(text="ok, I will not")])
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "go")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN)
    (request,) = harness.payloads(sid, ApprovalRequested)
    await core.runtime.respond_approval(
        ApprovalRespondParams(request_id=request.request_id, approved=False, message="not today")
    )
    await harness.status(sid, op, S.DONE)
    assert marks(marks_file) == []
    (result,) = mock_llm.requests[1].last_tool_results
    assert "rejected" in result["content"] and "not today" in result["content"]
    info = await core.runtime.operation_info(op)
    assert [c.status for c in info.tool_calls] == [ToolCallStatus.REJECTED]
    # Clients close the call's card from its result: exactly one, right after the answer, saying it was rejected.
    (closed,) = harness.payloads(sid, ToolResult)
    assert closed.rejected and closed.is_error and closed.tool_call_id == request.tool_call_id
    assert closed.content == "Rejected by the user: not today"
    kinds = harness.types(sid)
    assert kinds.index("tool_result") == kinds.index("approval_resolved") + 1


async def test_ask_parks_the_operation_on_a_question(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script(
        [calls(("ask", {"question": "Which file?", "options": ["a.txt", "b.txt"]})), MockResponse(text="using b")]
    )
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "edit the file")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN)
    (ask,) = harness.payloads(sid, Ask)
    assert ask.question == "Which file?" and ask.options == ["a.txt", "b.txt"]
    assert [q.question for q in (await core.runtime.pending(sid)).questions] == ["Which file?"]
    with pytest.raises(ProtocolError) as info:  # an approval answer for a question is refused
        await core.runtime.respond_approval(ApprovalRespondParams(request_id=ask.request_id, approved=True))
    assert info.value.code == ErrorCode.REQUEST_NOT_FOUND
    await core.runtime.respond_ask(AskRespondParams(request_id=ask.request_id, answer="b.txt"))
    await harness.status(sid, op, S.DONE)
    assert mock_llm.requests[1].last_tool_results[0]["content"] == "b.txt"
    assert (await core.runtime.pending(sid)).questions == []


async def test_steering_reaches_the_model_at_the_next_step_in_order(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    gate = Gate()

    async def script(request: MockRequest) -> MockResponse:
        if len(mock_llm.requests) == 1:
            await gate.cross()  # the first request is in flight while the user steers
            return calls(("peek", {"label": "x"}))
        return MockResponse(text="noted both")

    mock_llm.set_script(script)
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "work")
    await gate.reached()
    first = await core.runtime.steer(
        TurnSteerParams(session_id=sid, text="also check the tests", client_message_id="s1")
    )
    await core.runtime.steer(TurnSteerParams(session_id=sid, text="and the docs", client_message_id="s2"))
    repeat = await core.runtime.steer(
        TurnSteerParams(session_id=sid, text="also check the tests", client_message_id="s1")
    )
    assert first.operation_id == op and repeat.duplicate
    gate.open()
    await harness.status(sid, op, S.DONE)
    second = mock_llm.requests[1]
    assert [m["content"] for m in second.messages if m["role"] == "user"] == [
        "work",
        "also check the tests",
        "and the docs",
    ]
    steers = [p for p in harness.payloads(sid, UserMessage) if p.steer]
    assert [s.text for s in steers] == ["also check the tests", "and the docs"]


async def test_steering_after_the_final_answer_keeps_the_turn_going(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    gate = Gate()

    async def script(request: MockRequest) -> MockResponse:
        if len(mock_llm.requests) == 1:
            await gate.cross()
            return MockResponse(text="first answer")
        return MockResponse(text=f"you said: {request.last_user_text}")

    mock_llm.set_script(script)
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "hello")
    await gate.reached()
    await core.runtime.steer(TurnSteerParams(session_id=sid, text="one more thing", client_message_id="s1"))
    gate.open()
    await harness.status(sid, op, S.DONE)
    assert [p.text for p in harness.payloads(sid, AssistantMessage)] == ["first answer", "you said: one more thing"]


async def test_steer_with_nothing_running_is_an_error(harness: CoreHarness) -> None:
    core = await harness.core()
    sid = await harness.session(core)
    with pytest.raises(ProtocolError) as info:
        await core.runtime.steer(TurnSteerParams(session_id=sid, text="hi", client_message_id="x"))
    assert info.value.code == ErrorCode.NOT_RUNNING


async def test_cancel_kills_the_tools_child_processes(
    harness: CoreHarness, mock_llm: MockLLMServer, marks_file: Path
) -> None:
    mock_llm.set_script([calls(("child_sleep", {"seconds": 60}), ("child_sleep", {"seconds": 60}))])
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "wait")
    await harness.until(sid, lambda events: len(payloads(events, LogLine)) == 2)
    pids = [int(m.split()[1]) for m in marks(marks_file) if m.startswith("pid")]
    assert len(pids) == 2
    assert await core.runtime.cancel(sid, op)
    status = await harness.status(sid, op, S.CANCELLED)
    assert status.code == ErrorCode.CANCELLED
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    info = await core.runtime.operation_info(op)
    assert {c.status for c in info.tool_calls} == {ToolCallStatus.CANCELLED}


async def test_a_new_message_supersedes_a_turn_waiting_for_approval(
    harness: CoreHarness, mock_llm: MockLLMServer, marks_file: Path
) -> None:
    mock_llm.set_script([calls(("mark", {"label": "x"})), MockResponse(text="fresh start")])
    core = await harness.core()
    sid = await harness.session(core)
    first = await harness.start(core, sid, "do it")
    await harness.status(sid, first, S.WAITING_FOR_HUMAN)
    (request,) = harness.payloads(sid, ApprovalRequested)
    second = await harness.start(core, sid, "never mind, something else")
    await harness.status(sid, first, S.CANCELLED)
    await harness.status(sid, second, S.DONE)
    assert marks(marks_file) == []
    with pytest.raises(ProtocolError) as info:
        await core.runtime.respond_approval(ApprovalRespondParams(request_id=request.request_id, approved=True))
    assert info.value.code == ErrorCode.ALREADY_RESOLVED
    tool_messages = [m for m in mock_llm.requests[1].messages if m["role"] == "tool"]
    assert len(tool_messages) == 1 and "cancelled" in tool_messages[0]["content"]


async def test_todos(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    good = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]
    two_active = [dict(t, status="in_progress") for t in good[:2]]
    mock_llm.set_script(
        [calls(("todoWrite", {"todos": good})), calls(("todoWrite", {"todos": two_active})), MockResponse(text="ok")]
    )
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "plan it")
    await harness.status(sid, op, S.DONE)
    (todos,) = harness.payloads(sid, Todos)
    assert [(t.content, t.status) for t in todos.todos] == [(t["content"], t["status"]) for t in good]
    stored = await core.todos.get(sid)
    assert [t.active_form for t in stored] == ["Reading the code", "Fixing the bug", "Running the tests"]
    rejected = [p for p in harness.payloads(sid, ToolResult) if p.is_error]
    assert len(rejected) == 1 and "at most one todo may be in_progress" in rejected[0].content


async def test_approval_survives_a_restart_of_the_core(
    harness: CoreHarness, mock_llm: MockLLMServer, marks_file: Path
) -> None:
    mock_llm.set_script([calls(("mark", {"label": "later"})), MockResponse(text="done after restart")])
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "go")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN)
    await harness.close()
    core = await harness.core()
    await harness.session(core)  # (a new session only to have a recorder; the old one is read from the store)
    pending = await core.runtime.pending(sid)
    (approval,) = pending.approvals
    assert core.runtime.active_operation(sid) == op
    harness.watch(core, sid)
    await core.runtime.respond_approval(ApprovalRespondParams(request_id=approval.request_id, approved=True))
    await harness.status(sid, op, S.DONE)
    info = await core.runtime.operation_info(op)
    assert info.status == S.DONE and info.summary == "done after restart"
    assert marks(marks_file) == ["mark later"]
