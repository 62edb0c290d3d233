"""AutomationService on a real core (real SQLite, real tools, the mock LLM): CRUD, runs, approvals, recovery."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from cowork.automations import parse_definition
from cowork.core import Core
from cowork.protocol import AutomationRunInfo, ProtocolError, ToolSetPolicyParams
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse

pytestmark = pytest.mark.anyio

HELLO = """
name: hello
description: Write a greeting and tell the user.
inputs:
  who: {type: string, default: world}
steps:
  - id: greet
    type: toolCall
    tool: write
    arguments: {filePath: hello.txt, content: "hello ${input.who}"}
  - id: look
    type: toolCall
    tool: read
    arguments: {filePath: hello.txt}
  - id: tell
    type: notification
    title: Wrote hello.txt
    body: "for ${input.who}"
    tier: urgent
"""


async def finished(core: Core, run_id: str, *statuses: str, within: float = 20) -> AutomationRunInfo:
    async def wait() -> AutomationRunInfo:
        while True:
            await core.automations.wait(run_id)
            [run] = await core.automations.runs(run_id=run_id)
            if run.status in statuses:
                return run
            assert run.status == "running", run
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(wait(), within)


def published(core: Core) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []
    core.notices.subscribe(lambda method, params: seen.append((method, params)))
    return seen


async def test_create_run_and_record_each_step(harness: CoreHarness, workspace: Path) -> None:
    core = await harness.core()
    seen = published(core)
    info = await core.automations.create(parse_definition(None, HELLO))
    assert info.name == "hello" and info.version == 1 and info.enabled and info.tool == "flow_hello"
    assert core.tools.get("flow_hello") is not None
    assert [(m, p.name) for m, p in seen if m == "automation/changed"] == [("automation/changed", "hello")]

    started = await core.automations.run("hello", {"who": "Ada"})
    assert started.status == "running" and started.inputs == {"who": "Ada"}
    run = await finished(core, started.id, "done")
    assert (workspace / "hello.txt").read_text() == "hello Ada"
    assert [(s.step_id, s.status) for s in run.steps] == [("greet", "done"), ("look", "done"), ("tell", "done")]
    assert run.steps[0].input == {"arguments": {"filePath": "hello.txt", "content": "hello Ada"}}
    assert "hello Ada" in str(run.steps[1].output)
    assert run.result == run.steps[2].output
    assert isinstance(run.result, dict) and run.result["outcome"] == "delivered"

    async def announced() -> None:
        while not [p for m, p in seen if m == "automation/run" and p.status == "done"]:  # noqa: ASYNC110 - polls
            await asyncio.sleep(0.02)

    await asyncio.wait_for(announced(), 5)  # progress goes out within 50 ms of a change
    [delivered] = [p for m, p in seen if m == "notification/delivered"]
    assert delivered.title == "Wrote hello.txt" and delivered.body == "for Ada" and delivered.run_id == run.id


async def test_bad_definitions_are_refused_and_change_nothing(harness: CoreHarness) -> None:
    core = await harness.core()
    with pytest.raises(ProtocolError) as bad:
        parse_definition(None, "name: x\nsteps:\n  - id: a\n    type: toolCall\n")
    assert bad.value.code == "invalid_params" and "tool" in bad.value.message
    await core.automations.create(parse_definition(None, HELLO))
    with pytest.raises(ProtocolError) as taken:
        await core.automations.create(parse_definition(None, HELLO))
    assert taken.value.code == "automation_exists"
    with pytest.raises(ProtocolError) as missing:
        await core.automations.run("nope", {})
    assert missing.value.code == "automation_not_found"
    with pytest.raises(ProtocolError) as inputs:
        await core.automations.run("hello", {"who": 3})
    assert inputs.value.code == "invalid_params"
    assert [a.name for a in await core.automations.list_all()] == ["hello"]
    assert await core.automations.runs("hello") == []


async def test_a_step_the_policy_asks_about_parks_and_approval_resumes(harness: CoreHarness, workspace: Path) -> None:
    core = await harness.core()
    await core.tool_policies.set(ToolSetPolicyParams(name="write", policy="always"))
    seen = published(core)
    await core.automations.create(parse_definition(None, HELLO))
    started = await core.automations.run("hello", {})
    run = await finished(core, started.id, "waiting_for_human")
    assert run.pending is not None and run.pending.step_id == "greet" and run.pending.tool == "write"
    assert not (workspace / "hello.txt").exists()
    assert any(m == "notification/delivered" and p.kind == "automation_approval" for m, p in seen)
    run = await core.automations.respond(run.id, approve=True)
    run = await finished(core, run.id, "done")
    assert (workspace / "hello.txt").read_text() == "hello world"
    assert [s.status for s in run.steps] == ["done", "done", "done"]


async def test_rejecting_fails_the_run_and_runs_nothing(harness: CoreHarness, workspace: Path) -> None:
    core = await harness.core()
    await core.tool_policies.set(ToolSetPolicyParams(name="write", policy="always"))
    await core.automations.create(parse_definition(None, HELLO))
    started = await core.automations.run("hello", {})
    await finished(core, started.id, "waiting_for_human")
    run = await core.automations.respond(started.id, approve=False)
    assert run.status == "failed" and run.error is not None and run.error.code == "rejected"
    assert not (workspace / "hello.txt").exists()
    with pytest.raises(ProtocolError) as again:
        await core.automations.respond(started.id, approve=True)
    assert again.value.code == "not_resumable"


async def test_agent_step_runs_an_operation_in_the_automation_session(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text="Three files changed.")])
    core = await harness.core()
    flow = "name: summary\nsteps:\n  - id: ask\n    type: agentStep\n    prompt: Summarise the folder.\n"
    await core.automations.create(parse_definition(None, flow))
    started = await core.automations.run("summary", {})
    run = await finished(core, started.id, "done")
    assert run.result == "Three files changed."
    assert run.session_id is not None
    session = await core.sessions.get(run.session_id)
    assert session.title == "Automation: summary"


async def test_a_run_stopped_with_the_server_goes_on_at_the_next_start(harness: CoreHarness, workspace: Path) -> None:
    flow = (
        "name: later\nsteps:\n  - id: wait\n    type: delay\n    seconds: 1\n"
        "  - id: greet\n    type: toolCall\n    tool: write\n    arguments: {filePath: later.txt, content: hi}\n"
    )
    core = await harness.core()
    await core.automations.create(parse_definition(None, flow))
    started = await core.automations.run("later", {})
    await asyncio.sleep(0.3)
    await core.stop()  # a clean stop, inside the delay
    harness.cores.remove(core)
    assert not (workspace / "later.txt").exists()
    core = await harness.core()
    run = await finished(core, started.id, "done")
    assert (workspace / "later.txt").read_text() == "hi"
    assert [(s.step_id, s.status) for s in run.steps] == [("wait", "done"), ("greet", "done")]


async def test_a_value_spliced_into_a_command_is_judged_after_substitution(
    harness: CoreHarness, tmp_path: Path
) -> None:
    flow = (
        "name: shout\ninputs:\n  name: {type: string}\nsteps:\n  - id: say\n    type: toolCall\n    tool: bash\n"
        "    arguments: {command: 'echo ${input.name}'}\n"
    )
    victim = tmp_path / "keep"
    victim.mkdir()
    core = await harness.core()
    await core.automations.create(parse_definition(None, flow))
    harmless = await core.automations.run("shout", {"name": "hello"})
    assert "hello" in str((await finished(core, harmless.id, "done")).result)
    hostile = await core.automations.run("shout", {"name": f"x; rm -rf {victim}"})
    run = await finished(core, hostile.id, "waiting_for_human")
    assert run.pending is not None and "Dangerous" in run.pending.reason
    assert run.pending.arguments == {"command": f"echo x; rm -rf {victim}"}
    assert victim.exists()
