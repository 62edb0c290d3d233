"""Tests of the mock's API key checks, per wire format, through pydantic-ai's real adapters and the SDKs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import anthropic
import httpx
import openai
import pytest
from pydantic_ai.direct import model_request, model_request_stream
from pydantic_ai.exceptions import ModelAuthenticationError, ModelHTTPError
from pydantic_ai.messages import ModelRequest, TextPart
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.google import GoogleProvider
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings

from cowork.testing.mockllm import MockLLMServer, MockResponse

Format = Literal["openai", "anthropic", "gemini", "responses"]
FORMATS: list[Format] = ["openai", "anthropic", "gemini", "responses"]
NO_RETRIES: ModelSettings = {"max_retries": 0}
GOOD = "sk-good"
PATHS: dict[Format, str] = {
    "openai": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/mock-model:generateContent",
    "responses": "/v1/responses",
}
BODIES: dict[Format, dict[str, Any]] = {
    "openai": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    "anthropic": {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]},
    "gemini": {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    "responses": {"model": "m", "input": "hi"},
}
KEY_HEADERS: dict[Format, str] = {
    "openai": "authorization",
    "anthropic": "x-api-key",
    "gemini": "x-goog-api-key",
    "responses": "authorization",
}
all_formats = pytest.mark.parametrize("fmt", FORMATS)


def unauthorized(fmt: Format, message: str) -> dict[str, Any]:
    """The 401 body each provider answers with."""
    if fmt == "anthropic":
        return {"type": "error", "error": {"type": "authentication_error", "message": message}}
    if fmt == "gemini":
        return {"error": {"code": 401, "message": message, "status": "UNAUTHENTICATED"}}
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def shared_server() -> Iterator[MockLLMServer]:
    with MockLLMServer(api_keys=[GOOD, "sk-other"]) as server:
        yield server


@pytest.fixture
def mock(shared_server: MockLLMServer) -> Iterator[MockLLMServer]:
    shared_server.set_script([])
    shared_server.reset()
    yield shared_server
    shared_server.set_api_keys([GOOD, "sk-other"])


@asynccontextmanager
async def open_model(mock: MockLLMServer, fmt: Format, key: str) -> AsyncIterator[Model]:
    if fmt == "anthropic":
        anthropic_provider = AnthropicProvider(base_url=mock.anthropic_base_url, api_key=key)
        async with anthropic_provider:
            yield AnthropicModel("mock-model", provider=anthropic_provider)
    elif fmt == "gemini":
        google_provider = GoogleProvider(base_url=mock.google_base_url, api_key=key)
        async with google_provider:
            yield GoogleModel("mock-model", provider=google_provider)
    else:
        openai_provider = OpenAIProvider(base_url=mock.openai_base_url, api_key=key)
        async with openai_provider:
            model_class = OpenAIChatModel if fmt == "openai" else OpenAIResponsesModel
            yield model_class("mock-model", provider=openai_provider)


async def ask(mock: MockLLMServer, fmt: Format, key: str, *, stream: bool) -> str:
    """The text of one answer through pydantic-ai's real adapter for `fmt`."""
    messages = [ModelRequest.user_text_prompt("hi")]
    async with open_model(mock, fmt, key) as model:
        if stream:
            async with model_request_stream(model, messages, model_settings=NO_RETRIES) as streamed:
                async for _ in streamed:
                    pass
            response = streamed.get()
        else:
            response = await model_request(model, messages, model_settings=NO_RETRIES)
    return "".join(part.content for part in response.parts if isinstance(part, TextPart))


@pytest.mark.anyio
@all_formats
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
async def test_wrong_key_is_a_401_and_recorded(mock: MockLLMServer, fmt: Format, stream: bool) -> None:
    mock.set_script([MockResponse(text="welcome")])

    with pytest.raises(ModelHTTPError) as caught:
        await ask(mock, fmt, "sk-wrong", stream=stream)

    assert isinstance(caught.value, ModelAuthenticationError)
    assert caught.value.status_code == 401
    # The SDKs unwrap OpenAI's and Anthropic's `error`, but Google's body arrives whole.
    expected = unauthorized(fmt, "mock: incorrect API key provided")
    assert caught.value.body == (expected if fmt in ("anthropic", "gemini") else expected["error"])
    [rejected] = mock.requests
    assert (rejected.format, rejected.api_key, rejected.stream) == (fmt, "sk-wrong", stream)
    assert mock.remaining == 1  # a rejected request uses up no scripted response

    assert await ask(mock, fmt, GOOD, stream=stream) == "welcome"
    assert mock.remaining == 0


@all_formats
def test_missing_key_is_a_401(mock: MockLLMServer, fmt: Format) -> None:
    mock.set_script([MockResponse(text="welcome")])

    reply = httpx.post(mock.url + PATHS[fmt], json=BODIES[fmt])

    assert reply.status_code == 401
    assert reply.json() == unauthorized(fmt, "mock: missing API key")
    assert [request.api_key for request in mock.requests] == [None]


