"""Providers and models over the wire: provider/connect, provider/status, provider/disconnect, model/list and
model/set against a real server process, with the mock LLM standing in for OpenAI and a running Ollama."""

from __future__ import annotations

import json
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from cowork.clients.connection import RpcError
from cowork.models import price_per_mtok
from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse
from cowork.testing.server import ServerProcess

from ..providers import ollama_model

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

KEY = "sk-wire-test-31c8d0"
WRONG = "sk-wire-wrong-a94f12"
# Small enough to fit on any machine, whatever psutil says it has: 100 MB of weights, a one-layer KV cache.
SMALL = ollama_model(size=100_000_000, block_count=1)
ROUTER = {
    "enabled": False,
    "preference": "local",
    "local": "ollama:qwen3:8b",
    "tiers": [{"name": "cloud", "provider": "openai", "model": "mock-model"}],
}


@pytest.fixture(scope="module")
def shared_mock() -> Iterator[MockLLMServer]:
    with MockLLMServer(ollama_models=[SMALL]) as server:
        yield server


@pytest.fixture
def mock(shared_mock: MockLLMServer) -> Iterator[MockLLMServer]:
    yield shared_mock
    shared_mock.set_api_keys(None)
    shared_mock.set_ollama_models([SMALL])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, shared_mock: MockLLMServer) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("providers-wire")
    (root / "ws").mkdir()
    env = {
        "OPENAI_BASE_URL": shared_mock.openai_base_url,
        "OLLAMA_BASE_URL": shared_mock.openai_base_url,
        "COWORK_PROVIDER": "openai",
        "COWORK_MODEL": "mock-model",
        "COWORK_ROUTER": json.dumps(ROUTER),
        "COWORK_LOCAL_MODELS__RESERVE_GB": "0",
        "COWORK_PRICES": json.dumps({"openai:qwen3:8b": {"input_per_mtok": 0.25, "output_per_mtok": 2.0}}),
    }
    with ServerProcess(root / "home", root / "ws", env=env) as proc:
        yield proc


@pytest.fixture
async def client(server: ServerProcess) -> AsyncIterator[EventClient]:
    c = await EventClient.connect(server.address)
    yield c
    await c.close()


async def rpc_error(client: EventClient, method: str, params: dict[str, Any]) -> RpcError:
    with pytest.raises(RpcError) as caught:
        await client.call(method, params)
    return caught.value


def model_entry(result: dict[str, Any], provider: str, model: str) -> dict[str, Any] | None:
    return next((m for m in result["models"] if (m["provider"], m["id"]) == (provider, model)), None)


# -- provider/connect, provider/status, provider/disconnect ------------------------------------------------------


async def test_connect_status_disconnect(client: EventClient, server: ServerProcess, mock: MockLLMServer) -> None:
    mock.set_api_keys({KEY})
    credentials = server.home / "auth" / "credentials.json"

    connected = await client.call("provider/connect", {"provider": "openai", "apiKey": KEY})

    assert connected["id"] == "openai"
    assert (connected["state"], connected["keySource"]) == ("connected", "store")
    assert connected["message"] == "OpenAI is connected."
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert json.loads(credentials.read_text(encoding="utf-8"))["secrets"] == {"provider/openai": KEY}

    status = await client.call("provider/status", {"provider": "openai"})
    assert status["credentialStore"] == str(credentials)
    assert [(p["id"], p["state"], p["keySource"]) for p in status["providers"]] == [("openai", "connected", "store")]

    removed = await client.call("provider/disconnect", {"provider": "openai"})
    assert removed == {"provider": "openai", "removedKey": True, "removedBaseUrl": False}
    # Without the key the mock (which wants one) turns OpenAI away again.
    [after] = (await client.call("provider/status", {"provider": "openai"}))["providers"]
    assert (after["state"], after["keySource"]) == ("auth_failed", "none")
    assert KEY not in "".join(server.output)


