"""Probing a provider: one authenticated GET of its model list, in each provider's own shape, against the mock LLM
(and `httpx.MockTransport` for answers the mock does not give: timeouts, rate limits, Google's 400 for a bad key)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

import httpx
import pytest

from cowork.models import ProviderPreset, presets
from cowork.providers import ProbeResult, native_ollama_url, probe
from cowork.testing.mockllm import DEFAULT_MODELS, MockLLMServer

from . import closed_port_url, ollama_model

pytestmark = pytest.mark.anyio

GOOD = "sk-good-key"
CLOUD = ["openai", "anthropic", "google"]
Base = Callable[[MockLLMServer], str]
BASES: dict[str, Base] = {
    "openai": lambda m: m.openai_base_url,
    "anthropic": lambda m: m.anthropic_base_url,
    "google": lambda m: m.google_base_url,
    "ollama": lambda m: m.openai_base_url,  # Ollama's OpenAI-compatible /v1; the probe goes to its native root
}


@pytest.fixture(scope="module")
def shared() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


@pytest.fixture
def mock(shared: MockLLMServer) -> Iterator[MockLLMServer]:
    yield shared
    shared.set_api_keys(None)
    shared.set_ollama_models([])


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(trust_env=False) as c:
        yield c


def preset(provider: str) -> ProviderPreset:
    return presets()[provider]


async def run(client: httpx.AsyncClient, provider: str, base_url: str, key: str | None) -> ProbeResult:
    return await probe(client, preset(provider), base_url, key, wait_seconds=5)


@pytest.mark.parametrize("provider", CLOUD)
async def test_connected_lists_the_models(mock: MockLLMServer, client: httpx.AsyncClient, provider: str) -> None:
    mock.set_api_keys({GOOD})

    result = await run(client, provider, BASES[provider](mock), GOOD)

    assert (result.state, result.message) == ("connected", f"{preset(provider).name} is connected.")
    assert result.models == list(DEFAULT_MODELS)
    assert result.latency_ms is not None and result.latency_ms >= 0


@pytest.mark.parametrize("provider", CLOUD)
@pytest.mark.parametrize("key", ["sk-wrong", None], ids=["wrong", "none"])
async def test_a_rejected_key_is_auth_failed(
    mock: MockLLMServer, client: httpx.AsyncClient, provider: str, key: str | None
) -> None:
    mock.set_api_keys({GOOD})

    result = await run(client, provider, BASES[provider](mock), key)

    assert result.state == "auth_failed"
    assert result.message == (
        f"{preset(provider).name} rejected the API key (HTTP 401). Connect it again (/connect {provider} in the REPL, "
        "Models → Connect in the web UI)."
    )
    assert result.models == []


async def test_an_openai_compatible_provider_probes_its_models_path(
    mock: MockLLMServer, client: httpx.AsyncClient
) -> None:
    # Groq, Together, Mistral... speak OpenAI's API: GET {base}/models with a bearer token.
    mock.set_api_keys({GOOD})

    assert (await run(client, "groq", mock.openai_base_url, GOOD)).state == "connected"
    assert (await run(client, "groq", mock.openai_base_url, "sk-wrong")).state == "auth_failed"


async def test_ollama_reports_what_it_serves(mock: MockLLMServer, client: httpx.AsyncClient) -> None:
    mock.set_ollama_models([ollama_model(), ollama_model(name="llama3.2")])

    result = await run(client, "ollama", mock.openai_base_url, None)

    assert (result.state, result.message) == ("connected", "Ollama is connected.")
    assert result.models == ["qwen3:8b", "llama3.2:latest"]


@pytest.mark.parametrize("provider", [*CLOUD, "ollama"])
async def test_nothing_listening_is_unreachable(client: httpx.AsyncClient, provider: str) -> None:
    url = closed_port_url()
    base = f"{url}/v1" if provider in ("openai", "ollama") else url

    result = await run(client, provider, base, GOOD)

    name = preset(provider).name
    hint = "Is Ollama running?" if provider == "ollama" else "Check the network and the base URL."
    assert result == ProbeResult("unreachable", f"Cannot reach {name} at {base} (ConnectError). {hint}")


async def test_a_wrong_base_url_is_an_error(mock: MockLLMServer, client: httpx.AsyncClient) -> None:
    base = f"{mock.url}/wrong/v1"

    result = await run(client, "openai", base, GOOD)

    assert result.state == "error"
    assert result.message == f"OpenAI answered HTTP 404 at {base}/models; is the base URL right?"


def transport_client(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def test_a_timeout_is_unreachable() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    async with transport_client(slow) as client:
        result = await probe(client, preset("openai"), "https://api.example/v1", GOOD, wait_seconds=2)

    assert result == ProbeResult("unreachable", "OpenAI did not answer at https://api.example/v1 within 2 s.")


async def test_rate_limited_still_means_the_key_works() -> None:
    async with transport_client(lambda r: httpx.Response(429, json={"error": {"message": "slow down"}})) as client:
        result = await run(client, "anthropic", "https://api.example", GOOD)

    assert (result.state, result.message) == ("connected", "Anthropic accepted the key but is rate limiting now.")


async def test_a_page_that_is_not_json_is_an_error() -> None:
    async with transport_client(lambda r: httpx.Response(200, text="<html>login</html>")) as client:
        result = await run(client, "openai", "https://proxy.example/v1", GOOD)

    assert result.state == "error"
    assert result.message == "https://proxy.example/v1/models did not answer with JSON; is the base URL right?"


GOOGLE_BAD_KEY = {
    "error": {
        "code": 400,
        "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            }
        ],
    }
}


async def test_googles_400_for_a_bad_key_is_auth_failed() -> None:
    # The real Gemini API answers a wrong key with 400 INVALID_ARGUMENT, not 401.
    async with transport_client(lambda r: httpx.Response(400, json=GOOGLE_BAD_KEY)) as client:
        result = await run(client, "google", "https://generativelanguage.example", "AIza-wrong")

    assert result.state == "auth_failed"
    assert "/connect google" in result.message


async def test_another_400_from_google_is_an_error() -> None:
    body = {"error": {"code": 400, "message": "Bad request", "status": "INVALID_ARGUMENT"}}
    async with transport_client(lambda r: httpx.Response(400, json=body)) as client:
        result = await run(client, "google", "https://generativelanguage.example", "AIza-good")

    assert result.state == "error"


@pytest.mark.parametrize(
    ("provider", "url", "headers"),
    [
        ("openai", "https://h.example/v1/models", {"authorization": f"Bearer {GOOD}"}),
        ("anthropic", "https://h.example/v1/models", {"x-api-key": GOOD, "anthropic-version": "2023-06-01"}),
        ("google", "https://h.example/v1beta/models", {"x-goog-api-key": GOOD}),
        ("ollama", "https://h.example/api/tags", {}),
    ],
)
async def test_each_probe_asks_in_its_providers_shape(provider: str, url: str, headers: dict[str, str]) -> None:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={})

    base = "https://h.example/v1" if provider in ("openai", "ollama") else "https://h.example"
    async with transport_client(record) as client:
        assert (await run(client, provider, base, GOOD)).state == "connected"

    [request] = seen
    assert str(request.url) == url
    sent = {
        name: request.headers[name]
        for name in ("authorization", "x-api-key", "anthropic-version", "x-goog-api-key")
        if name in request.headers
    }
    assert sent == headers


@pytest.mark.parametrize(
    ("base", "root"),
    [
        ("http://127.0.0.1:11434/v1", "http://127.0.0.1:11434"),
        ("http://127.0.0.1:11434/v1/", "http://127.0.0.1:11434"),
        ("http://gpu-box:11434", "http://gpu-box:11434"),
    ],
)
def test_native_ollama_url(base: str, root: str) -> None:
    assert native_ollama_url(base) == root


# -- the mock's Gemini model listing, which the google probe reads ----------------------------------------------


async def test_mock_lists_gemini_models_in_googles_shape(mock: MockLLMServer, client: httpx.AsyncClient) -> None:
    mock.set_api_keys({GOOD})

    listed = await client.get(f"{mock.google_base_url}/v1beta/models", headers={"x-goog-api-key": GOOD})
    by_query = await client.get(f"{mock.google_base_url}/v1beta/models", params={"key": GOOD})
    rejected = await client.get(f"{mock.google_base_url}/v1beta/models", headers={"x-goog-api-key": "nope"})

    assert listed.status_code == by_query.status_code == 200
    assert [m["name"] for m in listed.json()["models"]] == [f"models/{name}" for name in DEFAULT_MODELS]
    assert listed.json()["models"][0]["supportedGenerationMethods"] == ["generateContent", "countTokens"]
    assert rejected.status_code == 401
    assert rejected.json() == {
        "error": {"code": 401, "message": "mock: incorrect API key provided", "status": "UNAUTHENTICATED"}
    }
