"""`searchDocuments` in real turns (mock LLM, real local embedder): the first search starts indexing the folder and
says results are partial; once indexed, the passage reaches the model marked as untrusted, with its file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cowork.protocol import Citations, OperationStatus
from cowork.retrieval import scope_of
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step

pytestmark = pytest.mark.anyio


async def _turn(harness: CoreHarness, core, mock_llm: MockLLMServer, query: str) -> tuple[str, list[Citations]]:
    mock_llm.set_script([tool_step("searchDocuments", query=query), MockResponse(text="done")])
    sid = await harness.session(core)
    op = await harness.start(core, sid, "look it up")
    await harness.status(sid, op, OperationStatus.DONE)
    result: str = mock_llm.requests[-1].last_tool_results[0]["content"]
    return result, harness.payloads(sid, Citations)


async def test_the_agent_searches_the_folder_s_documents(
    harness: CoreHarness, workspace: Path, mock_llm: MockLLMServer
) -> None:
    (workspace / "docs" / "leave.md").write_text(
        "# Holiday policy\n\nEmployees get twenty-five days of paid vacation per year.\n", encoding="utf-8"
    )
    core = await harness.core()
    first, cited = await _turn(harness, core, mock_llm, "how much time off do staff get?")
    assert cited == []  # nothing found, nothing to show
    assert "Nothing is indexed in this folder yet" in first and "indexing is in progress" in first
    for _ in range(600):
        jobs = await core.retrieval.jobs()
        if jobs and jobs[0].status == "done":
            break
        await asyncio.sleep(0.05)
    assert jobs[0].scope == scope_of(workspace) and jobs[0].status == "done"

    second, cited = await _turn(harness, core, mock_llm, "how much time off do staff get?")
    assert [(c.path, c.origin) for c in cited[0].citations][:1] == [("docs/leave.md", "tool")]
    assert cited[0].step == 1
    assert second.startswith("1 passage(s)") or "passage(s), best first" in second
    first_hit = second.split("[1] ", 1)[1]
    assert first_hit.startswith("docs/leave.md — Holiday policy")
    assert '<untrusted_content source="docs/leave.md">' in first_hit and "twenty-five days" in first_hit