async def test_a_wrong_key_is_refused(client: EventClient, server: ServerProcess, mock: MockLLMServer) -> None:
    mock.set_api_keys({KEY})

    error = await rpc_error(client, "provider/connect", {"provider": "openai", "apiKey": WRONG})

    assert error.code == "auth_failed"
    assert "Nothing was saved" in error.message
    assert WRONG not in error.message
    credentials = server.home / "auth" / "credentials.json"
    assert not credentials.exists() or WRONG not in credentials.read_text(encoding="utf-8")


@pytest.mark.parametrize("key", ["sk-abc def", " sk-abc", "sk-abc\n", "sk-a\tb"])
async def test_a_key_with_whitespace_is_invalid_params(client: EventClient, server: ServerProcess, key: str) -> None:
    error = await rpc_error(client, "provider/connect", {"provider": "openai", "apiKey": key})

    assert (error.code, error.rpc_code) == ("invalid_params", -32602)
    assert error.message == (
        "Invalid params for provider/connect: apiKey: Value error, an API key has no spaces or line breaks "
        "(was something else pasted with it?)"
    )
    assert key.strip() not in json.dumps(error.data)  # the key is not echoed back


async def test_a_base_url_must_be_http(client: EventClient) -> None:
    error = await rpc_error(client, "provider/connect", {"provider": "ollama", "baseUrl": "file:///etc/passwd"})

    assert error.code == "invalid_params"
    assert "baseUrl" in error.message


async def test_unknown_provider_and_nothing_to_save(client: EventClient) -> None:
    unknown = await rpc_error(client, "provider/connect", {"provider": "openia", "apiKey": KEY})
    empty = await rpc_error(client, "provider/connect", {"provider": "anthropic"})
    status = await rpc_error(client, "provider/status", {"provider": "openia"})

    assert (unknown.code, status.code) == ("unknown_provider", "unknown_provider")
    assert (empty.code, empty.message) == (
        "invalid_params",
        "Connecting Anthropic needs an apiKey (or a baseUrl).",
    )


# -- model/list, model/set ---------------------------------------------------------------------------------------


async def test_model_list_has_the_servers_models_the_catalog_and_the_router(
    client: EventClient, mock: MockLLMServer
) -> None:
    result = await client.call("model/list", {"refresh": True})

    assert model_entry(result, "ollama", "qwen3:8b") == {
        "provider": "ollama",
        "id": "qwen3:8b",
        "supportsTools": True,
        "supportsReasoning": False,
        "local": True,
        "source": "server",
        "inputPerMtok": 0.0,
        "outputPerMtok": 0.0,
    }
    # OPENAI_BASE_URL points at a server of one's own: its models are what it serves, not OpenAI's catalog.
    # (The mock plays both servers here, so its /v1/models lists the Ollama model.)
    assert [m["id"] for m in result["models"] if m["provider"] == "openai"] == ["qwen3:8b", *mock.models]
    assert model_entry(result, "openai", "gpt-6.1-sol") is None
    served = model_entry(result, "openai", "qwen3:8b")
    assert served is not None and (served["source"], served["local"]) == ("server", False)
    assert (served["inputPerMtok"], served["outputPerMtok"]) == (0.25, 2.0)  # the configured price
    anthropic = model_entry(result, "anthropic", "claude-sonnet-5-5")  # other providers keep the catalog
    assert anthropic is not None and anthropic["source"] == "catalog"
    assert (anthropic["inputPerMtok"], anthropic["outputPerMtok"]) == price_per_mtok("anthropic", "claude-sonnet-5-5")

    assert result["router"] == {
        "enabled": False,
        "preference": "local",
        "tiers": [
            {"name": "local", "provider": "ollama", "model": "qwen3:8b", "local": True},
            {"name": "cloud", "provider": "openai", "model": "mock-model", "local": False},
        ],
    }
    assert (result["currentProvider"], result["currentModel"], result["auto"]) == ("openai", "mock-model", False)
    ollama = next(p for p in result["providers"] if p["id"] == "ollama")
    assert (ollama["configured"], ollama["local"], ollama["keySource"]) == (True, True, "not_needed")


