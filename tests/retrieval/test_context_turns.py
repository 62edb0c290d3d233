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
from cowork.retrieval import IngestError
from cowork.retrieval._assembly import Passage, fit
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


async def test_a_pinned_file_is_in_every_turn_first_and_leaves_when_unpinned(
    harness: CoreHarness, workspace: Path, mock_llm: MockLLMServer
) -> None:
    _write_documents(workspace)
    core = await harness.core()  # memory.context is off: pins apply all the same
    mock_llm.set_script([MockResponse(text="a"), MockResponse(text="b"), MockResponse(text="c")])
    pins, job = await core.retrieval.pin(workspace, "docs/kitchen.md")
    assert job is not None and [p.uri for p in pins] == ["docs/kitchen.md"]  # not indexed yet: a job for it
    for _ in range(600):
        if (await core.retrieval.job(job.id)).status == "done":
            break
        await asyncio.sleep(0.05)
    sid = await harness.session(core)
    await _turn(harness, core, sid, "How many vacation days do employees get?")
    system = mock_llm.requests[0].system or ""
    assert "[1] docs/kitchen.md — Kitchen (pinned by the user)" in system and "descaled every Friday" in system
    assert "twenty-five days" not in system  # context off: no search
    (shown,) = harness.payloads(sid, Citations)
    assert [(c.path, c.origin) for c in shown.citations] == [("docs/kitchen.md", "pinned")]

    core2 = await harness.core(env={"COWORK_MEMORY__CONTEXT": "auto"})
    await _index(core2, workspace)
    sid2 = await harness.session(core2)
    await _turn(harness, core2, sid2, "When is the coffee machine descaled? And vacation days?")
    system = mock_llm.requests[1].system or ""
    assert system.count("descaled every Friday") == 1  # pinned first, not repeated by the search
    assert system.index("docs/kitchen.md — Kitchen (pinned") < system.index("docs/leave.md")

    await core2.retrieval.unpin(workspace, "docs/kitchen.md")
    sid3 = await harness.session(core)
    await _turn(harness, core, sid3, "anything")
    assert "descaled" not in (mock_llm.requests[2].system or "")
    with pytest.raises(IngestError) as refused:
        await core.retrieval.unpin(workspace, "docs/kitchen.md")
    assert refused.value.code == "pin_not_found"
    for bad, code in (("../outside.md", "path_denied"), ("docs", "invalid_params"), ("nope.md", "path_denied")):
        with pytest.raises(IngestError) as refused:
            await core.retrieval.pin(workspace, bad)
        assert refused.value.code == code, bad
    assert await core.retrieval.pins(workspace) == []


def test_fit_drops_backfill_then_search_then_pinned() -> None:
    def passage(n: int, origin: str) -> Passage:
        return Passage(n, f"f{n}", "t", "", "x" * 400, None, origin)  # type: ignore[arg-type]

    passages = [passage(1, "pinned"), passage(2, "pinned"), passage(3, "search"), passage(4, "backfill")]
    assert [p.chunk_id for p in fit(passages, 400)] == [1, 2, 3, 4]  # 1600 chars: all fit
    assert [p.chunk_id for p in fit(passages, 300)] == [1, 2, 3]
    assert [p.chunk_id for p in fit(passages, 200)] == [1, 2]
    assert [p.chunk_id for p in fit(passages, 100)] == [1]
