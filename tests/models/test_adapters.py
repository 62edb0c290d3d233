"""Every adapter family against the mock over HTTP: the same turn, the same events, whatever the wire format.

Each test runs once per wire format: OpenAI Chat Completions (`openai`), the OpenAI Responses API (`responses`),
Anthropic Messages (`anthropic`) and Gemini (`google`).
"""

from __future__ import annotations

from typing import TypeVar

import pytest

from cowork.protocol import (
    DELTA_EVENT_TYPES,
    AssistantMessage,
    ErrorCode,
    ErrorEvent,
    EventPayload,
    ModelRetry,
    ModelStreamChunk,
    OperationStatus,
    Reasoning,
    ToolCall,
    ToolResult,
    Usage,
)
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockError, MockLLMServer, MockResponse, MockToolCall, MockUsage

pytestmark = pytest.mark.anyio

KINDS = ["openai", "responses", "anthropic", "google"]
FORMATS = {"openai": "openai", "responses": "responses", "anthropic": "anthropic", "google": "gemini"}
PROVIDERS = {"openai": "openai", "responses": "openai", "anthropic": "anthropic", "google": "google"}
RETRIES_ON = {"COWORK_AGENT__PROVIDER_MAX_RETRIES": "2", "COWORK_AGENT__RETRY_BASE_SECONDS": "0.01"}

# Stream events the mock sends before the first text delta: Chat Completions opens with a role chunk, Anthropic
# with message_start and content_block_start, Responses with created, in_progress, output_item.added and
# content_part.added; Gemini starts with text.
PREAMBLE = {"openai": 1, "responses": 4, "anthropic": 2, "google": 0}

# Twelve words, which the mock streams three at a time.
LONG_TEXT = "one two three four five six seven eight nine ten eleven twelve"
FIRST_TWO_CHUNKS = ["one two three ", "four five six "]

NOTES = "     1\t# Notes\n     2\t\n     3\tThe launch code word is PELICAN."

P = TypeVar("P", bound=EventPayload)


def of(harness: CoreHarness, session_id: str, kind: type[P]) -> list[P]:
    return [e.payload for e in harness.events[session_id] if isinstance(e.payload, kind)]


def turn_types(harness: CoreHarness, session_id: str, operation_id: str) -> list[str]:
    """The event types of one operation, in order (session-level events such as the title are left out).

    A run of stream events of one type shows once: how many events carry a run of deltas depends on timing (they
    are coalesced, see `cowork.runtime._coalesce`); the tests check their text instead.
    """
    types: list[str] = []
    for event in harness.events[session_id]:
        if getattr(event.payload, "operation_id", None) != operation_id:
            continue
        if not (event.type in DELTA_EVENT_TYPES and types and types[-1] == event.type):
            types.append(event.type)
    return types


@pytest.mark.parametrize("kind", KINDS)
async def test_reasoning_tool_call_and_answer(harness: CoreHarness, mock_llm: MockLLMServer, kind: str) -> None:
    answer = "The code word is PELICAN, as the notes say."
    mock_llm.set_script(
        [
            MockResponse(
                reasoning="Let me look.",
                tool_calls=[MockToolCall(name="read", arguments={"filePath": "docs/notes.md"})],
                usage=MockUsage(input_tokens=1200, output_tokens=40, cached_tokens=1000, reasoning_tokens=12),
            ),
            MockResponse(
                reasoning="Found it.",
                text=answer,
                usage=MockUsage(input_tokens=1300, output_tokens=55, cached_tokens=1100, reasoning_tokens=9),
            ),
        ]
    )
    core = await harness.core(kind)
    sid = await harness.session(core)
    op = await harness.start(core, sid, "What is the code word?")
    status = await harness.status(sid, op, OperationStatus.DONE, OperationStatus.ERROR)
    assert status.status == OperationStatus.DONE, status.reason

    assert turn_types(harness, sid, op) == [
        "user_message",
        "operation_status",  # running
        "reasoning",
        "tool_call",
        "usage",
        "tool_result",
        "reasoning",
        "model_stream_chunk",
        "assistant_message",
        "usage",
        "operation_status",  # done
    ]
    assert [(r.step, r.text) for r in of(harness, sid, Reasoning)] == [(1, "Let me look."), (2, "Found it.")]
    (call,) = of(harness, sid, ToolCall)
    assert (call.step, call.name, call.arguments) == (1, "read", {"filePath": "docs/notes.md"})
    (result,) = of(harness, sid, ToolResult)
    assert (result.tool_call_id, result.is_error, result.content) == (call.tool_call_id, False, NOTES)
    chunks = of(harness, sid, ModelStreamChunk)
    assert {c.step for c in chunks} == {2} and "".join(c.text for c in chunks) == answer
    assert [(m.step, m.text) for m in of(harness, sid, AssistantMessage)] == [(2, answer)]
    usage = [
        (u.step, u.provider, u.model, u.input_tokens, u.output_tokens, u.cached_tokens) for u in of(harness, sid, Usage)
    ]
    assert usage == [
        (1, PROVIDERS[kind], "mock-model", 1200, 40, 1000),
        (2, PROVIDERS[kind], "mock-model", 1300, 55, 1100),
    ]

    first, second = mock_llm.requests
    assert (first.format, second.format) == (FORMATS[kind], FORMATS[kind])
    assert first.stream and "read" in first.tools
    assert first.messages == [{"role": "user", "content": "What is the code word?"}]
    assert second.last_tool_results == [{"tool_call_id": call.tool_call_id, "content": NOTES}]
    calls = [m["tool_calls"] for m in second.messages if m.get("tool_calls")]
    assert calls == [[{"id": call.tool_call_id, "name": "read", "arguments": {"filePath": "docs/notes.md"}}]]