async def test_model_list_refresh_asks_again(client: EventClient, mock: MockLLMServer) -> None:
    await client.call("model/list", {"refresh": True})
    mock.set_ollama_models([SMALL, ollama_model(name="llama3.2", size=1000)])

    cached = await client.call("model/list", {})
    refreshed = await client.call("model/list", {"refresh": True})

    assert model_entry(cached, "ollama", "llama3.2:latest") is None  # still what Ollama said a moment ago
    assert model_entry(refreshed, "ollama", "llama3.2:latest") is not None


async def test_router_says_why_the_local_model_is_off(client: EventClient, mock: MockLLMServer) -> None:
    mock.set_ollama_models([])

    result = await client.call("model/list", {"refresh": True})

    assert result["router"]["localNote"] == "Ollama has no model 'qwen3:8b'; pull it with `ollama pull qwen3:8b`"
    await client.call("model/list", {"refresh": True})  # leave the cache as the other tests expect


async def test_model_set_auto_and_back(client: EventClient) -> None:
    session = await client.call("session/create", {})
    sid = session["id"]
    assert session["autoModel"] is False

    auto = await client.call("model/set", {"sessionId": sid, "model": "auto"})
    listed = await client.call("model/list", {"sessionId": sid})
    pinned = await client.call("model/set", {"sessionId": sid, "model": "openai:mock-model"})
    relisted = await client.call("model/list", {"sessionId": sid})

    assert (auto["autoModel"], auto["model"], auto.get("provider")) == (True, "auto", None)
    assert (listed["auto"], listed.get("currentModel")) == (True, None)
    assert (pinned["autoModel"], pinned["provider"], pinned["model"]) == (False, "openai", "mock-model")
    assert (relisted["auto"], relisted["currentProvider"], relisted["currentModel"]) == (False, "openai", "mock-model")


async def test_a_server_of_ones_own_is_asked_for_the_default_model(tmp_path: Path) -> None:
    """OPENAI_BASE_URL without a configured model: the catalog's default (an OpenAI model) is not what that server
    serves, so its first model is used, and shown as the current one; a configured model is kept as configured."""
    (tmp_path / "ws").mkdir()
    with MockLLMServer(models=["served-first", "served-second"]) as mock:
        mock.set_script([MockResponse(text="from the served model"), MockResponse(text="from the configured one")])
        env = {"OPENAI_BASE_URL": mock.openai_base_url, "OPENAI_API_KEY": "test-key"}
        with ServerProcess(tmp_path / "home", tmp_path / "ws", env=env) as proc:
            client = await EventClient.connect(proc.address)
            try:
                listed = await client.call("model/list", {})
                assert (listed["currentProvider"], listed["currentModel"]) == ("openai", "served-first")
                init = await client.call("initialize", {"clientInfo": {"name": "test", "version": "0"}})
                assert (init["config"]["provider"], init["config"]["model"]) == ("openai", "served-first")
                sid = (await client.call("session/create", {}))["id"]
                op = await client.call("turn/start", {"sessionId": sid, "text": "hi", "clientMessageId": "a"})
                assert await client.wait_turn_end(op["operationId"]) == "done"
                assert mock.requests[-1].model == "served-first"
            finally:
                await client.close()
        with ServerProcess(tmp_path / "home2", tmp_path / "ws", env=env | {"COWORK_MODEL": "my-choice"}) as proc:
            client = await EventClient.connect(proc.address)
            try:
                sid = (await client.call("session/create", {}))["id"]
                op = await client.call("turn/start", {"sessionId": sid, "text": "hi", "clientMessageId": "b"})
                await client.wait_turn_end(op["operationId"])
                assert mock.requests[-1].model == "my-choice"
            finally:
                await client.close()
