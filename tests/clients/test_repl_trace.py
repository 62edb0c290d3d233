"""`/trace` in the REPL, in a real pty against a real server and the mock LLM: what the last turn did, span by span,
and a plain sentence when there is nothing to show."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
import pytest

from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step
from cowork.testing.server import provider_env

from .test_cli import PROMPT, cli_env, screen, spawn

pytestmark = pytest.mark.slow
__all__ = ["cli_env"]  # the fixture, imported for these tests

HEADER = re.compile(r"\d+(?: ms|\.\d\d s) · [\d,]+ tokens in · [\d,]+ out · .+ · 2 model calls\s+trace ([0-9a-f]{32})")


def said_since(child: pexpect.spawn, mark: int) -> str:
    return screen(child)[mark:]


def test_trace_shows_the_last_turn_span_by_span(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str]
) -> None:
    mock_llm.set_script([tool_step("read", filePath="README.md"), MockResponse(text="read it")])
    child = spawn(workspace, cli_env | provider_env("openai", mock_llm.openai_base_url))
    child.expect(PROMPT)

    # A fresh session has nothing to show yet: one sentence, no method name, no error code.
    mark = len(screen(child))
    child.send("/trace\r")
    child.expect("No trace yet: send a message first.")
    child.expect(PROMPT)
    shown = said_since(child, mark)
    assert "trace/get" not in shown and "trace_not_found" not in shown and "Traceback" not in shown

    child.send("read the readme\r")
    child.expect("read it")
    child.expect(PROMPT)
    mark = len(screen(child))
    child.send("/trace\r")
    child.expect("2 model calls")  # the header (styled in parts: matched as text below)
    child.expect(PROMPT)
    lines = [line.rstrip() for line in said_since(child, mark).splitlines()]
    names = [line[:34].rstrip() for line in lines if "━" in line]  # the name column, indented by depth
    assert names == [
        "invoke_agent cowork",
        "  step 1",
        "    chat mock-model",
        "    execute_tool read",
        "  step 2",
        "    chat mock-model",
    ]
    chats = [line for line in lines if line.lstrip().startswith("chat mock-model")]
    assert all(re.search(r"━+\s+[\d,]+ in · [\d,]+ out · ", line) for line in chats)
    tool = next(line for line in lines if "execute_tool read" in line)
    assert re.search(r"execute_tool read\s+(?:<1|\d+) ms\s+━+$", tool)
    header = HEADER.search(" ".join(lines))
    assert header is not None

    # By its id (as the header shows it), the same trace; an operation there is none of: the server's sentence.
    trace_id = header.group(1)
    mark = len(screen(child))
    child.send(f"/trace {trace_id}\r")
    child.expect("2 model calls")
    child.expect(PROMPT)
    assert f"trace {trace_id}" in said_since(child, mark)
    mark = len(screen(child))
    child.send("/trace op_nothing\r")
    child.expect("No trace stored for operation op_nothing")
    child.expect(PROMPT)
    assert "trace_not_found" not in said_since(child, mark)
    child.send("/quit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