@pytest.mark.parametrize("kind", KINDS)
async def test_usage_counts_reasoning_tokens(harness: CoreHarness, mock_llm: MockLLMServer, kind: str) -> None:
    usage = MockUsage(input_tokens=900, output_tokens=70, cached_tokens=300, reasoning_tokens=25)
    mock_llm.set_script([MockResponse(reasoning="Hmm.", text="Done.", usage=usage)])
    core = await harness.core(kind)
    sid = await harness.session(core)
    op = await harness.start(core, sid, "think")
    await harness.status(sid, op, OperationStatus.DONE, OperationStatus.ERROR)
    (event,) = of(harness, sid, Usage)
    # Anthropic's usage has no separate thinking count (its output tokens include the thinking), so none is shown.
    reasoning = 0 if kind == "anthropic" else 25
    assert (event.input_tokens, event.output_tokens, event.cached_tokens, event.reasoning_tokens) == (
        900,
        70,
        300,
        reasoning,
    )


@pytest.mark.parametrize("kind", KINDS)
async def test_rate_limit_waits_the_retry_after_then_succeeds(
    harness: CoreHarness, mock_llm: MockLLMServer, kind: str
) -> None:
    # Retry-After is whole seconds on the wire (pydantic-ai reads no fractions), so this test waits one second.
    mock_llm.set_script([MockResponse(error=MockError(status=429, retry_after=1)), MockResponse(text="Made it.")])
    core = await harness.core(kind, env=RETRIES_ON)
    sid = await harness.session(core)
    op = await harness.start(core, sid, "hello")
    status = await harness.status(sid, op, OperationStatus.DONE, OperationStatus.ERROR)

    assert status.status == OperationStatus.DONE
    assert turn_types(harness, sid, op) == [
        "user_message",
        "operation_status",
        "model_retry",
        "model_stream_chunk",
        "assistant_message",
        "usage",
        "operation_status",
    ]
    (retry,) = of(harness, sid, ModelRetry)
    assert (retry.step, retry.attempt, retry.max_attempts) == (1, 2, 3)
    assert (retry.code, retry.delay_seconds) == (ErrorCode.RATE_LIMITED, 1.0)
    assert len(mock_llm.requests) == 2
    # The retry is the same request again.
    assert mock_llm.requests[0].messages == mock_llm.requests[1].messages


@pytest.mark.parametrize("kind", KINDS)
async def test_retry_after_beyond_the_limit_fails_at_once(
    harness: CoreHarness, mock_llm: MockLLMServer, kind: str
) -> None:
    mock_llm.set_script([MockResponse(error=MockError(status=429, retry_after=600)), MockResponse(text="never")])
    core = await harness.core(kind, env=RETRIES_ON | {"COWORK_AGENT__MAX_RETRY_AFTER_SECONDS": "30"})
    sid = await harness.session(core)
    op = await harness.start(core, sid, "hello")
    # Waiting out the 600 s would blow the harness's 20 s limit.
    status = await harness.status(sid, op, OperationStatus.DONE, OperationStatus.ERROR)

    assert (status.status, status.code) == (OperationStatus.ERROR, ErrorCode.RATE_LIMITED)
    assert turn_types(harness, sid, op) == ["user_message", "operation_status", "error", "operation_status"]
    (error,) = of(harness, sid, ErrorEvent)
    assert error.code == ErrorCode.RATE_LIMITED
    assert "600 s" in error.message and "agent.max_retry_after_seconds (30 s)" in error.message
    assert len(mock_llm.requests) == 1


@pytest.mark.parametrize("kind", KINDS)
async def test_bad_key_is_not_retried(harness: CoreHarness, mock_llm: MockLLMServer, kind: str) -> None:
    mock_llm.set_script([MockResponse(error=MockError(status=401, message="bad key")), MockResponse(text="never")])
    core = await harness.core(kind, env=RETRIES_ON)
    sid = await harness.session(core)
    op = await harness.start(core, sid, "hello")
    status = await harness.status(sid, op, OperationStatus.DONE, OperationStatus.ERROR)

    assert (status.status, status.code) == (OperationStatus.ERROR, ErrorCode.AUTH_FAILED)
    assert turn_types(harness, sid, op) == ["user_message", "operation_status", "error", "operation_status"]
    (error,) = of(harness, sid, ErrorEvent)
    assert error.code == ErrorCode.AUTH_FAILED and "/connect" in error.message
    assert status.reason == error.message
    assert len(mock_llm.requests) == 1


