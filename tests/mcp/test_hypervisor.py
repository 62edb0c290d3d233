"""The MCP hypervisor through the core: tools in turns, crashes, timeouts, list changes, cancel, trust."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import psutil
import pytest

from cowork.protocol import OperationStatus
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall

from .conftest import MCP_ENV, stdio_server, wait_status

pytestmark = pytest.mark.anyio


async def test_a_turn_calls_an_mcp_tool_and_the_result_reaches_the_model(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    core = await harness.core(env=MCP_ENV)
    await core.mcp.add(stdio_server("t"))
    info = await wait_status(core, "t", "running")
    assert {t.name for t in info.tools} >= {"echo", "add", "slow"}
    assert "mcp__t__echo" in core.tools.names()
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="mcp__t__echo", arguments={"text": "hello mcp"})]),
            MockResponse(text="done"),
        ]
    )
    session = await harness.session(core)
    op = await harness.start(core, session, "echo please")
    await harness.status(session, op, OperationStatus.DONE)
    sent = mock_llm.requests[1].last_tool_results[0]["content"]
    assert "echo: hello mcp" in sent and "<untrusted_content" in sent
    tool_names = [t["function"]["name"] for t in mock_llm.requests[0].body["tools"]]
    assert "mcp__t__echo" in tool_names


async def test_manual_policy_asks_and_allow_list_runs_listed_and_read_only_tools(harness: CoreHarness) -> None:
    core = await harness.core(env=MCP_ENV)
    await core.mcp.add(stdio_server("m", policy="manual"))
    await core.mcp.add(stdio_server("a", policy="allow-list", allowedTools=["echo"]))
    await wait_status(core, "m", "running")
    await wait_status(core, "a", "running")
    from cowork.policy import CallFacts, PolicyContext, decide

    def decision(tool_name: str) -> str:
        tool = core.tools.get(tool_name)
        assert tool is not None
        server = tool.server_policy()
        assert server is not None
        facts = CallFacts(tool=tool_name, risky=tool.needs_approval({}), mcp_server=server[0])
        return decide(facts, PolicyContext(server_policies=dict([server]))).decision

    assert decision("mcp__m__echo") == "ask"
    assert decision("mcp__m__add") == "ask"
    assert decision("mcp__a__echo") == "run"
    assert decision("mcp__a__add") == "run"  # readOnlyHint
    assert decision("mcp__a__slow") == "ask"


async def test_a_killed_server_reconnects_with_backoff(harness: CoreHarness) -> None:
    core = await harness.core(env=MCP_ENV)
    statuses: list[tuple[str, str]] = []
    core.notices.subscribe(lambda method, info: statuses.append((method, info.status)))  # type: ignore[attr-defined]
    await core.mcp.add(stdio_server("k"))
    first = await wait_status(core, "k", "running")
    assert first.pid is not None
    psutil.Process(first.pid).kill()
    await wait_status(core, "k", "error")
    again = await wait_status(core, "k", "running")
    assert again.pid is not None and again.pid != first.pid and again.restarts == 1
    assert ("mcp/status", "error") in statuses
    assert not psutil.pid_exists(first.pid) or psutil.Process(first.pid).status() == psutil.STATUS_ZOMBIE


async def test_a_server_that_never_answers_times_out_with_a_reason(harness: CoreHarness) -> None:
    core = await harness.core(env=MCP_ENV | {"COWORK_MCP__CONNECT_TIMEOUT_SECONDS": "1"})
    await core.mcp.add(stdio_server("s", "silent"))
    info = await wait_status(core, "s", "error")
    assert info.reason is not None and "did not answer within 1 s" in info.reason
    assert list((core.paths.home / "run" / "mcp").glob("s-*.json")) == []


async def test_list_changed_makes_a_new_tool_visible(harness: CoreHarness) -> None:
    core = await harness.core(env=MCP_ENV)
    await core.mcp.add(stdio_server("g"))
    await wait_status(core, "g", "running")
    assert "mcp__g__extra" not in core.tools.names()
    await core.mcp.call_tool("g", "grow", {})

    async def visible() -> None:
        while "mcp__g__extra" not in core.tools.names():  # noqa: ASYNC110 - polls the registry
            await asyncio.sleep(0.05)

    await asyncio.wait_for(visible(), 10)
    result = await core.mcp.call_tool("g", "extra", {"text": "x"})
    assert result.content[0].text == "extra: x"  # type: ignore[union-attr]


async def test_cancelling_the_turn_cancels_the_call_on_the_server(
    harness: CoreHarness, mock_llm: MockLLMServer, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    core = await harness.core(env=MCP_ENV)
    await core.mcp.add(stdio_server("c", env={"COWORK_TEST_MCP_MARKS": str(marks)}))
    await wait_status(core, "c", "running")
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="mcp__c__slow", arguments={"text": "zzz"})]),
            MockResponse(text="after"),
        ]
    )
    session = await harness.session(core)
    op = await harness.start(core, session, "be slow")

    async def exists(path: Path) -> None:
        while not path.exists():  # noqa: ASYNC110, ASYNC240 - polls a file the server writes
            await asyncio.sleep(0.05)

    await asyncio.wait_for(exists(marks / "slow-started-zzz"), 15)
    assert await core.runtime.cancel(session, op) is True
    await harness.status(session, op, OperationStatus.CANCELLED)
    await asyncio.wait_for(exists(marks / "cancelled-zzz"), 15)  # the server was told
    # The connection stays usable, and the next turn carries a result for the cancelled call.
    assert core.mcp.info("c").status == "running"
    result = await core.mcp.call_tool("c", "echo", {"text": "still"})
    assert result.content[0].text == "echo: still"  # type: ignore[union-attr]
    op2 = await harness.start(core, session, "again")
    await harness.status(session, op2, OperationStatus.DONE)
    tool_messages = [m for m in mock_llm.requests[1].messages if m["role"] == "tool"]
    assert len(tool_messages) == 1


async def test_concurrent_first_calls_share_one_process(harness: CoreHarness, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    core = await harness.core(env=MCP_ENV)
    await core.mcp.add(stdio_server("lazy", autoStart=False, env={"COWORK_TEST_MCP_MARKS": str(marks)}))
    assert core.mcp.info("lazy").status == "stopped"
    results = await asyncio.gather(*(core.mcp.call_tool("lazy", "pid", {}) for _ in range(5)))
    pids = {r.content[0].text for r in results}  # type: ignore[union-attr]
    assert len(pids) == 1
    assert len(list(marks.glob("started-*"))) == 1


async def test_a_workspace_server_waits_for_trust(harness: CoreHarness, workspace: Path) -> None:
    (workspace / ".cowork").mkdir()
    (workspace / ".cowork" / "mcp-servers.json").write_text(
        json.dumps({"mcpServers": {"ws": {"command": sys.executable, "args": ["-m", "cowork.testing.mcp_servers"]}}}),
        encoding="utf-8",
    )
    core = await harness.core(env=MCP_ENV)
    info = core.mcp.info("ws")
    assert info.status == "untrusted" and info.source == "workspace"
    assert info.reason is not None and "mcp/trust" in info.reason
    await asyncio.sleep(0.3)
    assert core.mcp.info("ws").pid is None
    await core.mcp.trust(None)
    await wait_status(core, "ws", "running")
    await core.stop()
    harness.cores.remove(core)
    again = await harness.core(env=MCP_ENV)  # trust is remembered
    await wait_status(again, "ws", "running")


async def test_disable_enable_restart_remove(harness: CoreHarness) -> None:
    core = await harness.core(env=MCP_ENV)
    await core.mcp.add(stdio_server("d"))
    await wait_status(core, "d", "running")
    info = await core.mcp.set_enabled("d", False)
    assert info.status == "disabled" and not info.enabled
    assert not any(n.startswith("mcp__d__") for n in core.tools.names())
    await core.mcp.set_enabled("d", True)
    first = await wait_status(core, "d", "running")
    await core.mcp.restart("d")
    second = await wait_status(core, "d", "running")
    assert second.pid != first.pid
    await core.mcp.remove("d")
    assert core.mcp.list() == []
    assert not any(n.startswith("mcp__d__") for n in core.tools.names())


async def test_saved_secrets_reach_the_server_but_never_the_database(harness: CoreHarness) -> None:
    core = await harness.core(env=MCP_ENV)
    core.credentials.set("mcp/vault/token", "s3cret-value")
    env = {"VAULT_TOKEN": "${credential:mcp/vault/token}", "PLAIN": "as-is"}
    await core.mcp.add(stdio_server("vault", env=env))
    token = await core.mcp.call_tool("vault", "env", {"name": "VAULT_TOKEN"})
    plain = await core.mcp.call_tool("vault", "env", {"name": "PLAIN"})
    assert token.content[0].text == "s3cret-value"  # type: ignore[union-attr]
    assert plain.content[0].text == "as-is"  # type: ignore[union-attr]
    database = core.paths.database
    for path in database.parent.glob(database.name + "*"):  # the file, its WAL and shared memory
        assert b"s3cret-value" not in path.read_bytes(), path
    assert core.mcp.info("vault").model_dump_json().count("s3cret") == 0


async def test_arguments_are_checked_against_the_servers_schema_on_every_call(harness: CoreHarness) -> None:
    from cowork.tools import ToolContext, ToolError

    core = await harness.core(env=MCP_ENV)
    await core.mcp.add(stdio_server("s"))
    await wait_status(core, "s", "running")
    tool = core.tools.get("mcp__s__add")
    assert tool is not None
    context = ToolContext(workspace=harness.workspace)
    for a in range(3):  # the validator is built once and reused
        assert "5" in await tool.run(tool.parse({"a": a, "b": 5 - a}), context)
    with pytest.raises(ToolError, match=r"Invalid arguments for mcp__s__add: b: 'five' is not of type 'integer'"):
        tool.parse({"a": 1, "b": "five"})
    with pytest.raises(ToolError, match=r"'b' is a required property"):
        tool.parse({"a": 1})


async def test_a_long_mcp_result_is_cut_and_saved_like_any_tool_output(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    core = await harness.core(env=MCP_ENV)
    await core.mcp.add(stdio_server("t"))
    await wait_status(core, "t", "running")
    long_text = "".join(f"line {i:05d} " for i in range(4000))  # 44,000 characters
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="mcp__t__echo", arguments={"text": long_text}, id="c_long")]),
            MockResponse(text="done"),
        ]
    )
    session = await harness.session(core)
    op = await harness.start(core, session, "echo a lot")
    await harness.status(session, op, OperationStatus.DONE)
    sent = mock_llm.requests[1].last_tool_results[0]["content"]
    saved = core.paths.home / "tool-output" / session / "mcp__t__echo-c_long.txt"
    assert len(sent) < 31_000 and "characters cut" in sent and str(saved) in sent
    full = saved.read_text(encoding="utf-8")
    assert f"echo: {long_text}" in full and full.startswith("Result of the MCP tool echo")
