"""Automations and notifications in the TUI (Textual's Pilot, a real server process): a notification step's
`notification/delivered` as a toast with its tier as severity, its markup shown as typed; `/notifications dismiss`;
a run that waits for approval as a toast naming `/automation approve RUN`, approved from the prompt."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets._toast import Toast

from cowork.clients.connection import RpcClient
from cowork.testing.server import ServerProcess

from .test_tui import SIZE, app_for, chat_text, send, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PING = """\
name: ping
steps:
  - id: tell
    type: notification
    tier: urgent
    title: "Build [red]done[/red]"
    body: All green
"""

HELLO = """\
name: hello
steps:
  - id: greet
    type: toolCall
    tool: write
    arguments: {filePath: hello.txt, content: hello}
"""


@pytest.fixture
def server(tmp_path: Path, workspace: Path) -> Iterator[ServerProcess]:
    with ServerProcess(tmp_path / "server-home", workspace) as proc:
        yield proc


@pytest.fixture
async def other(server: ServerProcess) -> AsyncIterator[RpcClient]:
    """Another client of the same server: what it starts, the TUI hears about."""
    client = await RpcClient.connect(server.address)
    await client.call("initialize", {"clientInfo": {"name": "test", "version": "1"}})
    yield client
    await client.close()


def toast_text(app: Any) -> str:
    return "\n".join(str(toast.render()) for toast in app.screen.query(Toast))


async def test_a_notification_is_a_toast_and_is_dismissed(
    server: ServerProcess, workspace: Path, other: RpcClient
) -> None:
    await other.call("automation/create", {"text": PING})
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await until(pilot, app.connected.is_set)
        await other.call("automation/run", {"id": "ping"})
        await until(pilot, lambda: any(n.title == "Build [red]done[/red]" for n in app._notifications))
        note = next(n for n in app._notifications if n.title == "Build [red]done[/red]")
        assert note.severity == "error" and not note.markup  # urgent; server text is never markup
        assert note.message.startswith("All green\n/notifications accept|dismiss|snooze ")
        await until(pilot, lambda: "Build [red]done[/red]\nAll green" in toast_text(app))  # drawn as typed
        found = re.search(r"snooze ([0-9a-f]+)", note.message)
        assert found is not None
        await send(pilot, f"/notifications dismiss {found.group(1)}")
        await until(pilot, lambda: "Dismissed: Build [red]done[/red]" in chat_text(app))
        await send(pilot, "/notifications")
        await until(pilot, lambda: f"{found.group(1)} · " in chat_text(app))
        assert "· dismiss" in chat_text(app)


async def test_a_waiting_run_is_a_toast_naming_how_to_approve_it(
    server: ServerProcess, workspace: Path, other: RpcClient
) -> None:
    await other.call("tool/setPolicy", {"name": "write", "policy": "always"})
    await other.call("automation/create", {"text": HELLO})
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "/automations")
        await until(pilot, lambda: "hello  enabled  manual" in chat_text(app))
        await send(pilot, "/automation run hello")
        await until(pilot, lambda: "Started hello (run run_" in chat_text(app))
        run_id = chat_text(app).split("(run ", 1)[1].split(")", 1)[0]
        hint = f"/automation approve {run_id} · /automation reject {run_id}"
        await until(pilot, lambda: any(hint in n.message for n in app._notifications))
        waiting = next(n for n in app._notifications if hint in n.message)
        assert waiting.title == "automation hello" and waiting.severity == "warning"
        assert "write(filePath=hello.txt, content=hello)" in waiting.message
        await pilot.pause(1.5)  # the run's urgent notification came too, and is not a second toast
        assert sum("waits for your approval" in f"{n.title} {n.message}" for n in app._notifications) == 1
        assert not (workspace / "hello.txt").exists()

        await send(pilot, f"/automation approve {run_id}")
        await until(pilot, lambda: any("done in" in n.message for n in app._notifications))
        assert (workspace / "hello.txt").read_text(encoding="utf-8") == "hello"
        await send(pilot, "/automation export hello")
        await until(pilot, lambda: "in a shell, cowork automation export" in chat_text(app))
        await send(pilot, "/automation run nope")
        await until(pilot, lambda: any(n.title == "automation_not_found" for n in app._notifications))
