"""Event triggers on a real core: files changing in the workspace (a real watcher), session events, and a real MCP
server's notification; a flow does not feed itself, and an automation's own session fires nothing."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from cowork.automations import parse_definition
from cowork.automations._triggers_live import matches
from cowork.core import Core
from cowork.protocol import AutomationRunInfo, McpAddParams
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [("inbox/*.pdf", "inbox/a.pdf", True), ("inbox/*.pdf", "inbox/sub/a.pdf", True), ("*.csv", "data/x.csv", True),
     ("**/*.md", "README.md", True), ("**/*.md", "docs/a/b.md", True), ("inbox/*.pdf", "other/a.pdf", False),
     ("*.csv", "x.csvx", False)],
)  # fmt: skip
def test_patterns(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


async def runs_until(core: Core, name: str, count: int, within: float = 20) -> list[AutomationRunInfo]:
    async def wait() -> list[AutomationRunInfo]:
        while True:
            runs = await core.automations.runs(name)
            if len(runs) >= count and all(r.status != "running" for r in runs):
                return runs
            await asyncio.sleep(0.1)

    return await asyncio.wait_for(wait(), within)


FILE_FLOW = """
name: inbox
trigger: {type: file, patterns: ["inbox/*.txt"], events: [created]}
steps:
  - id: copy
    type: toolCall
    tool: write
    arguments: {filePath: "inbox/seen-${trigger.event}.log", content: "${trigger.path}"}
"""


async def test_a_file_created_in_the_workspace_runs_the_flow_once(harness: CoreHarness, workspace: Path) -> None:
    core = await harness.core()
    await core.automations.create(parse_definition(None, FILE_FLOW))
    (workspace / "inbox").mkdir()
    await asyncio.sleep(0.5)  # the watcher is up
    (workspace / "inbox" / "invoice.txt").write_text("total 42")
    [run] = await runs_until(core, "inbox", 1)
    assert run.status == "done" and run.trigger == {"type": "file", "path": "inbox/invoice.txt", "event": "created"}
    assert (workspace / "inbox" / "seen-created.log").read_text() == "inbox/invoice.txt"
    await asyncio.sleep(1.5)  # its own write (a .log) does not match; nothing else fired
    assert len(await core.automations.runs("inbox")) == 1
    await core.automations.set_enabled("inbox", False)
    await asyncio.sleep(0.3)
    (workspace / "inbox" / "second.txt").write_text("x")
    await asyncio.sleep(1.5)
    assert len(await core.automations.runs("inbox")) == 1


EVENT_FLOW = """
name: on-answer
trigger: {type: sessionEvent, eventType: assistant_message}
steps:
  - id: note
    type: notification
    title: "The agent answered"
    body: "${trigger.payload.text}"
"""


async def test_a_session_event_runs_the_flow(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(text="Forty-two.")])
    core = await harness.core()
    await core.automations.create(parse_definition(None, EVENT_FLOW))
    session = await harness.session(core)
    await harness.start(core, session, "What is the answer?")
    [run] = await runs_until(core, "on-answer", 1)
    assert run.trigger["type"] == "sessionEvent" and run.trigger["sessionId"] == session
    assert run.steps[0].input == {"title": "The agent answered", "body": "Forty-two."}


MCP_FLOW = """
name: on-resource
trigger: {type: mcpNotification, server: docs, method: notifications/resources/updated}
steps:
  - id: note
    type: notification
    title: "Updated"
    body: "${trigger.params.uri}"
"""


async def test_an_mcp_servers_notification_runs_the_flow(harness: CoreHarness) -> None:
    core = await harness.core(env={"COWORK_MCP__CONNECT_TIMEOUT_SECONDS": "15"})
    await core.automations.create(parse_definition(None, MCP_FLOW))
    await core.mcp.add(McpAddParams.model_validate({
        "name": "docs", "transport": "stdio", "command": sys.executable,
        "args": ["-m", "cowork.testing.mcp_servers", "normal"], "policy": "auto-run",
    }))  # fmt: skip
    result = await core.mcp.call_tool("docs", "announce", {"uri": "file:///notes.md"})
    assert not result.is_error
    [run] = await runs_until(core, "on-resource", 1)
    assert run.trigger["server"] == "docs" and run.steps[0].input == {"title": "Updated", "body": "file:///notes.md"}