@pytest.mark.parametrize("kind", KINDS)
async def test_server_errors_are_retried_then_fail(harness: CoreHarness, mock_llm: MockLLMServer, kind: str) -> None:
    mock_llm.set_script([MockResponse(error=MockError(status=500, message="upstream down"))] * 3)
    core = await harness.core(kind, env=RETRIES_ON)
    sid = await harness.session(core)
    op = await harness.start(core, sid, "hello")
    status = await harness.status(sid, op, OperationStatus.DONE, OperationStatus.ERROR)

    assert (status.status, status.code) == (OperationStatus.ERROR, ErrorCode.PROVIDER_UNAVAILABLE)
    assert turn_types(harness, sid, op) == [
        "user_message",
        "operation_status",
        "model_retry",
        "model_retry",
        "error",
        "operation_status",
    ]
    retries = of(harness, sid, ModelRetry)
    assert [(r.attempt, r.max_attempts, r.code) for r in retries] == [
        (2, 3, ErrorCode.PROVIDER_UNAVAILABLE),
        (3, 3, ErrorCode.PROVIDER_UNAVAILABLE),
    ]
    # Exponential backoff from 0.01 s with jitter: never more than the backoff, never less than half of it.
    assert 0.005 <= retries[0].delay_seconds <= 0.01 and 0.01 <= retries[1].delay_seconds <= 0.02
    assert [e.code for e in of(harness, sid, ErrorEvent)] == [ErrorCode.PROVIDER_UNAVAILABLE]
    assert len(mock_llm.requests) == 3 and mock_llm.remaining == 0


@pytest.mark.parametrize("kind", KINDS)
async def test_malformed_stream_is_a_bad_response(harness: CoreHarness, mock_llm: MockLLMServer, kind: str) -> None:
    mock_llm.set_script(
        [MockResponse(text=LONG_TEXT, malformed_after_chunks=PREAMBLE[kind] + 2), MockResponse(text="never")]
    )
    core = await harness.core(kind, env=RETRIES_ON)
    sid = await harness.session(core)
    op = await harness.start(core, sid, "hello")
    status = await harness.status(sid, op, OperationStatus.DONE, OperationStatus.ERROR)

    assert (status.status, status.code) == (OperationStatus.ERROR, ErrorCode.BAD_RESPONSE)
    assert turn_types(harness, sid, op) == [
        "user_message",
        "operation_status",
        "model_stream_chunk",
        "error",
        "operation_status",
    ]
    assert "".join(c.text for c in of(harness, sid, ModelStreamChunk)) == "".join(FIRST_TWO_CHUNKS)
    assert len(mock_llm.requests) == 1


@pytest.mark.parametrize("kind", KINDS)
async def test_dropped_stream_ends_the_step_and_the_next_turn_works(
    harness: CoreHarness, mock_llm: MockLLMServer, kind: str
) -> None:
    mock_llm.set_script(
        [
            MockResponse(text=LONG_TEXT, drop_after_chunks=PREAMBLE[kind] + 2),
            MockResponse(text="Sorry, where were we?"),
        ]
    )
    core = await harness.core(kind, env=RETRIES_ON)
    sid = await harness.session(core)
    op = await harness.start(core, sid, "Count to twelve.")
    status = await harness.status(sid, op, OperationStatus.DONE, OperationStatus.ERROR)

    # Something reached the user, so the request is not sent again even though retries are on.
    assert (status.status, status.code) == (OperationStatus.ERROR, ErrorCode.PROVIDER_UNAVAILABLE)
    assert turn_types(harness, sid, op) == [
        "user_message",
        "operation_status",
        "model_stream_chunk",
        "error",
        "operation_status",
    ]
    assert "".join(c.text for c in of(harness, sid, ModelStreamChunk)) == "".join(FIRST_TWO_CHUNKS)
    assert len(mock_llm.requests) == 1
    assert [(m.role, m.text) for m in await core.sessions.messages(sid)] == [("user", "Count to twelve.")]

    again = await harness.start(core, sid, "Are you there?")
    status = await harness.status(sid, again, OperationStatus.DONE, OperationStatus.ERROR)
    assert status.status == OperationStatus.DONE, status.reason
    assert [m.text for m in of(harness, sid, AssistantMessage)] == ["Sorry, where were we?"]
    # The half answer is nowhere in what the provider is sent next.
    retry = mock_llm.requests[1]
    assert retry.format == FORMATS[kind]
    assert retry.messages == [
        {"role": "user", "content": "Count to twelve."},
        {"role": "user", "content": "Are you there?"},
    ]
