"""End-to-end tests of the mock's Gemini `generateContent` wire format through pydantic-ai's real `GoogleModel`."""

from __future__ import annotations

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
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.providers.google import GoogleProvider
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from cowork.testing.mockllm import MockError, MockLLMServer, MockResponse, MockToolCall, MockUsage

# The SDK retries 429/5xx by default; error tests want exactly one attempt.
NO_RETRIES: ModelSettings = {"max_retries": 0}
T = TypeVar("T")
GENERATE = "/v1beta/models/mock-model:generateContent"
STREAM = "/v1beta/models/mock-model:streamGenerateContent?alt=sse"

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
async def open_model(mock: MockLLMServer) -> AsyncIterator[GoogleModel]:
    provider = GoogleProvider(api_key="test", base_url=mock.google_base_url)
    async with provider:
        yield GoogleModel("mock-model", provider=provider)


def tool(name: str) -> ToolDefinition:
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}
    return ToolDefinition(name=name, description=f"The {name} tool.", parameters_json_schema=schema)


async def ask(
    mock: MockLLMServer, messages: Sequence[ModelMessage] | str, *, stream: bool, tools: Sequence[str] = ()
) -> tuple[ModelResponse, list[ModelResponseStreamEvent]]:
    """One request through pydantic-ai's real Google adapter; the stream's events too when streaming."""
    if isinstance(messages, str):
        messages = [ModelRequest.user_text_prompt(messages)]
    params = ModelRequestParameters(function_tools=[tool(name) for name in tools])
    async with open_model(mock) as model:
        if not stream:
            response = await model_request(model, messages, model_settings=NO_RETRIES, model_request_parameters=params)
            return response, []
        async with model_request_stream(
            model, messages, model_settings=NO_RETRIES, model_request_parameters=params
        ) as streamed:
            events = [event async for event in streamed]
        return streamed.get(), events


def parts_of(response: ModelResponse, kind: type[T]) -> list[T]:
    return [part for part in response.parts if isinstance(part, kind)]


# --- text, tools, reasoning, usage ----------------------------------------------------------------------------------


@pytest.mark.anyio
@both_modes
async def test_text_answer(mock: MockLLMServer, stream: bool) -> None:
    text = 'The "quick" brown fox\njumps over the lazy dog \\ ünïcode ✓.'
    mock.set_script([MockResponse(text=text, chunk_size=5)])

    response, events = await ask(mock, "Tell me about foxes.", stream=stream)

    assert [part.content for part in parts_of(response, TextPart)] == [text]
    assert response.finish_reason == "stop"
    assert response.model_name == "mock-model"
    assert response.provider_response_id
    if stream:
        text_events = [e for e in events if isinstance(e, PartDeltaEvent) and isinstance(e.delta, TextPartDelta)]
        assert len(text_events) >= 10  # 59 characters in 5-character chunks
    [request] = mock.requests
    assert request.format == "gemini"
    assert request.model == "mock-model"
    assert request.stream is stream
    assert request.api_key == "test"
    assert request.messages == [{"role": "user", "content": "Tell me about foxes."}]
    assert mock.remaining == 0


@pytest.mark.anyio
@both_modes
async def test_tool_calls(mock: MockLLMServer, stream: bool) -> None:
    weather_args = {"city": "Reykjavík", "days": 3, "note": 'a "quoted"\nstring'}
    mock.set_script(
        [
            MockResponse(
                text="Checking.",
                tool_calls=[
                    MockToolCall(name="weather", arguments=weather_args),
                    MockToolCall(name="clock", arguments={"city": "Oslo"}, id="my-own-id"),
                ],
            )
        ]
    )

    response, _ = await ask(mock, "Weather?", stream=stream, tools=["weather", "clock"])

    calls = parts_of(response, ToolCallPart)
    assert [(call.tool_name, call.args_as_dict()) for call in calls] == [
        ("weather", weather_args),
        ("clock", {"city": "Oslo"}),
    ]
    # Gemini sends no call ids unless the script chose one; pydantic-ai makes up the missing one.
    assert calls[0].tool_call_id != "my-own-id"
    assert calls[1].tool_call_id == "my-own-id"
    assert [part.content for part in parts_of(response, TextPart)] == ["Checking."]
    assert mock.requests[0].tools == ["weather", "clock"]


@pytest.mark.anyio
@both_modes
async def test_tool_result_round_trip(mock: MockLLMServer, stream: bool) -> None:
    mock.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="weather", arguments={"city": "Oslo"})]),
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
    assert second_request.last_tool_results == [{"tool_call_id": call.tool_call_id, "content": "sunny, 21C"}]
    assert second_request.messages == [
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": call.tool_call_id, "name": "weather", "arguments": {"city": "Oslo"}}],
        },
        {"role": "tool", "content": "sunny, 21C", "tool_call_id": call.tool_call_id},
    ]