@all_formats
def test_each_format_reads_its_own_header(mock: MockLLMServer, fmt: Format) -> None:
    mock.set_script([MockResponse(text="welcome")] * 4)
    headers = {header: f"Bearer {GOOD}" if header == "authorization" else GOOD for header in KEY_HEADERS.values()}
    own = headers.pop(KEY_HEADERS[fmt])

    own_reply = httpx.post(mock.url + PATHS[fmt], json=BODIES[fmt], headers={KEY_HEADERS[fmt]: own})
    foreign_reply = httpx.post(mock.url + PATHS[fmt], json=BODIES[fmt], headers=headers)

    assert own_reply.status_code == 200
    # Anthropic also takes a bearer token (`auth_token`); no other format takes another's header.
    assert foreign_reply.status_code == (200 if fmt == "anthropic" else 401)


def test_gemini_key_in_the_query(mock: MockLLMServer) -> None:
    mock.set_script([MockResponse(text="welcome")])
    reply = httpx.post(f"{mock.url}{PATHS['gemini']}?key={GOOD}", json=BODIES["gemini"])
    assert reply.status_code == 200
    assert mock.requests[0].api_key == GOOD


def test_unreadable_body_with_a_wrong_key_is_a_401(mock: MockLLMServer) -> None:
    reply = httpx.post(mock.url + PATHS["openai"], content=b"not json", headers={"authorization": "Bearer nope"})
    assert reply.status_code == 401
    assert mock.requests == []


def test_keys_can_be_changed_and_turned_off(mock: MockLLMServer) -> None:
    mock.set_script([MockResponse(text="a"), MockResponse(text="b")])
    headers = {"authorization": "Bearer sk-new"}

    assert httpx.post(mock.url + PATHS["openai"], json=BODIES["openai"], headers=headers).status_code == 401
    mock.set_api_keys({"sk-new"})
    assert mock.api_keys == frozenset({"sk-new"})
    assert httpx.post(mock.url + PATHS["openai"], json=BODIES["openai"], headers=headers).status_code == 200
    mock.set_api_keys(None)
    assert httpx.post(mock.url + PATHS["openai"], json=BODIES["openai"]).status_code == 200
    with pytest.raises(TypeError):
        mock.set_api_keys("sk-one-key")


# --- model listings -------------------------------------------------------------------------------------------------


def test_models_need_a_key_in_either_shape(mock: MockLLMServer) -> None:
    openai_style = httpx.get(mock.openai_base_url + "/models", headers={"authorization": "Bearer nope"})
    anthropic_style = httpx.get(
        mock.anthropic_base_url + "/v1/models", headers={"x-api-key": "nope", "anthropic-version": "2023-06-01"}
    )

    assert (openai_style.status_code, anthropic_style.status_code) == (401, 401)
    assert openai_style.json() == unauthorized("openai", "mock: incorrect API key provided")
    assert anthropic_style.json() == unauthorized("anthropic", "mock: incorrect API key provided")


@pytest.mark.anyio
async def test_models_through_the_sdks(mock: MockLLMServer) -> None:
    async with openai.AsyncOpenAI(base_url=mock.openai_base_url, api_key=GOOD) as openai_client:
        openai_models = [model.id async for model in openai_client.models.list()]
    async with anthropic.AsyncAnthropic(base_url=mock.anthropic_base_url, api_key=GOOD) as anthropic_client:
        page = await anthropic_client.models.list()
    async with httpx.AsyncClient() as client:
        headers = {"x-api-key": GOOD, "anthropic-version": "2023-06-01"}
        raw = (await client.get(mock.anthropic_base_url + "/v1/models", headers=headers)).json()

    assert openai_models == ["mock-model", "mock-reasoning-model"]
    assert [(model.id, model.type) for model in page.data] == [
        ("mock-model", "model"),
        ("mock-reasoning-model", "model"),
    ]
    assert raw == {
        "data": [
            {"type": "model", "id": name, "display_name": name, "created_at": "2025-01-01T00:00:00Z"}
            for name in ("mock-model", "mock-reasoning-model")
        ],
        "has_more": False,
        "first_id": "mock-model",
        "last_id": "mock-reasoning-model",
    }
    with pytest.raises(openai.AuthenticationError):
        async with openai.AsyncOpenAI(base_url=mock.openai_base_url, api_key="nope", max_retries=0) as bad_client:
            await bad_client.models.list()


def test_ollama_native_api_takes_no_key(mock: MockLLMServer) -> None:
    # Ollama has no authentication; only its OpenAI-compatible `/v1` API goes through the key check.
    assert httpx.get(mock.ollama_base_url + "/api/tags").status_code == 200
    assert httpx.get(mock.ollama_base_url + "/api/version").status_code == 200
    assert httpx.get(mock.url + "/healthz").status_code == 200


def test_cli_api_keys() -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "cowork.testing.mockllm", "--echo", "--api-key", "k1", "--api-key", "k2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        try:
            assert line.startswith("mockllm listening on http://127.0.0.1:"), line
            url = line.split()[-1]
            statuses = [
                httpx.post(
                    url + PATHS["openai"], json=BODIES["openai"], headers={"authorization": f"Bearer {key}"}
                ).status_code
                for key in ("k1", "k2", "k3")
            ]
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    assert statuses == [200, 200, 401]
