"""`cowork tui` driven by Textual's Pilot against a real server process and the mock LLM."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, Markdown, OptionList, Static

from cowork.clients.connection import RpcClient
from cowork.clients.tui import CoworkApp, TuiOptions
from cowork.clients.tui.screens import ApprovalScreen, ConfirmScreen, ModelPickerScreen, QuestionScreen
from cowork.clients.tui.widgets import ChatView, SessionItem, SessionList, ToolCallLine, UsageBar
from cowork.testing.client import EventClient
from cowork.testing.core import TEST_TOOLS_PLUGIN, marks
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SIZE = (130, 40)


@pytest.fixture
def server(tmp_path: Path, workspace: Path, mock_llm: MockLLMServer) -> Iterator[ServerProcess]:
    env = provider_env("openai", mock_llm.openai_base_url) | {
        "COWORK_TOOLS__PLUGINS": json.dumps([TEST_TOOLS_PLUGIN]),
        "COWORK_TEST_MARKS": str(tmp_path / "marks.txt"),
    }
    with ServerProcess(tmp_path / "server-home", workspace, env=env) as proc:
        yield proc


def app_for(server: ServerProcess, workspace: Path, resume: str | None = None) -> CoworkApp:
    return CoworkApp(TuiOptions(workspace=workspace, address=server.address, resume=resume))


async def until(pilot: Pilot[int], predicate: Callable[[], object], within: float = 30.0) -> None:
    waited = 0.0
    while not predicate():
        if waited > within:
            app = pilot.app
            assert isinstance(app, CoworkApp)
            notes = [f"{n.title}: {n.message}" for n in app._notifications]
            raise AssertionError(f"condition not met; chat shows:\n{chat_text(app)}\nnotifications: {notes}")
        await pilot.pause(0.05)
        waited += 0.05


def chat_text(app: CoworkApp) -> str:
    """What the chat shows, as text: user lines, notes, tool lines and the assistant's markdown source."""
    parts: list[str] = []
    for child in app.query_one(ChatView).children:
        if isinstance(child, Markdown):
            parts.append(child.source)
        elif isinstance(child, ToolCallLine):
            parts.append(str(child.title))
        elif isinstance(child, Static):
            parts.append(str(child.render()))
    return "\n".join(parts)


