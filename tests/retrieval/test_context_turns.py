"""Context assembly and grounded refusals in real turns (mock LLM, real local embedder): passages in the turn's
system prompt; a follow-up that shares no word with its subject gets the previous answer's passages by backfill;
grounded mode refuses without a model request when nothing is indexed and when nothing relevant is found, and the
refusal never reaches a later request."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cowork.core import Core
from cowork.protocol import AssistantMessage, Citations, OperationStatus
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse

pytestmark = pytest.mark.anyio

LEAVE = "# Holiday policy\n\nEmployees get twenty-five days of paid vacation per year. Unused days expire in March.\n"
KITCHEN = "# Kitchen\n\nThe coffee machine is descaled every Friday.\n"


def _write_documents(workspace: Path) -> None:
    (workspace / "docs" / "leave.md").write_text(LEAVE, encoding="utf-8")
    (workspace / "docs" / "kitchen.md").write_text(KITCHEN, encoding="utf-8")


async def _index(core: Core, workspace: Path) -> None:
    job = await core.retrieval.add(workspace, ["."])
    for _ in range(600):
        if (await core.retrieval.job(job.id)).status == "done":
            return
        await asyncio.sleep(0.05)
    raise AssertionError("indexing did not finish")


async def _turn(harness: CoreHarness, core: Core, sid: str, text: str) -> None:
    op = await harness.start(core, sid, text)
    await harness.status(sid, op, OperationStatus.DONE)


async def test_passages_go_into_the_turn_and_a_follow_up_gets_them_by_backfill(
    harness: CoreHarness, workspace: Path, mock_llm: MockLLMServer
) -> None:
    _write_documents(workspace)
    core = await harness.core(env={"COWORK_MEMORY__CONTEXT": "auto"})
    await _index(core, workspace)
    mock_llm.set_script([MockResponse(text="Twenty-five days."), MockResponse(text="They expire in March.")])
    sid = await harness.session(core)

    await _turn(harness, core, sid, "How many vacation days do employees get?")
    first = mock_llm.requests[0].system or ""
    assert "# Passages from this folder's documents" in first
    assert '[1] docs/leave.md — Holiday policy\n<untrusted_content source="docs/leave.md">' in first
    assert "twenty-five days" in first

    follow_up = "Tell me more about that one."
    own = await core.retrieval.search(workspace, follow_up)
    assert own.hits == []  # shares no word with the policy: its own search finds nothing
    await _turn(harness, core, sid, follow_up)
    second = mock_llm.requests[1].system or ""
    assert "twenty-five days" in second  # the previous answer's passage, backfilled

    # Clients are told, in the session's log, which passages each answer was given (and how they were found).
    shown = harness.payloads(sid, Citations)
    assert [(e.citations[0].path, e.citations[0].heading, e.citations[0].origin) for e in shown] == [
        ("docs/leave.md", "Holiday policy", "search"),
        ("docs/leave.md", "Holiday policy", "backfill"),
    ]
    assert {c.origin for c in shown[1].citations} == {"backfill"}
    assert shown[0].citations[0].similarity is not None and shown[1].citations[0].similarity is None
    assert shown[0].citations[0].chunk_id == shown[1].citations[0].chunk_id
    passage = await core.retrieval.passage(workspace, shown[0].citations[0].chunk_id)
    assert passage.text.startswith("Employees get twenty-five days")


async def test_context_off_puts_no_passages_in_the_prompt(
    harness: CoreHarness, workspace: Path, mock_llm: MockLLMServer
) -> None:
    _write_documents(workspace)
    core = await harness.core()
    await _index(core, workspace)
    mock_llm.set_script([MockResponse(text="ok")])
    sid = await harness.session(core)
    await _turn(harness, core, sid, "How many vacation days do employees get?")
    assert "Passages from this folder" not in (mock_llm.requests[0].system or "")
    assert harness.payloads(sid, Citations) == []


async def test_grounded_mode_refuses_without_a_model_request_at_both_checkpoints(
    harness: CoreHarness, workspace: Path, mock_llm: MockLLMServer
) -> None:
    refusal = "Nothing in these documents answers that."
    core = await harness.core(env={"COWORK_MEMORY__GROUNDED": "no-context", "COWORK_MEMORY__REFUSAL": refusal})
    mock_llm.set_script([MockResponse(text="From the policy: twenty-five days.")])
    sid = await harness.session(core)

    await _turn(harness, core, sid, "How many vacation days do employees get?")  # checkpoint 1: nothing indexed
    assert mock_llm.requests == []
    answers = [p.text for p in harness.payloads(sid, AssistantMessage)]
    assert answers == [refusal]

    _write_documents(workspace)
    await _index(core, workspace)
    await _turn(harness, core, sid, "What is the capital of Peru?")  # checkpoint 2: nothing relevant
    assert mock_llm.requests == []
    assert [p.text for p in harness.payloads(sid, AssistantMessage)] == [refusal, refusal]

    await _turn(harness, core, sid, "How many vacation days do employees get?")
    assert len(mock_llm.requests) == 1
    request = mock_llm.requests[0]
    said = " ".join(str(m.get("content")) for m in request.messages)
    assert refusal not in said and "Peru" not in said  # the refusals and their questions stay out
    assert "twenty-five days" in (request.system or "")

    messages = await core.sessions.messages(sid)
    excluded = [(m.role, m.text) for m in messages if m.excluded_from_context]
    assert excluded == [
        ("user", "How many vacation days do employees get?"),
        ("assistant", refusal),
        ("user", "What is the capital of Peru?"),
        ("assistant", refusal),
    ]
    assert [m.text for m in messages if not m.excluded_from_context] == [
        "How many vacation days do employees get?",
        "From the policy: twenty-five days.",
    ]
