"""Turns driven through the core (no transport): tools, errors, cancel, limits, switching models, recovery."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from cowork.config import load_config
from cowork.core import Core
from cowork.protocol import (
    ApprovalRequested,
    ErrorCode,
    OperationStatus,
    OperationStatusChanged,
    ProtocolError,
    SessionCreateParams,
    SessionEvent,
    ToolResult,
    TurnStartParams,
)
from cowork.store import OperationRow, repos
from cowork.testing.mockllm import MockError, MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import provider_env
from cowork.testing.transcripts import payloads
from cowork.tools import Tool, ToolContext, ToolRegistry, builtin_tools

pytestmark = pytest.mark.anyio


class _SleepParams(BaseModel):
    seconds: float


class SleepTool(Tool[_SleepParams]):
    name = "sleep"
    description = "Sleep."
    params: ClassVar[type[BaseModel]] = _SleepParams
    started = asyncio.Event()

    async def run(self, params: _SleepParams, ctx: ToolContext) -> str:
        SleepTool.started.set()
        await asyncio.sleep(params.seconds)
        return "slept"


CoreFactory = Callable[..., Any]


@pytest.fixture
async def make_core(home: Path, workspace: Path, mock_llm: MockLLMServer) -> AsyncIterator[CoreFactory]:
    cores: list[Core] = []

    async def make(
        kind: str = "openai", *, env: dict[str, str] | None = None, tools: ToolRegistry | None = None
    ) -> Core:
        environment = {"COWORK_HOME": str(home), "COWORK_AGENT__PROVIDER_MAX_RETRIES": "0"}
        if kind:
            base = mock_llm.openai_base_url if kind == "openai" else mock_llm.anthropic_base_url
            environment |= provider_env(kind, base)
        environment |= env or {}
        core = Core(load_config(workspace, env=environment), env=environment, tools=tools)
        await core.start()
        cores.append(core)
        return core

    yield make
    for core in cores:
        await core.stop()


async def run_turn(core: Core, session_id: str, text: str, cmid: str) -> tuple[str, list[SessionEvent]]:
    events: list[SessionEvent] = []
    unsubscribe = core.bus.subscribe(session_id, events.append)
    started = await core.runtime.start_turn(TurnStartParams(session_id=session_id, text=text, client_message_id=cmid))
    await core.runtime.wait(session_id)
    await core.journal.flush()
    unsubscribe()
    return started.operation_id, events


def types(events: list[SessionEvent]) -> list[str]:
    return [e.type for e in events]


def last_status(events: list[SessionEvent]) -> Any:
    return [e.payload for e in events if e.type == "operation_status"][-1]


async def test_tool_errors_go_back_to_the_model(make_core: CoreFactory, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script(
        [
            MockResponse(
                tool_calls=[
                    MockToolCall(name="delete_everything", arguments={}),
                    MockToolCall(name="read", arguments={"filePath": "missing.txt"}),
                    MockToolCall(name="glob", arguments={"pattern": 5}),
                ]
            ),
            MockResponse(text="Sorry, I could not do that."),
        ]
    )
    core = await make_core()
    session = await core.sessions.create(SessionCreateParams())
    _, events = await run_turn(core, session.id, "try things", "c1")
    results = {p.name: p for p in payloads(events, ToolResult)}
    assert all(r.is_error for r in results.values())
    assert "There is no tool named 'delete_everything'" in results["delete_everything"].content
    assert "not found" in results["read"].content.lower()
    assert "Invalid arguments for glob" in results["glob"].content
    assert last_status(events).status == OperationStatus.DONE
    sent_back = {r["tool_call_id"]: r["content"] for r in mock_llm.requests[1].last_tool_results}
    assert len(sent_back) == 3 and all(c.startswith("Error:") for c in sent_back.values())


async def test_provider_failure_ends_the_turn_with_a_code_and_the_next_turn_works(
    make_core: CoreFactory, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(error=MockError(status=500, message="upstream down")), MockResponse(text="back")])
    core = await make_core()
    session = await core.sessions.create(SessionCreateParams())
    _, events = await run_turn(core, session.id, "hello", "c1")
    error = next(e.payload for e in events if e.type == "error")
    assert error.code == ErrorCode.PROVIDER_UNAVAILABLE  # type: ignore[union-attr]
    assert last_status(events).status == OperationStatus.ERROR
    _, events = await run_turn(core, session.id, "again", "c2")
    assert last_status(events).status == OperationStatus.DONE
    assert [m["content"] for m in mock_llm.requests[1].messages if m["role"] == "user"] == ["hello", "again"]


async def test_cancel_during_a_tool_leaves_a_valid_history(make_core: CoreFactory, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="sleep", arguments={"seconds": 30})]),
            MockResponse(text="after cancel"),
        ]
    )
    tools = builtin_tools()
    tools.register(SleepTool())
    core = await make_core(tools=tools)
    session = await core.sessions.create(SessionCreateParams())
    events: list[SessionEvent] = []
    core.bus.subscribe(session.id, events.append)
    SleepTool.started.clear()
    started = await core.runtime.start_turn(TurnStartParams(session_id=session.id, text="nap", client_message_id="c1"))
    await asyncio.wait_for(SleepTool.started.wait(), 10)
    assert await core.runtime.cancel(session.id, started.operation_id) is True
    await core.journal.flush()
    status = last_status(events)
    assert status.status == OperationStatus.CANCELLED and status.code == ErrorCode.CANCELLED
    assert core.runtime.active_operation(session.id) is None
    assert await core.runtime.cancel(session.id) is False
    # The next turn's request carries a result for the interrupted call, so the provider accepts it.
    _, events = await run_turn(core, session.id, "still there?", "c2")
    assert last_status(events).status == OperationStatus.DONE
    tool_messages = [m for m in mock_llm.requests[1].messages if m["role"] == "tool"]
    assert len(tool_messages) == 1 and "cancelled" in tool_messages[0]["content"]


async def test_cancel_mid_stream(make_core: CoreFactory, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(text="word " * 400, chunk_size=5, chunk_delay_s=0.01)])
    core = await make_core()
    session = await core.sessions.create(SessionCreateParams())
    events: list[SessionEvent] = []
    streaming = asyncio.Event()

    def record(event: SessionEvent) -> None:
        events.append(event)
        if event.type == "model_stream_chunk":
            streaming.set()

    core.bus.subscribe(session.id, record)
    started = await core.runtime.start_turn(TurnStartParams(session_id=session.id, text="talk", client_message_id="c1"))
    await asyncio.wait_for(streaming.wait(), 10)
    await core.runtime.cancel(session.id, started.operation_id)
    await core.journal.flush()
    assert last_status(events).status == OperationStatus.CANCELLED
    assert "assistant_message" not in types(events)


async def test_busy_and_idempotent_start(make_core: CoreFactory, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(text="slow", delay_s=1.0)])
    core = await make_core()
    session = await core.sessions.create(SessionCreateParams())
    first = await core.runtime.start_turn(TurnStartParams(session_id=session.id, text="a", client_message_id="c1"))
    again = await core.runtime.start_turn(TurnStartParams(session_id=session.id, text="a", client_message_id="c1"))
    assert again.operation_id == first.operation_id and again.duplicate
    with pytest.raises(ProtocolError) as info:
        await core.runtime.start_turn(TurnStartParams(session_id=session.id, text="b", client_message_id="c2"))
    assert info.value.code == ErrorCode.BUSY
    await core.runtime.wait(session.id)
    assert len(mock_llm.requests) == 1


async def test_max_steps_pauses_a_looping_agent(make_core: CoreFactory, mock_llm: MockLLMServer) -> None:
    counter = iter(range(1000))
    mock_llm.set_script(
        lambda request: MockResponse(tool_calls=[MockToolCall(name="glob", arguments={"pattern": f"*{next(counter)}"})])
    )
    core = await make_core(env={"COWORK_AGENT__MAX_STEPS": "3"})
    session = await core.sessions.create(SessionCreateParams())
    _, events = await run_turn(core, session.id, "loop", "c1")
    status = last_status(events)
    assert status.status == OperationStatus.WAITING_FOR_HUMAN and status.code == ErrorCode.MAX_STEPS
    assert len(mock_llm.requests) == 3


async def test_no_provider_refuses_before_recording_anything(make_core: CoreFactory) -> None:
    core = await make_core(kind="")
    session = await core.sessions.create(SessionCreateParams())
    with pytest.raises(ProtocolError) as info:
        await core.runtime.start_turn(TurnStartParams(session_id=session.id, text="hi", client_message_id="c1"))
    assert info.value.code == ErrorCode.NO_PROVIDER
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "OPENAI_BASE_URL"):
        assert name in info.value.message
    assert (await core.sessions.get(session.id)).last_seq == 0
    assert await core.sessions.messages(session.id) == []


async def test_switching_provider_keeps_the_history(make_core: CoreFactory, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(text="from openai"), MockResponse(text="from anthropic")])
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": mock_llm.anthropic_base_url}
    core = await make_core("openai", env=env)
    session = await core.sessions.create(SessionCreateParams())
    await run_turn(core, session.id, "first", "c1")
    await core.sessions.update_settings(session.id, provider="anthropic", model="claude-mock")
    _, events = await run_turn(core, session.id, "second", "c2")
    assert last_status(events).status == OperationStatus.DONE
    assert [r.format for r in mock_llm.requests] == ["openai", "anthropic"]
    assert [(m["role"], m["content"]) for m in mock_llm.requests[1].messages] == [
        ("user", "first"),
        ("assistant", "from openai"),
        ("user", "second"),
    ]


async def test_start_up_marks_running_operations_interrupted(make_core: CoreFactory, home: Path) -> None:
    core = await make_core()
    session = await core.sessions.create(SessionCreateParams())
    now = datetime.now(UTC)
    row = OperationRow("op_stale", session.id, "c9", "chat", "running", "openai", "m", now, now)
    await core.db.write(lambda c: repos.operations.insert(c, row))
    await core.stop()
    second = await make_core()
    op = await second.db.read(lambda c: repos.operations.get(c, "op_stale"))
    assert op is not None and op.status == "interrupted"
    replay = await second.sessions.replay(session.id, 0, 100)
    assert replay.events[-1].type == "operation_status"
    last = replay.events[-1].payload
    assert isinstance(last, OperationStatusChanged) and last.status == OperationStatus.INTERRUPTED


async def test_the_system_prompt_names_where_skills_live(
    make_core: CoreFactory, mock_llm: MockLLMServer, home: Path, workspace: Path
) -> None:
    mock_llm.set_script([MockResponse(text="ok")])
    core = await make_core()
    session = await core.sessions.create(SessionCreateParams())
    await run_turn(core, session.id, "hi", "c-skills")
    (request,) = mock_llm.requests
    expected = f"{Path(session.workspace) / '.cowork' / 'skills'} (project); {home / 'skills'} (user)"
    assert f"- Skills directory: {expected};" in (request.system or "")


class _ScriptParams(BaseModel):
    script: str


class RunScriptTool(Tool[_ScriptParams]):
    """A plugin tool that runs shell text under another name: the policy must judge it by what it declares."""

    name = "runScript"
    description = "Run a script."
    params: ClassVar[type[BaseModel]] = _ScriptParams
    side_effects: ClassVar[bool] = True

    def side_effects_of(self, arguments: dict[str, Any]) -> bool:
        return True

    def shell_command(self, arguments: dict[str, Any]) -> str | None:
        script = arguments.get("script")
        return script if isinstance(script, str) else None

    async def run(self, params: _ScriptParams, ctx: ToolContext) -> str:
        return f"ran {params.script}"


async def test_a_tool_that_declares_a_shell_command_is_classified_whatever_its_name(
    make_core: CoreFactory, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script(
        [
            MockResponse(
                tool_calls=[
                    MockToolCall(name="runScript", arguments={"script": "ls"}),
                    MockToolCall(name="runScript", arguments={"script": "rm -rf ~/projects"}),
                ]
            ),
            MockResponse(text="done"),
        ]
    )
    tools = builtin_tools()
    tools.register(RunScriptTool())
    core = await make_core(tools=tools)
    session = await core.sessions.create(SessionCreateParams())
    events: list[SessionEvent] = []
    core.bus.subscribe(session.id, events.append)
    await core.runtime.start_turn(TurnStartParams(session_id=session.id, text="clean up", client_message_id="c1"))
    await core.runtime.wait(session.id)
    await core.journal.flush()
    # `ls` is safe, so it ran at once although the tool has side effects; the rm was classified and asks.
    results = [e.payload for e in events if isinstance(e.payload, ToolResult)]
    asked = [e.payload for e in events if isinstance(e.payload, ApprovalRequested)]
    assert [r.content for r in results] == ["ran ls"]
    assert [a.arguments for a in asked] == [{"script": "rm -rf ~/projects"}] and asked[0].dangerous
    assert last_status(events).status == OperationStatus.WAITING_FOR_HUMAN