def test_calls_without_ids_pair_by_name(mock: MockLLMServer) -> None:
    # Hand-written requests (and older SDKs) send snake_case fields, no call ids and the key in the URL.
    mock.set_script([MockResponse(text="ok")])
    body: dict[str, Any] = {
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {
                "role": "model",
                "parts": [{"text": "hmm", "thought": True}, {"function_call": {"name": "weather", "args": {"c": 1}}}],
            },
            {
                "role": "user",
                "parts": [
                    {"function_response": {"name": "weather", "response": {"temp": 21}}},
                    {"text": "And tomorrow?"},
                ],
            },
        ],
        "tools": [{"function_declarations": [{"name": "weather"}]}],
    }

    reply = httpx.post(mock.url + GENERATE + "?key=k1", json=body)

    assert reply.status_code == 200
    [request] = mock.requests
    assert (request.system, request.tools, request.api_key) == ("Be brief.", ["weather"], "k1")
    assert request.messages == [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "weather", "name": "weather", "arguments": {"c": 1}}],
        },
        {"role": "tool", "content": '{"temp": 21}', "tool_call_id": "weather"},
        {"role": "user", "content": "And tomorrow?"},
    ]


@pytest.mark.anyio
@both_modes
async def test_reasoning_arrives_as_thinking(mock: MockLLMServer, stream: bool) -> None:
    mock.set_script([MockResponse(reasoning="Think it through step by step.", text="42", chunk_size=6)])

    response, events = await ask(mock, "Meaning of life?", stream=stream)

    [thinking] = parts_of(response, ThinkingPart)
    assert thinking.content == "Think it through step by step."
    assert thinking.provider_details is not None
    assert thinking.provider_details["thought_signature"]
    assert [part.content for part in parts_of(response, TextPart)] == ["42"]
    assert isinstance(response.parts[0], ThinkingPart)
    if stream:
        assert any(isinstance(e, PartStartEvent) and isinstance(e.part, ThinkingPart) for e in events)


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


def test_wire_shape(mock: MockLLMServer) -> None:
    usage = MockUsage(input_tokens=12, output_tokens=8, cached_tokens=2, reasoning_tokens=3)
    mock.set_script([MockResponse(text="Hi there", tool_calls=[MockToolCall(name="t", id="c1")], usage=usage)] * 2)
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}

    whole = httpx.post(mock.url + GENERATE, json=body).json()
    with httpx.stream("POST", mock.url + STREAM, json=body) as reply:
        raw = reply.read().decode()

    assert whole["candidates"] == [
        {
            "content": {
                "parts": [{"text": "Hi there"}, {"functionCall": {"name": "t", "args": {}, "id": "c1"}}],
                "role": "model",
            },
            "index": 0,
            "finishReason": "STOP",
        }
    ]
    assert whole["usageMetadata"] == {
        "promptTokenCount": 12,
        "candidatesTokenCount": 5,
        "totalTokenCount": 20,
        "cachedContentTokenCount": 2,
        "thoughtsTokenCount": 3,
    }
    assert whole["modelVersion"] == "mock-model"
    assert raw.endswith("\r\n\r\n")
    events = raw.split("\r\n\r\n")[:-1]
    assert all(event.startswith("data: {") for event in events)
    assert len(events) == 2  # "Hi there" in one chunk, then the call with usage and STOP
    assert '"usageMetadata"' in events[-1] and '"usageMetadata"' not in events[0]


# --- errors and broken streams --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, "INVALID_ARGUMENT"),
        (401, "UNAUTHENTICATED"),
        (403, "PERMISSION_DENIED"),
        (404, "NOT_FOUND"),
        (429, "RESOURCE_EXHAUSTED"),
        (500, "INTERNAL"),
        (503, "UNAVAILABLE"),
    ],
)
def test_error_shape(mock: MockLLMServer, status: int, expected: str) -> None:
    mock.set_script([MockResponse(error=MockError(status=status, message="nope", retry_after=3))])

    reply = httpx.post(mock.url + GENERATE, json={"contents": []})

    assert reply.status_code == status
    assert reply.headers["retry-after"] == "3"
    assert reply.json() == {"error": {"code": status, "message": "nope", "status": expected}}


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
    mock.set_script([MockResponse(text="one two three four five six", chunk_size=4, malformed_after_chunks=2)])

    with pytest.raises(ModelAPIError, match="decode") as caught:
        await ask(mock, "hi", stream=True)

    assert not isinstance(caught.value, ModelConnectionError | ModelHTTPError)


@pytest.mark.anyio
async def test_dropped_stream_raises(mock: MockLLMServer) -> None:
    mock.set_script([MockResponse(text="one two three four five six", chunk_size=4, drop_after_chunks=2)])
    with pytest.raises(ModelConnectionError):
        await ask(mock, "hi", stream=True)


def test_unknown_method_is_a_404(mock: MockLLMServer) -> None:
    reply = httpx.post(mock.url + "/v1beta/models/mock-model:countTokens", json={"contents": []})
    assert reply.status_code == 404
    assert reply.json()["error"]["status"] == "NOT_FOUND"
    assert mock.requests == []
