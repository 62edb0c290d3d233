"""Context compression: near the window, the oldest turns are summarised by the model and the newest kept."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import UserPromptPart

from cowork.protocol import ContextCompressed, OperationStatus
from cowork.runtime._compress import SUMMARY_PREFIX, split_point
from cowork.runtime._loading import read_thread
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockRequest, MockResponse, MockToolCall, MockUsage

pytestmark = pytest.mark.anyio
S = OperationStatus


def script(request: MockRequest) -> MockResponse:
    if request.system and "context summarizer" in request.system:
        return MockResponse(text="NOTES: the user asked about camelids; answered.")
    last = request.last_user_text or ""
    if request.last_tool_results:
        return MockResponse(text="second answer", usage=MockUsage(input_tokens=300, output_tokens=5))
    if "second" in last:
        # Near the 1,000-token window: the next request must be compressed first.
        return MockResponse(
            tool_calls=[MockToolCall(name="peek", arguments={"label": "x"})],
            usage=MockUsage(input_tokens=900, output_tokens=5),
        )
    return MockResponse(text=f"answer to: {last}", usage=MockUsage(input_tokens=100, output_tokens=5))


async def test_history_is_summarised_and_the_summary_persists(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script(script)
    core = await harness.core(env={"COWORK_AGENT__CONTEXT_WINDOW": "1000"})
    sid = await harness.session(core)
    first = await harness.start(core, sid, "first question about llamas")
    await harness.status(sid, first, S.DONE)
    second = await harness.start(core, sid, "second question")
    await harness.status(sid, second, S.DONE)

    (compressed,) = harness.payloads(sid, ContextCompressed)
    assert compressed.summarized_messages >= 2 and compressed.kept_messages >= 2
    assert compressed.tokens_after < compressed.tokens_before
    summarizer = next(r for r in mock_llm.requests if r.system and "context summarizer" in r.system)
    assert "first question about llamas" in summarizer.messages[0]["content"]
    after = mock_llm.requests[-1]
    users = [m["content"] for m in after.messages if m["role"] == "user"]
    assert users[0].startswith(SUMMARY_PREFIX) and "NOTES" in users[0]
    assert not any("first question about llamas" in u for u in users)
    assert after.last_tool_results[0]["content"] == "peeked x"  # the newest exchange is kept verbatim

    # The next turn, and a fresh read of the thread after a restart, both start from the summary.
    third = await harness.start(core, sid, "third")
    await harness.status(sid, third, S.DONE)
    assert mock_llm.requests[-1].messages[0]["content"].startswith(SUMMARY_PREFIX)
    thread = await core.db.read(lambda conn: read_thread(conn, sid))
    head_part = thread.messages[0].parts[0]
    assert isinstance(head_part, UserPromptPart) and str(head_part.content).startswith(SUMMARY_PREFIX)
    assert thread.positions[0] == -1 and thread.next_position == len(await core.sessions.messages(sid)) + 2


def test_split_point_never_separates_a_call_from_its_result() -> None:
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("q1")]),
        ModelResponse(parts=[TextPart("a1")]),
        ModelRequest(parts=[UserPromptPart("q2")]),
        ModelResponse(parts=[ToolCallPart("peek", {}, "c1")]),
        ModelRequest(parts=[ToolReturnPart("peek", "x" * 400, "c1")]),
    ]
    cut = split_point(messages, keep_tokens=50)
    assert cut == 3  # keeps the call and its result together, even though they exceed the budget alone
    assert split_point(messages[:2], keep_tokens=10) is None
