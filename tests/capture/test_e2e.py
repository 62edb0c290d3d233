"""Activity capture end to end: a real server process watching a real X display (Xvfb and openbox) where the test
switches real windows. The spans it records, an excluded application leaving no trace, pausing, what survives a
SIGKILL, the agent asking what the user did (mock LLM), and the REPL's indicator."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from cowork.capture._x11 import X11Source
from cowork.testing import xdisplay
from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step
from cowork.testing.postgres import store_of, store_text
from cowork.testing.server import ServerProcess, provider_env

from ..clients.test_cli import PROMPT, cli_env, spawn

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

STYLE = "(?:\x1b\\[[0-9;]*m)*"
"""Colour codes the terminal gets between the indicator and the prompt."""
__all__ = ["cli_env"]  # the fixture, imported for the REPL's test


@pytest.fixture(scope="module")
def display() -> Iterator[xdisplay.XDisplay]:
    if (reason := xdisplay.available()) is not None:
        pytest.skip(reason)
    with xdisplay.XDisplay() as x:
        yield x


def capture_env(display: xdisplay.XDisplay) -> dict[str, str]:
    """The test display, given explicitly (tests/conftest.py removes DISPLAY), and short intervals."""
    return {
        "DISPLAY": display.display,
        "COWORK_CAPTURE__POLL_SECONDS": "0.5",
        "COWORK_CAPTURE__FLUSH_SECONDS": "1",
        "COWORK_CAPTURE__MIN_SPAN_SECONDS": "0",
        "COWORK_CAPTURE__INDEX": "false",
    }


async def wait_status(client: EventClient, check: Any, within: float = 20.0) -> dict[str, Any]:
    """Poll `capture/status` until `check(status)` holds; the status."""
    for _ in range(int(within / 0.1)):
        status = await client.call("capture/status", {})
        if check(status):
            return status
        await asyncio.sleep(0.1)
    raise AssertionError(f"capture/status never matched; last: {status}")


def await_active(display: xdisplay.XDisplay, title: str) -> None:
    """Wait until the display itself says `title` is the active window (the window manager acts on its own time)."""
    source = X11Source(display.display)
    source.open()
    try:
        for _ in range(100):
            window = source.active_window()
            if window is not None and window.title == title:
                return
            source.wait(0.1)
        raise AssertionError(f"{title!r} never became the active window")
    finally:
        source.close()


def titles(status: dict[str, Any]) -> str | None:
    return status["current"]["title"] if status.get("current") else None


async def test_real_windows_become_spans_and_the_agent_reads_them(
    display: xdisplay.XDisplay, tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    editor = xdisplay.open_window(display.display, "Gedit", "quarterly-report.md — gedit")
    browser = xdisplay.open_window(display.display, "Firefox", "Invoices — Mozilla Firefox")
    vault = xdisplay.open_window(display.display, "KeePassXC", "Bank logins.kdbx — KeePassXC")
    env = provider_env("openai", mock_llm.openai_base_url) | capture_env(display)
    server = ServerProcess(tmp_path / "home", workspace, env=env)
    try:
        editor.activate()
        server.start()
        client = await EventClient.connect(server.address)
        status = await wait_status(client, lambda s: titles(s) == "quarterly-report.md — gedit")
        assert status["state"] == "capturing" and status["source"] == "x11" and status["current"]["app"] == "Gedit"
        browser.activate()
        await wait_status(client, lambda s: titles(s) == "Invoices — Mozilla Firefox")
        vault.activate()
        await wait_status(client, lambda s: s["capturing"] and s.get("current") is None)  # excluded: nothing shown
        browser.set_title("Invoice 0042 — Mozilla Firefox")
        browser.activate()
        await wait_status(client, lambda s: titles(s) == "Invoice 0042 — Mozilla Firefox")

        result = await client.call("context/query", {})
        assert [(s["app"], s["title"]) for s in result["spans"]] == [
            ("Gedit", "quarterly-report.md — gedit"),
            ("Firefox", "Invoices — Mozilla Firefox"),
            ("Firefox", "Invoice 0042 — Mozilla Firefox"),
        ]
        assert result["spans"][0]["process"] is not None  # the window's pid is this test process: its name

        # The agent asks what the user did today.
        mock_llm.set_script([tool_step("activity", since="today"), MockResponse(text="You worked on invoices.")])
        session = await client.call("session/create", {})
        await client.call("session/subscribe", {"sessionId": session["id"]})
        started = await client.call(
            "turn/start", {"sessionId": session["id"], "text": "what did I do today?", "clientMessageId": "m1"}
        )
        assert await client.wait_turn_end(started["operationId"]) == "done"
        answer = mock_llm.requests[-1].last_tool_results[0]["content"]
        assert "Gedit" in answer and "quarterly-report.md — gedit" in answer and "Invoice 0042" in answer
        assert "KeePassXC" not in answer and "Bank logins" not in answer

        # Pausing stops looking at the screen: a switch while paused is never recorded.
        paused = await client.call("capture/configure", {"paused": True})
        assert paused["state"] == "paused" and not paused["capturing"]
        editor.set_title("diary.md — gedit")
        editor.activate()
        await asyncio.sleep(1.5)
        await client.call("capture/configure", {"paused": False})
        await wait_status(client, lambda s: titles(s) == "diary.md — gedit")
        await asyncio.sleep(1.5)  # at least one flush of the open span
        await client.close()

        # SIGKILL: what was flushed is kept, the open span up to its last flush included.
        server.kill()
        store = store_of(tmp_path / "home")
        try:
            query = "SELECT title FROM activity_spans ORDER BY started_at"
            titles_kept = [r[0] for r in store.read_sync(lambda c: c.exec_driver_sql(query).fetchall())]
        finally:
            store.close()
        dump = store_text(tmp_path / "home")
        assert titles_kept[-1] == "diary.md — gedit"
        assert "KeePassXC" not in dump and "Bank logins" not in dump
        server.restart()
        again = await EventClient.connect(server.address)
        try:
            await wait_status(again, lambda s: s["capturing"])
        finally:
            await again.close()
    finally:
        server.stop()
        for window in (editor, browser, vault):
            window.close()


def test_the_repl_shows_capture_while_it_records(
    display: xdisplay.XDisplay, workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str]
) -> None:
    window = xdisplay.open_window(display.display, "Inkscape", "logo.svg - Inkscape")
    try:
        window.activate()
        xdisplay.touch_input(display.display)
        await_active(display, "logo.svg - Inkscape")
        env = cli_env | provider_env("openai", mock_llm.openai_base_url) | capture_env(display)
        child = spawn(workspace, env)
        child.expect("capturing activity")
        child.expect("● " + STYLE + PROMPT)  # every prompt is led by the indicator while capture records
        # The first look at the screen may come after the REPL is up: ask until the window is named.
        for _ in range(40):
            child.send("/capture\r")
            if child.expect(["now: Inkscape — logo.svg - Inkscape", "kept for"]) == 0:
                break
            child.expect("● " + STYLE + PROMPT)
            time.sleep(0.25)
        else:
            raise AssertionError("capture never named the window in front")
        child.send("/capture pause\r")
        child.expect("capture paused")
        child.expect("‖ " + STYLE + PROMPT)
        child.send("/capture resume\r")
        child.expect("capture capturing")
        child.expect("● " + STYLE + PROMPT)
        child.send("/quit\r")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
    finally:
        window.close()
