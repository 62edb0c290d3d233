"""A model step's stream through the runtime: deltas coalesced into few events, in order, nothing lost on cancel."""

from __future__ import annotations

import asyncio

import pytest

from cowork.protocol import (
    DELTA_EVENT_TYPES,
    AssistantMessage,
    ModelStreamChunk,
    OperationStatus,
    OperationStatusChanged,
    Reasoning,
    SessionEvent,
)
from cowork.runtime._coalesce import WINDOW_SECONDS
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio
S = OperationStatus


def runs(events: list[SessionEvent]) -> list[str]:
    """Event types in order, a run of one stream type shown once (how many events it takes depends on timing)."""
    types: list[str] = []
    for event in events:
        if not (event.type in DELTA_EVENT_TYPES and types and types[-1] == event.type):
            types.append(event.type)
    return types


async def test_reasoning_and_text_keep_their_order_each_first_delta_alone(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    first_thought, thought = "Look first. " * 100, "Now I know. " * 100
    answer = "word " * 300
    mock_llm.set_script(
        [
            MockResponse(reasoning=first_thought, tool_calls=[MockToolCall(name="peek", arguments={"label": "a"})]),
            MockResponse(reasoning=thought, text=answer, chunk_size=4),
        ]
    )
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "think, then answer")
    await harness.status(sid, op, S.DONE)
    await core.journal.flush()

    live = harness.events[sid]
    assert runs(live) == [
        "user_message",
        "session_updated",
        "operation_status",
        "reasoning",
        "tool_call",
        "usage",
        "tool_result",
        "reasoning",
        "model_stream_chunk",
        "assistant_message",
        "usage",
        "operation_status",
    ]
    reasoning = harness.payloads(sid, Reasoning)
    chunks = harness.payloads(sid, ModelStreamChunk)
    assert "".join(r.text for r in reasoning if r.step == 1) == first_thought
    assert "".join(r.text for r in reasoning if r.step == 2) == thought
    assert "".join(c.text for c in chunks) == answer == harness.payloads(sid, AssistantMessage)[0].text
    # Each kind's first delta went out on its own, at once (text chunks that arrived in one read are one delta, see
    # `cowork.models._raw`; reasoning chunks never are).
    second = [r for r in reasoning if r.step == 2]
    assert second[0].text == "Now " and chunks[0].text.startswith("word") and answer.startswith(chunks[0].text)
    # 375 deltas of text and 300 of reasoning in step 2, carried by far fewer events.
    assert len(chunks) * 4 <= len(answer) // 4 and len(second) * 4 <= len(thought) // 4
    replayed = await core.sessions.replay(sid, 0, 10_000)
    assert replayed.events == live


async def test_cancel_mid_stream_logs_every_delta_received_before_the_end(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    answer = "word " * 3000
    mock_llm.set_script([MockResponse(text=answer, chunk_size=5, chunk_delay_s=0.001)])
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "talk")
    await harness.until(sid, lambda events: sum(e.type == "model_stream_chunk" for e in events) >= 3)
    assert await core.runtime.cancel(sid, op)
    await harness.status(sid, op, S.CANCELLED)
    # Deltas held at the cancel are logged before the operation ends, not by a timer afterwards.
    await asyncio.sleep(WINDOW_SECONDS * 5)
    await core.journal.flush()

    live = harness.events[sid]
    assert runs(live)[-2:] == ["model_stream_chunk", "operation_status"]
    (end,) = [e for e in live if isinstance(e.payload, OperationStatusChanged) and e.payload.status == S.CANCELLED]
    assert end is live[-1]
    text = "".join(c.text for c in harness.payloads(sid, ModelStreamChunk))
    # What was logged is the answer so far, whole deltas: as before coalescing, no assistant message is stored.
    assert text and answer.startswith(text) and len(text) % 5 == 0 and len(text) < len(answer)
    assert harness.payloads(sid, AssistantMessage) == []
    assert [(m.role, m.text) for m in await core.sessions.messages(sid)] == [("user", "talk")]
    assert (await core.sessions.replay(sid, 0, 10_000)).events == live
