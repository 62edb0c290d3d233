"""End-to-end tests of the mock LLM server through pydantic-ai's real OpenAI and Anthropic adapters."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx
import pytest
from pydantic_ai.direct import model_request, model_request_stream
from pydantic_ai.exceptions import ModelAPIError, ModelConnectionError, ModelHTTPError
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
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from cowork.testing.mockllm import (
    MockError,
    MockLLMServer,
    MockRequest,
    MockResponse,
    MockToolCall,
    MockUsage,
    load_script,
)

Format = Literal["openai", "anthropic"]
FORMATS: list[Format] = ["openai", "anthropic"]
# The SDKs retry 429/5xx twice with backoff by default; error tests want exactly one attempt.
NO_RETRIES: ModelSettings = {"max_retries": 0}
T = TypeVar("T")
OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"


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
async def open_model(mock: MockLLMServer, fmt: Format) -> AsyncIterator[Model]:
    if fmt == "openai":
        openai_provider = OpenAIProvider(base_url=mock.openai_base_url, api_key="test")
        async with openai_provider:
            yield OpenAIChatModel("mock-model", provider=openai_provider)
    else:
        anthropic_provider = AnthropicProvider(base_url=mock.anthropic_base_url, api_key="test")
        async with anthropic_provider:
            yield AnthropicModel("mock-model", provider=anthropic_provider)


def tool(name: str) -> ToolDefinition:
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}
    return ToolDefinition(name=name, description=f"The {name} tool.", parameters_json_schema=schema)


async def ask(
    mock: MockLLMServer,
    fmt: Format,
    messages: Sequence[ModelMessage] | str,
    *,
    stream: bool,
    tools: Sequence[str] = (),
) -> tuple[ModelResponse, list[ModelResponseStreamEvent]]:
    """One request through pydantic-ai's real adapter; the stream's events too when streaming."""
    if isinstance(messages, str):
        messages = [ModelRequest.user_text_prompt(messages)]
    params = ModelRequestParameters(function_tools=[tool(name) for name in tools])
    async with open_model(mock, fmt) as model:
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


both_formats = pytest.mark.parametrize("fmt", FORMATS)
both_modes = pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])


# --- text, tools, reasoning, usage ----------------------------------------------------------------------------------


@pytest.mark.anyio
@both_formats
@both_modes
async def test_text_answer(mock: MockLLMServer, fmt: Format, stream: bool) -> None:
    # Quotes, backslashes, newlines and non-ASCII must survive the hand-built stream chunks.
    text = 'The "quick" brown fox\njumps over the lazy dog \\ ünïcode ✓.'
    mock.set_script([MockResponse(text=text, chunk_size=5)])

    response, events = await ask(mock, fmt, "Tell me about foxes.", stream=stream)

    assert [part.content for part in parts_of(response, TextPart)] == [text]
    assert response.finish_reason == "stop"
    if stream:
        text_events = [e for e in events if isinstance(e, PartDeltaEvent) and isinstance(e.delta, TextPartDelta)]
        assert len(text_events) >= 10  # 59 characters in 5-character deltas
    [request] = mock.requests
    assert request.format == fmt
    assert request.model == "mock-model"
    assert request.stream is stream
    assert request.api_key == "test"
    assert request.messages == [{"role": "user", "content": "Tell me about foxes."}]
    assert mock.remaining == 0


@pytest.mark.anyio
@both_formats
@both_modes
async def test_tool_calls(mock: MockLLMServer, fmt: Format, stream: bool) -> None:
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

    response, events = await ask(mock, fmt, "Weather?", stream=stream, tools=["weather", "clock"])

    calls = parts_of(response, ToolCallPart)
    assert [(call.tool_name, call.args_as_dict()) for call in calls] == [
        ("weather", weather_args),
        ("clock", {"city": "Oslo"}),
    ]
    prefix = "call_" if fmt == "openai" else "toolu_"
    assert [call.tool_call_id for call in calls] == [f"{prefix}1", "my-own-id"]
    assert response.finish_reason == "tool_call"
    if stream:
        arg_deltas = [e for e in events if isinstance(e, PartDeltaEvent) and isinstance(e.delta, ToolCallPartDelta)]
        assert len(arg_deltas) > 5
    assert mock.requests[0].tools == ["weather", "clock"]


@pytest.mark.anyio
@both_formats
@both_modes
async def test_reasoning_arrives_as_thinking(mock: MockLLMServer, fmt: Format, stream: bool) -> None:
    mock.set_script([MockResponse(reasoning="Think it through step by step.", text="42", chunk_size=6)])

    response, events = await ask(mock, fmt, "Meaning of life?", stream=stream)

    [thinking] = parts_of(response, ThinkingPart)
    assert thinking.content == "Think it through step by step."
    if fmt == "anthropic":
        assert thinking.signature
    assert [part.content for part in parts_of(response, TextPart)] == ["42"]
    assert isinstance(response.parts[0], ThinkingPart)
    if stream:
        assert any(isinstance(e, PartStartEvent) and isinstance(e.part, ThinkingPart) for e in events)


@pytest.mark.anyio
@both_formats
@both_modes
async def test_scripted_usage(mock: MockLLMServer, fmt: Format, stream: bool) -> None:
    usage = MockUsage(input_tokens=120, output_tokens=40, cached_tokens=20, reasoning_tokens=10)
    mock.set_script([MockResponse(text="ok", reasoning="hmm", usage=usage)])

    response, _ = await ask(mock, fmt, "hi", stream=stream)

    assert response.usage.input_tokens == 120
    assert response.usage.output_tokens == 40
    assert response.usage.cache_read_tokens == 20
    if fmt == "openai":  # Anthropic reports no separate thinking count
        assert response.usage.output_reasoning_tokens == 10


@pytest.mark.anyio
@both_formats
async def test_default_usage_is_plausible(mock: MockLLMServer, fmt: Format) -> None:
    mock.set_script([MockResponse(text="x" * 400)])
    response, _ = await ask(mock, fmt, "y" * 800, stream=False)
    assert response.usage.input_tokens == 200
    assert response.usage.output_tokens == 100


# --- conversations and scripts --------------------------------------------------------------------------------------


@pytest.mark.anyio
@both_formats
@both_modes
async def test_tool_result_round_trip(mock: MockLLMServer, fmt: Format, stream: bool) -> None:
    mock.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="weather", arguments={"city": "Oslo"})]),
            MockResponse(text="It is sunny."),
        ]
    )
    first_turn = ModelRequest(parts=[SystemPromptPart("You are terse."), UserPromptPart("Weather in Oslo?")])

    first, _ = await ask(mock, fmt, [first_turn], stream=stream, tools=["weather"])
    [call] = parts_of(first, ToolCallPart)
    tool_return = ToolReturnPart(tool_name="weather", content="sunny, 21C", tool_call_id=call.tool_call_id)
    second, _ = await ask(mock, fmt, [first_turn, first, ModelRequest(parts=[tool_return])], stream=stream)

    assert [part.content for part in parts_of(second, TextPart)] == ["It is sunny."]
    first_request, second_request = mock.requests
    assert first_request.system == second_request.system == "You are terse."
    assert first_request.last_tool_results == []
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


@pytest.mark.anyio
@both_formats
async def test_callback_scripts(mock: MockLLMServer, fmt: Format) -> None:
    def shout(request: MockRequest) -> MockResponse:
        return MockResponse(text=(request.last_user_text or "").upper())

    async def count(request: MockRequest) -> MockResponse:
        return MockResponse(text=f"{request.format}: request {len(mock.requests)}")

    mock.set_script(shout)
    response, _ = await ask(mock, fmt, "quiet please", stream=True)
    assert parts_of(response, TextPart)[0].content == "QUIET PLEASE"
    assert mock.remaining is None

    mock.set_script(count)
    response, _ = await ask(mock, fmt, "again", stream=False)
    assert parts_of(response, TextPart)[0].content == f"{fmt}: request 2"


@pytest.mark.anyio
@both_formats
async def test_failing_callback_is_a_500(mock: MockLLMServer, fmt: Format) -> None:
    def broken(request: MockRequest) -> MockResponse:
        raise LookupError("no answer for this")

    mock.set_script(broken)
    with pytest.raises(ModelHTTPError) as caught:
        await ask(mock, fmt, "hi", stream=False)
    assert caught.value.status_code == 500
    assert "no answer for this" in str(caught.value.body)


@pytest.mark.anyio
@both_formats
@both_modes
async def test_exhausted_script_is_a_500(mock: MockLLMServer, fmt: Format, stream: bool) -> None:
    mock.set_script([MockResponse(text="only one")])
    await ask(mock, fmt, "first", stream=stream)

    with pytest.raises(ModelHTTPError) as caught:
        await ask(mock, fmt, "second", stream=stream)

    assert caught.value.status_code == 500
    assert "mock script exhausted" in str(caught.value.body)
    assert len(mock.requests) == 2  # max_retries=0: no SDK retry


def test_reset_rewinds_the_script(mock: MockLLMServer) -> None:
    mock.set_script([MockResponse(text="a"), MockResponse(text="b")])
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    first = httpx.post(mock.openai_base_url + "/chat/completions", json=body).json()
    mock.reset()
    again = httpx.post(mock.openai_base_url + "/chat/completions", json=body).json()
    assert first["choices"][0]["message"]["content"] == again["choices"][0]["message"]["content"] == "a"
    assert len(mock.requests) == 1
    assert mock.remaining == 1


# --- errors and broken connections ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "path"), [("openai", OPENAI_PATH), ("anthropic", ANTHROPIC_PATH)])
def test_rate_limit_error_shape_and_retry_after(mock: MockLLMServer, fmt: Format, path: str) -> None:
    mock.set_script([MockResponse(error=MockError(status=429, message="slow down", retry_after=3))])

    reply = httpx.post(mock.url + path, json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})

    assert reply.status_code == 429
    assert reply.headers["retry-after"] == "3"
    if fmt == "openai":
        assert reply.json() == {
            "error": {"message": "slow down", "type": "rate_limit_error", "param": None, "code": "rate_limit_exceeded"}
        }
    else:
        assert reply.json() == {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}


@pytest.mark.anyio
@both_formats
@pytest.mark.parametrize("status", [401, 429])
async def test_errors_reach_pydantic_ai(mock: MockLLMServer, fmt: Format, status: int) -> None:
    mock.set_script([MockResponse(error=MockError(status=status, message="nope", retry_after=0.01))])
    with pytest.raises(ModelHTTPError) as caught:
        await ask(mock, fmt, "hi", stream=True)
    assert caught.value.status_code == status
    assert "nope" in str(caught.value.body)


@pytest.mark.anyio
@both_formats
async def test_dropped_stream_raises(mock: MockLLMServer, fmt: Format) -> None:
    mock.set_script([MockResponse(text="one two three four five six seven eight", chunk_size=4, drop_after_chunks=4)])
    with pytest.raises(ModelConnectionError):
        await ask(mock, fmt, "hi", stream=True)


@pytest.mark.anyio
@both_formats
async def test_malformed_stream_raises(mock: MockLLMServer, fmt: Format) -> None:
    mock.set_script([MockResponse(text="one two three four five six", chunk_size=4, malformed_after_chunks=3)])

    with pytest.raises(ModelAPIError, match="decode") as caught:
        await ask(mock, fmt, "hi", stream=True)

    assert not isinstance(caught.value, ModelConnectionError | ModelHTTPError)


@pytest.mark.parametrize(
    ("path", "body", "separator"),
    [
        (OPENAI_PATH, {"model": "m", "messages": [], "stream": True}, "\n\n"),
        (ANTHROPIC_PATH, {"model": "m", "messages": [], "stream": True}, "\n\n"),
        ("/v1/responses", {"model": "m", "input": "hi", "stream": True}, "\n\n"),
        ("/v1beta/models/m:streamGenerateContent?alt=sse", {"contents": []}, "\r\n\r\n"),
    ],
    ids=["openai", "anthropic", "responses", "gemini"],
)
def test_malformed_event_ends_the_stream_cleanly(
    mock: MockLLMServer, path: str, body: dict[str, Any], separator: str
) -> None:
    mock.set_script([MockResponse(text="one two three four five six", chunk_size=4, malformed_after_chunks=2)])

    with httpx.stream("POST", mock.url + path, json=body) as reply:
        raw = reply.read().decode()  # a complete body: no RemoteProtocolError

    *good, bad, rest = raw.split(separator)
    assert len(good) == 2
    for event in good:
        json.loads(event.rsplit("data: ", 1)[1])
    with pytest.raises(json.JSONDecodeError):
        json.loads(bad.rsplit("data: ", 1)[1])
    assert rest == ""


def test_bad_request_body_is_a_400(mock: MockLLMServer) -> None:
    reply = httpx.post(mock.url + ANTHROPIC_PATH, content=b"not json", headers={"content-type": "application/json"})
    assert reply.status_code == 400
    assert reply.json()["type"] == "error"
    assert mock.requests == []


def test_unrecorded_requests_are_answered_but_not_kept() -> None:
    with MockLLMServer([MockResponse(text="one"), MockResponse(text="two")], record=False) as mock:
        for expected in ("one", "two"):
            reply = httpx.post(mock.openai_base_url + "/chat/completions", json={"model": "m", "messages": []})
            assert reply.json()["choices"][0]["message"]["content"] == expected
        assert mock.requests == []
        assert mock.remaining == 0


def test_delay(mock: MockLLMServer) -> None:
    mock.set_script([MockResponse(text="slow", delay_s=0.2)])
    started = time.monotonic()
    reply = httpx.post(mock.openai_base_url + "/chat/completions", json={"model": "m", "messages": []})
    assert reply.status_code == 200
    assert time.monotonic() - started >= 0.2


def test_hang_until_client_gives_up(mock: MockLLMServer) -> None:
    mock.set_script([MockResponse(hang=True), MockResponse(text="after")])
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(mock.openai_base_url + "/chat/completions", json=body, timeout=0.3)
    reply = httpx.post(mock.openai_base_url + "/chat/completions", json=body)
    assert reply.json()["choices"][0]["message"]["content"] == "after"


def test_stop_cuts_a_hanging_request_short() -> None:
    outcome: list[int | str] = []
    threads_before = threading.active_count()
    with MockLLMServer([MockResponse(hang=True)]) as mock:

        def call() -> None:
            try:
                reply = httpx.post(mock.url + ANTHROPIC_PATH, json={"model": "m", "messages": []}, timeout=10)
                outcome.append(reply.status_code)
            except httpx.HTTPError as e:
                outcome.append(type(e).__name__)

        client = threading.Thread(target=call)
        client.start()
        while not mock.requests:
            time.sleep(0.01)
        started = time.monotonic()
    assert time.monotonic() - started < 3
    client.join(5)
    assert outcome == [503]
    assert threading.active_count() == threads_before


# --- other endpoints, scripts and the CLI ---------------------------------------------------------------------------


def test_models_and_healthz() -> None:
    with MockLLMServer(models=["alpha", "beta"]) as mock:
        models = httpx.get(mock.openai_base_url + "/models").json()
        health = httpx.get(mock.url + "/healthz")
    assert models["object"] == "list"
    assert [(m["id"], m["object"]) for m in models["data"]] == [("alpha", "model"), ("beta", "model")]
    assert (health.status_code, health.text) == (200, "ok")


def test_restart_after_stop() -> None:
    mock = MockLLMServer([MockResponse(text="a"), MockResponse(text="b")])
    for expected in ("a", "b"):
        with mock:
            reply = httpx.post(mock.openai_base_url + "/chat/completions", json={"model": "m", "messages": []})
        assert reply.json()["choices"][0]["message"]["content"] == expected
    with pytest.raises(TypeError):
        mock.set_script(MockResponse(text="not in a list"))  # type: ignore[arg-type]


def test_load_script_list_and_loop(tmp_path: Path) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps([{"text": "a"}, {"tool_calls": [{"name": "t", "arguments": {"x": 1}}]}]))
    assert load_script(plain) == [
        MockResponse(text="a"),
        MockResponse(tool_calls=[MockToolCall(name="t", arguments={"x": 1})]),
    ]

    looping = tmp_path / "loop.json"
    looping.write_text(json.dumps({"responses": [{"text": "a"}, {"text": "b"}], "loop": True}))
    script = load_script(looping)
    assert callable(script)
    with MockLLMServer(script) as mock:
        body = {"model": "m", "messages": []}
        texts = [
            httpx.post(mock.openai_base_url + "/chat/completions", json=body).json()["choices"][0]["message"]["content"]
            for _ in range(5)
        ]
    assert texts == ["a", "b", "a", "b", "a"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [("{not json", "Expecting property name"), ('[{"txt": "typo"}]', "txt"), ('"just a string"', "expected")],
)
def test_load_script_errors_name_the_file(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=r"bad\.json") as caught:
        load_script(path)
    assert problem in str(caught.value)


def _cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "cowork.testing.mockllm", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("mode", ["script", "echo"])
def test_cli_serves_until_terminated(tmp_path: Path, mode: str) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "from the file"}], "loop": True}))
    args = ["--script", str(script)] if mode == "script" else ["--echo"]
    with _cli(*args, "--models", "m1,m2") as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        try:
            assert line.startswith("mockllm listening on http://127.0.0.1:"), line
            url = line.split()[-1]
            body = {"model": "m1", "messages": [{"role": "user", "content": "hello"}]}
            reply = httpx.post(url + OPENAI_PATH, json=body)
            models = httpx.get(url + "/v1/models").json()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    expected = "from the file" if mode == "script" else "echo: hello"
    assert reply.json()["choices"][0]["message"]["content"] == expected
    assert [m["id"] for m in models["data"]] == ["m1", "m2"]


def test_cli_rejects_a_bad_script(tmp_path: Path) -> None:
    script = tmp_path / "broken.json"
    script.write_text('[{"text": 1}]')
    with _cli("--script", str(script)) as proc:
        stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert str(script) in stderr
    assert stdout == ""


def test_request_helpers_normalise_both_formats() -> None:
    openai_body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
        ],
    }
    anthropic_body: dict[str, Any] = {
        "model": "m",
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
        "max_tokens": 10,
    }
    with MockLLMServer([MockResponse(text="a"), MockResponse(text="b")]) as mock:
        httpx.post(mock.url + OPENAI_PATH, json=openai_body, headers={"authorization": "Bearer k1"})
        httpx.post(mock.url + ANTHROPIC_PATH, json=anthropic_body, headers={"x-api-key": "k2"})
    first, second = mock.requests
    assert (first.system, first.messages, first.api_key) == ("Be brief.", [{"role": "user", "content": "Hi"}], "k1")
    assert (second.system, second.messages, second.api_key) == ("Be brief.", [{"role": "user", "content": "Hi"}], "k2")
