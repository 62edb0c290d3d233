"""Observational memory in real turns (mock LLM, real local embedder): an `observe` operation notes dated
observations of a conversation's new turns in one model request (the transcript's tool output marked as data), they
are indexed for `recall`, a second pass with nothing new asks nothing, idle conversations are found and observed,
and a forgotten observation leaves the index."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from cowork.protocol import OperationStatus, OperationStatusChanged, SessionRef
from cowork.server._handlers.sessions import session_delete
from cowork.store import repos
from cowork.store._schema import operations
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step

pytestmark = pytest.mark.anyio

OBSERVED = (
    "- Ada leads the finance team.\n- The Berlin office lease is to be renewed for five years.\nProse is ignored."
)


async def _turn(harness: CoreHarness, core, sid: str, text: str) -> str:
    op = await harness.start(core, sid, text)
    await harness.status(sid, op, OperationStatus.DONE)
    return op


async def _observe(harness: CoreHarness, core, sid: str) -> str:
    op = (await core.runtime.observe(sid)).operation_id
    await harness.status(sid, op, OperationStatus.DONE)
    row = await core.db.read(lambda c: repos.operations.get(c, op))
    return str(row.summary)


async def test_a_conversation_is_observed_once_and_recalled_elsewhere(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    core = await harness.core(env={"COWORK_MEMORY__OBSERVE": "false"})  # only explicit passes here
    mock_llm.set_script(
        [
            MockResponse(text="Noted, Ada."),
            MockResponse(text=OBSERVED),
            tool_step("recall", query="who is the head of finance?"),
            MockResponse(text="Ada."),
        ]
    )
    first = await harness.session(core)
    await _turn(harness, core, first, "I'm Ada and I lead the finance team. We renew the Berlin lease for 5 years.")
    summary = await _observe(harness, core, first)
    request = mock_llm.requests[1]
    assert "observer of an AI coworker's long-term memory" in (request.system or "")
    assert "USER: I'm Ada and I lead the finance team" in str(request.body)

    observed = await core.recall.observations(harness.workspace)
    (row, text) = observed[0]
    today = datetime.now().astimezone().strftime("%Y-%m-%d")
    assert text.splitlines() == [
        f"- {today}: Ada leads the finance team.",
        f"- {today}: The Berlin office lease is to be renewed for five years.",
    ]
    assert row.uri.startswith(f"{first}/") and len(observed) == 1
    assert summary == "Noted 2 observations from this conversation for later recall."

    asked = len(mock_llm.requests)
    assert await _observe(harness, core, first) == "Nothing new to observe in this conversation."
    assert len(mock_llm.requests) == asked

    second = await harness.session(core)
    await _turn(harness, core, second, "remind me")
    found = mock_llm.requests[-1].last_tool_results[0]["content"]
    assert "Ada leads the finance team" in found

    assert await core.recall.forget_observation(harness.workspace, row.uri)
    assert await core.recall.observations(harness.workspace) == []
    hits = await core.recall.search(
        harness.workspace, "who runs finance?", limit=5, exclude_session=None, min_similarity=None
    )
    assert all("Ada leads the finance team" not in h.text for h in hits)


async def test_idle_conversations_are_observed(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    core = await harness.core(
        env={"COWORK_MEMORY__OBSERVE_IDLE_MINUTES": "0", "COWORK_MEMORY__OBSERVE_MIN_MESSAGES": "2"}
    )
    mock_llm.set_script([MockResponse(text="Hello."), MockResponse(text="NOTHING")])
    sid = await harness.session(core)
    await _turn(harness, core, sid, "hello there")
    assert await core.recall.observe_idle() == [sid]
    await harness.until(sid, lambda _e: any(
        p.status == "done" and p.operation_id != harness.payloads(sid, OperationStatusChanged)[0].operation_id
        for p in harness.payloads(sid, OperationStatusChanged)
    ))  # fmt: skip
    assert await core.recall.observations(harness.workspace) == []  # NOTHING worth remembering: nothing indexed
    assert await core.recall.observe_idle() == []  # observed up to its last message: not again


async def test_old_conversations_are_not_observed_and_a_deleted_one_takes_its_observations(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    core = await harness.core(
        env={"COWORK_MEMORY__OBSERVE_IDLE_MINUTES": "0", "COWORK_MEMORY__OBSERVE_MIN_MESSAGES": "1"}
    )
    mock_llm.set_script([MockResponse(text="Hi."), MockResponse(text="Hello."), MockResponse(text=OBSERVED)])
    old, recent = await harness.session(core), await harness.session(core)
    await _turn(harness, core, old, "an old conversation")
    await _turn(harness, core, recent, "I'm Ada and I lead the finance team.")
    long_ago = datetime.now(UTC) - timedelta(days=8)
    await core.db.write(
        lambda c: c.execute(sa.update(operations).where(operations.c.session_id == old).values(updated_at=long_ago))
    )
    assert await core.recall.observe_idle() == [recent]  # eight days quiet: never observed in the background
    await harness.until(recent, lambda _e: len(harness.payloads(recent, OperationStatusChanged)) >= 4)
    for _ in range(200):
        if await core.recall.observations(harness.workspace):
            break
        await asyncio.sleep(0.05)
    assert len(await core.recall.observations(harness.workspace)) == 1

    await session_delete(core, None, SessionRef(session_id=recent))
    assert await core.recall.observations(harness.workspace) == []
    assert await core.db.read(lambda c: repos.settings.get(c, f"observed:{recent}")) is None
