"""End-to-end tests of the mock's OpenAI Responses wire format through pydantic-ai's real `OpenAIResponsesModel`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import httpx
import pytest
from pydantic_ai.direct import model_request, model_request_stream
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelServerError,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponseStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from cowork.testing.mockllm import MockError, MockLLMServer, MockResponse, MockToolCall, MockUsage

# The SDK retries 429/5xx twice with backoff by default; error tests want exactly one attempt.
NO_RETRIES: ModelSettings = {"max_retries": 0}
T = TypeVar("T")
PATH = "/v1/responses"

both_modes = pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def shared_server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


@pytest.fixture
def mock(shared_server: MockLLMServer) -> MockLLMServer:
    shared_server.set_script([])
    shared_server.reset()
    return shared_server


@asynccontextmanager
async def open_model(mock: MockLLMServer, name: str) -> AsyncIterator[OpenAIResponsesModel]:
    provider = OpenAIProvider(base_url=mock.openai_base_url, api_key="test")
    async with provider:
        yield OpenAIResponsesModel(name, provider=provider)


def tool(name: str) -> ToolDefinition:
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}
    return ToolDefinition(name=name, description=f"The {name} tool.", parameters_json_schema=schema)


async def ask(
    mock: MockLLMServer,
    messages: Sequence[ModelMessage] | str,
    *,
    stream: bool,
    tools: Sequence[str] = (),
    model: str = "mock-model",
) -> tuple[ModelResponse, list[ModelResponseStreamEvent]]:
    """One request through pydantic-ai's real Responses adapter; the stream's events too when streaming."""
    if isinstance(messages, str):
        messages = [ModelRequest.user_text_prompt(messages)]
    params = ModelRequestParameters(function_tools=[tool(name) for name in tools])
    async with open_model(mock, model) as adapter:
        if not stream:
            response = await model_request(
                adapter, messages, model_settings=NO_RETRIES, model_request_parameters=params
            )
            return response, []
        async with model_request_stream(
            adapter, messages, model_settings=NO_RETRIES, model_request_parameters=params
        ) as streamed:
            events = [event async for event in streamed]
        return streamed.get(), events


def parts_of(response: ModelResponse, kind: type[T]) -> list[T]:
    return [part for part in response.parts if isinstance(part, kind)]


def sse_events(raw: str) -> list[tuple[str, dict[str, Any]]]:
    """`(event name, data)` per SSE event, checking each event's name matches its data's `type`."""
    events: list[tuple[str, dict[str, Any]]] = []
    for block in raw.split("\n\n"):
        if not block:
            continue
        name_line, data_line = block.split("\n")
        name, data = name_line.removeprefix("event: "), json.loads(data_line.removeprefix("data: "))
        assert data["type"] == name
        events.append((name, data))
    return events


# --- text, tools, reasoning, usage ----------------------------------------------------------------------------------


@pytest.mark.anyio
@both_modes
async def test_text_answer(mock: MockLLMServer, stream: bool) -> None:
    text = 'The "quick" brown fox\njumps over the lazy dog \\ ünïcode ✓.'
    mock.set_script([MockResponse(text=text, chunk_size=5)])

    response, events = await ask(mock, "Tell me about foxes.", stream=stream)

    assert [part.content for part in parts_of(response, TextPart)] == [text]
    assert response.finish_reason == "stop"
    assert response.provider_response_id is not None
    assert response.provider_response_id.startswith("resp_")
    if stream:
        text_events = [e for e in events if isinstance(e, PartDeltaEvent) and isinstance(e.delta, TextPartDelta)]
        assert len(text_events) >= 10  # 59 characters in 5-character deltas
    [request] = mock.requests
    assert request.format == "responses"
    assert request.model == "mock-model"
    assert request.stream is stream
    assert request.api_key == "test"
    assert request.messages == [{"role": "user", "content": "Tell me about foxes."}]
    assert mock.remaining == 0


@pytest.mark.anyio
@both_modes
async def test_tool_calls(mock: MockLLMServer, stream: bool) -> None:
    weather_args = {"city": "Reykjavík", "days": 3, "note": 'a "long-ish" string\nso the JSON needs several pieces'}
    mock.set_script(
        [
            MockResponse(
                text="Checking.",
                tool_calls=[
                    MockToolCall(name="weather", arguments=weather_args),
                    MockToolCall(name="clock", arguments={"city": "Oslo"}, id="my-own-id"),
                ],
                chunk_size=7,
            )
        ]
    )

    response, events = await ask(mock, "Weather?", stream=stream, tools=["weather", "clock"])

    calls = parts_of(response, ToolCallPart)
    assert [(call.tool_name, call.args_as_dict()) for call in calls] == [
        ("weather", weather_args),
        ("clock", {"city": "Oslo"}),
    ]
    assert [call.tool_call_id for call in calls] == ["call_1", "my-own-id"]
    assert all(call.id is not None and call.id.startswith("fc_") for call in calls)
    if stream:
        arg_deltas = [e for e in events if isinstance(e, PartDeltaEvent) and isinstance(e.delta, ToolCallPartDelta)]
        assert len(arg_deltas) > 5
    assert mock.requests[0].tools == ["weather", "clock"]


@pytest.mark.anyio
@both_modes
async def test_tool_result_round_trip(mock: MockLLMServer, stream: bool) -> None:
    mock.set_script(
        [
            MockResponse(text="Let me look.", tool_calls=[MockToolCall(name="weather", arguments={"city": "Oslo"})]),
            MockResponse(text="It is sunny."),
        ]
    )
    first_turn = ModelRequest(parts=[SystemPromptPart("You are terse."), UserPromptPart("Weather in Oslo?")])

    first, _ = await ask(mock, [first_turn], stream=stream, tools=["weather"])
    [call] = parts_of(first, ToolCallPart)
    tool_return = ToolReturnPart(tool_name="weather", content="sunny, 21C", tool_call_id=call.tool_call_id)
    second, _ = await ask(mock, [first_turn, first, ModelRequest(parts=[tool_return])], stream=stream)

    assert [part.content for part in parts_of(second, TextPart)] == ["It is sunny."]
    first_request, second_request = mock.requests
    assert first_request.system == second_request.system == "You are terse."
    assert second_request.last_tool_results == [{"tool_call_id": "call_1", "content": "sunny, 21C"}]
    assert second_request.messages == [
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [{"id": "call_1", "name": "weather", "arguments": {"city": "Oslo"}}],
        },
        {"role": "tool", "content": "sunny, 21C", "tool_call_id": "call_1"},
    ]


@pytest.mark.anyio
@both_modes
async def test_reasoning_arrives_as_thinking(mock: MockLLMServer, stream: bool) -> None:
    mock.set_script([MockResponse(reasoning="Think it through step by step.", text="42", chunk_size=6)])

    response, events = await ask(mock, "Meaning of life?", stream=stream)

    [thinking] = parts_of(response, ThinkingPart)
    assert thinking.content == "Think it through step by step."
    assert thinking.id is not None and thinking.id.startswith("rs_")
    assert thinking.signature is None  # no encrypted content unless the request asks for it
    assert [part.content for part in parts_of(response, TextPart)] == ["42"]
    assert isinstance(response.parts[0], ThinkingPart)
    if stream:
        assert any(isinstance(e, PartStartEvent) and isinstance(e.part, ThinkingPart) for e in events)


@pytest.mark.anyio
@both_modes
async def test_encrypted_reasoning_round_trip(mock: MockLLMServer, stream: bool) -> None:
    # pydantic-ai asks reasoning models (by name) for `reasoning.encrypted_content` and replays the reasoning item.
    mock.set_script(
        [
            MockResponse(
                reasoning="Look it up.", tool_calls=[MockToolCall(name="weather", arguments={"city": "Oslo"})]
            ),
            MockResponse(text="Sunny."),
        ]
    )
    first_turn = ModelRequest.user_text_prompt("Weather?")

    first, _ = await ask(mock, [first_turn], stream=stream, tools=["weather"], model="gpt-5")
    [thinking] = parts_of(first, ThinkingPart)
    [call] = parts_of(first, ToolCallPart)
    tool_return = ModelRequest(parts=[ToolReturnPart(tool_name="weather", content="sunny", tool_call_id="call_1")])
    await ask(mock, [first_turn, first, tool_return], stream=stream, tools=["weather"], model="gpt-5")

    assert thinking.signature
    assert mock.requests[0].body["include"] == ["reasoning.encrypted_content"]
    replayed = [item for item in mock.requests[1].body["input"] if item.get("type") == "reasoning"]
    assert replayed == [
        {
            "id": thinking.id,
            "summary": [{"text": "Look it up.", "type": "summary_text"}],
            "encrypted_content": thinking.signature,
            "type": "reasoning",
        }
    ]
    assert mock.requests[1].messages == [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": call.tool_call_id, "name": "weather", "arguments": {"city": "Oslo"}}],
        },
        {"role": "tool", "content": "sunny", "tool_call_id": "call_1"},
    ]


@pytest.mark.anyio
@both_modes
async def test_scripted_usage(mock: MockLLMServer, stream: bool) -> None:
    usage = MockUsage(input_tokens=120, output_tokens=40, cached_tokens=20, reasoning_tokens=10)
    mock.set_script([MockResponse(text="ok", reasoning="hmm", usage=usage)])

    response, _ = await ask(mock, "hi", stream=stream)

    assert response.usage.input_tokens == 120
    assert response.usage.output_tokens == 40
    assert response.usage.cache_read_tokens == 20
    assert response.usage.output_reasoning_tokens == 10


def test_request_normalisation(mock: MockLLMServer) -> None:
    mock.set_script([MockResponse(text="a"), MockResponse(text="b")])
    body: dict[str, Any] = {
        "model": "m",
        "instructions": "Be brief.",
        "input": [
            {"role": "developer", "content": [{"type": "input_text", "text": "No emoji."}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello."}]},
            {"type": "function_call", "call_id": "c1", "name": "t", "arguments": '{"x": 1}'},
            {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "done"}]},
        ],
        "tools": [{"type": "function", "name": "t"}, {"type": "web_search"}],
    }

    httpx.post(mock.url + PATH, json=body, headers={"authorization": "Bearer k1"})
    httpx.post(mock.url + PATH, json={"model": "m", "input": "Just a string."})

    first, second = mock.requests
    assert (first.system, first.tools, first.api_key, first.stream) == ("Be brief.\n\nNo emoji.", ["t"], "k1", False)
    assert first.messages == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello.", "tool_calls": [{"id": "c1", "name": "t", "arguments": {"x": 1}}]},
        {"role": "tool", "content": "done", "tool_call_id": "c1"},
    ]
    assert (second.system, second.messages) == (None, [{"role": "user", "content": "Just a string."}])


def test_stream_event_sequence(mock: MockLLMServer) -> None:
    usage = MockUsage(input_tokens=10, output_tokens=6, cached_tokens=4, reasoning_tokens=2)
    call = MockToolCall(name="t", arguments={"x": 1})
    mock.set_script([MockResponse(reasoning="Hmm.", text="Hi there you", tool_calls=[call], usage=usage)])

    with httpx.stream("POST", mock.url + PATH, json={"model": "m", "input": "hi", "stream": True}) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        events = sse_events(reply.read().decode())

    assert [name for name, _ in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    completed = events[-1][1]["response"]
    assert completed["status"] == "completed"
    assert [item["type"] for item in completed["output"]] == ["reasoning", "message", "function_call"]
    assert completed["usage"] == {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 4},
        "output_tokens": 6,
        "output_tokens_details": {"reasoning_tokens": 2},
        "total_tokens": 16,
    }
    assert events[0][1]["response"]["usage"] is None


# --- errors and broken streams --------------------------------------------------------------------------------------


def test_rate_limit_error_shape(mock: MockLLMServer) -> None:
    mock.set_script([MockResponse(error=MockError(status=429, message="slow down", retry_after=3))])

    reply = httpx.post(mock.url + PATH, json={"model": "m", "input": "hi"})

    assert reply.status_code == 429
    assert reply.headers["retry-after"] == "3"
    assert reply.json() == {
        "error": {"message": "slow down", "type": "rate_limit_error", "param": None, "code": "rate_limit_exceeded"}
    }


@pytest.mark.anyio
@both_modes
@pytest.mark.parametrize(
    ("status", "error_type"), [(401, ModelAuthenticationError), (429, ModelRateLimitError), (500, ModelServerError)]
)
async def test_errors_reach_pydantic_ai(
    mock: MockLLMServer, stream: bool, status: int, error_type: type[ModelAPIError]
) -> None:
    mock.set_script([MockResponse(error=MockError(status=status, message="nope", retry_after=2))])

    with pytest.raises(ModelHTTPError) as caught:
        await ask(mock, "hi", stream=stream)

    assert isinstance(caught.value, error_type)
    assert caught.value.status_code == status
    assert caught.value.headers is not None
    assert caught.value.headers["retry-after"] == "2"
    assert "nope" in str(caught.value.body)
    assert len(mock.requests) == 1


@pytest.mark.anyio
async def test_malformed_stream_raises(mock: MockLLMServer) -> None:
    mock.set_script([MockResponse(text="one two three four five six", chunk_size=4, malformed_after_chunks=5)])

    with pytest.raises(ModelAPIError, match="decode") as caught:
        await ask(mock, "hi", stream=True)

    assert not isinstance(caught.value, ModelConnectionError | ModelHTTPError)


@pytest.mark.anyio
async def test_dropped_stream_raises(mock: MockLLMServer) -> None:
    mock.set_script([MockResponse(text="one two three four five six", chunk_size=4, drop_after_chunks=5)])
    with pytest.raises(ModelConnectionError):
        await ask(mock, "hi", stream=True)