async def dialog(pilot: Pilot[int], kind: type[Screen[Any]]) -> Screen[Any]:
    """Wait until the dialog is up and laid out (a click before that lands elsewhere)."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, kind) and app.screen.query("Button, OptionList, Input"))
    await pilot.pause(0.1)
    await until(pilot, lambda: all(w.region.area for w in app.screen.query("Button, OptionList, Input")))
    return app.screen


async def send(pilot: Pilot[int], text: str) -> None:
    prompt = pilot.app.query_one("#prompt", Input)
    prompt.value = text
    prompt.focus()
    await pilot.press("enter")


async def test_a_turn_with_an_approval(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer, tmp_path: Path
) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "tui"})]),
            MockResponse(text="Marked it, **done**.", chunk_size=3),
        ]
    )
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "please mark")
        screen = await dialog(pilot, ApprovalScreen)
        assert isinstance(screen, ApprovalScreen) and screen.request.name == "mark"
        assert screen.request.arguments == {"label": "tui"}
        await pilot.click("#approve")
        await until(pilot, lambda: "Marked it, **done**." in chat_text(app))
        await until(pilot, lambda: app.state.running is None)
        (line,) = app.query(ToolCallLine)
        assert line.result is not None and "1 line" in str(line.title)
        text = chat_text(app)
        assert "› please mark" in text and "approved" in text
        assert "mock-model" in str(app.query_one(UsageBar).render())
    assert marks(tmp_path / "marks.txt") == ["mark tui"]


async def test_what_is_sent_before_the_session_is_open_is_sent_once_it_is(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer
) -> None:
    """Enter pressed while the TUI still connects (a slow server start) keeps the message, says so, and sends it
    once the session is open; two such messages go as one (a second turn would be refused while the first runs)."""
    mock_llm.set_script([MockResponse(text="Got both.")])
    gate = asyncio.Event()

    async def slow_connect() -> RpcClient:
        await gate.wait()
        return await RpcClient.connect(server.address)

    app = CoworkApp(TuiOptions(workspace=workspace, address=server.address), connector=slow_connect)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first")
        await send(pilot, "/help")  # a command runs at once, session or not
        await send(pilot, "second")
        await pilot.pause()
        await until(pilot, lambda: "/fork [N]" in chat_text(app))
        assert app.query_one("#prompt", Input).value == ""
        assert [n.title for n in app._notifications] == ["", ""] and "sent as soon as" in next(
            iter(app._notifications)
        ).message
        assert mock_llm.requests == []
        gate.set()
        await until(pilot, lambda: "Got both." in chat_text(app) and app.state.running is None)
        assert "› first\n\nsecond" in chat_text(app)
    (request,) = mock_llm.requests
    assert request.messages[-1] == {"role": "user", "content": "first\n\nsecond"}


async def test_a_degraded_subsystem_is_notified_at_connect(tmp_path: Path, workspace: Path) -> None:
    with ServerProcess(tmp_path / "bare-home", workspace) as bare:  # no provider connected
        app = app_for(bare, workspace)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: any(n.title == "degraded" for n in app._notifications))
            note = next(n for n in app._notifications if n.title == "degraded")
            assert note.severity == "warning"
            assert str(note.message).startswith("! providers: No model provider is connected.")
            assert "! mcp" not in str(note.message)  # no server configured: disabled, not degraded


async def test_a_rejection_tells_the_model_why(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer, tmp_path: Path
) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "no"})]),
            MockResponse(text="Fine, I will not."),
        ]
    )
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "mark something")
        await dialog(pilot, ApprovalScreen)
        reason = app.screen.query_one("#reject-reason", Input)
        reason.value = "not today"
        await pilot.click("#reject")
        await until(pilot, lambda: "Fine, I will not." in chat_text(app))
        assert "rejected: not today" in chat_text(app)
        # The call's card is closed by its result, not left "running…".
        (line,) = app.query(ToolCallLine)
        await until(pilot, lambda: line.result is not None)
        assert line.result is not None and line.result.rejected and "Rejected by the user" in str(line.title)
    assert marks(tmp_path / "marks.txt") == []
    results = mock_llm.requests[-1].last_tool_results
    assert "not today" in results[0]["content"]


async def test_a_question_is_answered_from_its_options(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script(
        [
            MockResponse(
                tool_calls=[
                    MockToolCall(name="ask", arguments={"question": "Which colour?", "options": ["red", "blue"]})
                ]
            ),
            MockResponse(text="Blue it is."),
        ]
    )
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "pick a colour")
        await dialog(pilot, QuestionScreen)
        assert isinstance(app.screen, QuestionScreen) and app.screen.options == ["red", "blue"]
        await pilot.press("down", "enter")
        await until(pilot, lambda: "Blue it is." in chat_text(app))
        assert "→ blue" in chat_text(app)
    assert "blue" in mock_llm.requests[-1].last_tool_results[0]["content"]


async def test_switching_sessions(server: ServerProcess, workspace: Path, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(text="noted: alpha"), MockResponse(text="noted: beta")])
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "remember alpha")
        await until(pilot, lambda: "noted: alpha" in chat_text(app) and app.state.running is None)
        first = app.session
        assert first is not None
        await pilot.press("ctrl+n")
        await until(pilot, lambda: app.session is not None and app.session.id != first.id)
        assert chat_text(app) == ""
        await send(pilot, "remember beta")
        await until(pilot, lambda: "noted: beta" in chat_text(app) and app.state.running is None)
        await until(pilot, lambda: len(app.query(SessionItem)) == 2)
        items = list(app.query(SessionItem))
        index = next(i for i, item in enumerate(items) if item.session.id == first.id)
        sessions = app.query_one(SessionList)
        app.query_one("#sidebar").add_class("hidden")
        await pilot.press("ctrl+b")  # the session switcher: the list shows and has the focus
        await until(pilot, lambda: sessions.has_focus and not app.query_one("#sidebar").has_class("hidden"))
        sessions.index = index
        await pilot.press("enter")
        await until(pilot, lambda: app.session is not None and app.session.id == first.id)
        await until(pilot, lambda: "noted: alpha" in chat_text(app))
        assert "beta" not in chat_text(app)
        await until(pilot, lambda: app.query_one("#prompt", Input).has_focus)  # back to typing


async def test_pending_requests_from_before_it_connected_and_reconnect(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer, tmp_path: Path
) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "early"})]),
            MockResponse(text="first turn over"),
            MockResponse(text="second turn, while the TUI was away"),
        ]
    )
    client = await EventClient.connect(server.address)
    try:
        sid = (await client.call("session/create", {}))["id"]
        await client.call("turn/start", {"sessionId": sid, "text": "mark early", "clientMessageId": "one"})
        await client.wait_for(lambda evs: any(e.type == "approval_requested" for e in evs))
    finally:
        await client.close()
    app = app_for(server, workspace, resume=sid)
    async with app.run_test(size=SIZE) as pilot:
        await dialog(pilot, ApprovalScreen)  # asked before the TUI existed
        await pilot.click("#approve")
        await until(pilot, lambda: "first turn over" in chat_text(app) and app.state.running is None)
        server.restart()
        await until(pilot, lambda: app.connection != "connected", within=15)
        # Another client runs a turn; the TUI may be reconnected or not yet: it shows it once either way.
        other = await EventClient.connect(server.address)
        try:
            op = await other.call("turn/start", {"sessionId": sid, "text": "again", "clientMessageId": "two"})
            await other.wait_turn_end(op["operationId"])
        finally:
            await other.close()
        await until(pilot, lambda: app.connection == "connected")
        await until(pilot, lambda: "second turn, while the TUI was away" in chat_text(app))
        text = chat_text(app)
        assert text.count("› mark early") == 1 and text.count("› again") == 1
        assert text.count("first turn over") == 1
    assert marks(tmp_path / "marks.txt") == ["mark early"]


async def test_the_model_picker_switches_the_model(server: ServerProcess, workspace: Path) -> None:
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        assert app.model_label == "openai:mock-model"
        await pilot.press("ctrl+o")
        picker = await dialog(pilot, ModelPickerScreen)
        options = picker.query_one(OptionList)
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert ids[0] == "auto" and any(i and i.startswith("openai:") for i in ids[1:])
        target = next(i for i in ids[1:] if i and i.startswith("openai:") and i != "openai:mock-model")
        options.highlighted = ids.index(target)
        await pilot.press("enter")
        await until(pilot, lambda: app.model_label == target)
        assert app.session is not None and f"{app.session.provider}:{app.session.model}" == target


def test_the_tui_subcommand_is_registered() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cowork", "tui", "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0 and "--resume" in result.stdout


@pytest.mark.parametrize("how", ["ctrl+q", "palette"])
async def test_it_quits(server: ServerProcess, workspace: Path, how: str) -> None:
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        if how == "ctrl+q":
            await pilot.press("ctrl+q")
        else:
            await pilot.press("ctrl+p")
            await pilot.pause(0.2)
            await pilot.press(*"Quit")
            await pilot.pause(0.5)
            await pilot.press("enter")
        await until(pilot, lambda: not app.is_running, within=15)
    assert app.return_code == 0


def answered(app: CoworkApp) -> Callable[[], bool]:
    return lambda: "written" in chat_text(app) and app.state.running is None


def answered_with(app: CoworkApp, answer: str) -> Callable[[], bool]:
    return lambda: answer in chat_text(app) and app.state.running is None


async def test_fork_goes_on_in_the_copy_with_the_message_in_the_prompt(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer, tmp_path: Path
) -> None:
    mock_llm.set_script([MockResponse(text="one"), MockResponse(text="two")])
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        for text, answer in (("first ask", "one"), ("second ask", "two")):
            await send(pilot, text)
            await until(pilot, answered_with(app, answer))
        source = app.session
        assert source is not None
        await send(pilot, "/fork 0")
        await until(pilot, lambda: "Usage: /fork" in chat_text(app))
        await send(pilot, "/fork 2")
        await until(pilot, lambda: app.session is not None and app.session.id != source.id)
        await until(pilot, lambda: "one" in chat_text(app))
        assert app.session is not None and app.session.title == "first ask (fork)"
        text = chat_text(app)
        assert "› first ask" in text and "second ask" not in text
        assert app.query_one("#prompt", Input).value == "second ask"
        assert any(s.id == app.session.id for s in app.sessions) and any(s.id == source.id for s in app.sessions)

        # The source exported, then imported back as another session the TUI goes on in.
        export = tmp_path / "source.json"
        client = await EventClient.connect(server.address)
        try:
            written = await client.call("session/export", {"sessionId": source.id, "format": "json"})
        finally:
            await client.close()
        export.write_text(written["content"], encoding="utf-8")
        forked = app.session.id
        await send(pilot, f"/import {export}")
        await until(pilot, lambda: app.session is not None and app.session.id not in (source.id, forked))
        await until(pilot, lambda: "two" in chat_text(app))
        assert app.session.title == "first ask"


async def test_launching_twice_without_writing_leaves_one_session(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text="written")])
    seen: list[str] = []
    for text in (None, "write something", None):
        app = app_for(server, workspace)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, app.connected.is_set)
            assert app.session is not None
            seen.append(app.session.id)
            if text is not None:
                await send(pilot, text)
                await until(pilot, answered(app))
            await pilot.press("ctrl+q")
    # The untouched session is reused; once written in, the next launch starts a fresh one.
    assert seen[0] == seen[1] != seen[2]
    client = await EventClient.connect(server.address)
    try:
        listed = await client.call("session/list", {"workspace": str(workspace)})
    finally:
        await client.close()
    assert sorted(s["id"] for s in listed["sessions"]) == sorted({seen[0], seen[2]})


async def test_compact_from_the_prompt(server: ServerProcess, workspace: Path, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(text="written"), MockResponse(text="again"), MockResponse(text="A summary.")])
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "/compact")
        await until(pilot, lambda: any("Nothing to compact yet" in str(n.message) for n in app._notifications))
        await send(pilot, "first")
        await until(pilot, answered(app))
        await send(pilot, "second")
        await until(pilot, lambda: "again" in chat_text(app) and app.state.running is None)
        await send(pilot, "/compact")
        await until(pilot, lambda: "context compressed: 3 messages summarised" in chat_text(app))
        await until(pilot, lambda: app.state.running is None)
    assert len(mock_llm.requests) == 3


async def test_export_from_the_prompt(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # saved in the folder the TUI was started in
    mock_llm.set_script([MockResponse(text="written")])
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "Plan it")
        await until(pilot, answered(app))
        await send(pilot, "/title Plan  it  well")
        await until(pilot, lambda: app.sub_title == "Plan it well")
        await until(pilot, lambda: any(item.session.title == "Plan it well" for item in app.query(SessionItem)))
        await send(pilot, "/export")
        await until(pilot, lambda: "as markdown to" in chat_text(app))
        await send(pilot, "/export")
        await until(pilot, lambda: "exists already" in chat_text(app))
    assert (tmp_path / "plan-it-well.md").read_text(encoding="utf-8").startswith("# Plan it well\n")


async def test_delete_asks_first_and_cancel_is_the_default(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text="written")])
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "Doomed notes")
        await until(pilot, answered(app))
        doomed = app.session
        assert doomed is not None
        await send(pilot, "/delete")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("enter")  # the focus is on Cancel
        await until(pilot, lambda: any("Nothing was deleted" in str(n.message) for n in app._notifications))
        await send(pilot, "/delete")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.click("#confirm")
        await until(pilot, lambda: app.session is not None and app.session.id != doomed.id)
        await until(pilot, lambda: all(item.session.id != doomed.id for item in app.query(SessionItem)))
        assert chat_text(app) == ""
    client = await EventClient.connect(server.address)
    try:
        listed = await client.call("session/list", {})
    finally:
        await client.close()
    assert doomed.id not in [s["id"] for s in listed["sessions"]]


async def test_search_then_resume(server: ServerProcess, workspace: Path, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(text="written")])
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "remember the kumquat")
        await until(pilot, answered(app))
        first = app.session
        assert first is not None
        await pilot.press("ctrl+n")
        await until(pilot, lambda: app.session is not None and app.session.id != first.id)
        await send(pilot, "/search kumquat")
        await until(pilot, lambda: f"{first.id}  remember the kumquat" in chat_text(app))
        await send(pilot, f"/resume {first.id}")
        await until(pilot, lambda: app.session is not None and app.session.id == first.id)


async def test_plan_mode_shows_in_the_usage_bar(server: ServerProcess, workspace: Path) -> None:
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        bar = app.query_one(UsageBar)
        await send(pilot, "/plan on")
        await until(pilot, lambda: "PLAN MODE" in str(bar.render()))
        assert "Plan mode on" in chat_text(app)
        await send(pilot, "/plan off")
        await until(pilot, lambda: "PLAN MODE" not in str(bar.render()))
