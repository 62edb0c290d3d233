"""The provider service through a core: status, connecting (verify, save, use), disconnecting, and what survives a
restart. Keys land in the test home's 0600 file (conftest disables the OS keyring)."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from cowork.core import Core
from cowork.protocol import ErrorCode, OperationStatus, ProtocolError, ProviderConnectParams
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse

from . import GIB, closed_port_url, ollama_model

pytestmark = pytest.mark.anyio

KEY = "sk-cowork-test-4f1c9a"
WRONG = "sk-cowork-wrong-77b2e0"
ENV_KEY = "sk-cowork-env-0d3e55"


def credentials_file(harness: CoreHarness) -> Path:
    return harness.home / "auth" / "credentials.json"


def saved_secrets(harness: CoreHarness) -> dict[str, str]:
    return json.loads(credentials_file(harness).read_text(encoding="utf-8"))["secrets"]


def files_holding(root: Path, secret: str) -> list[str]:
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()
    )


def openai_env(base_url: str, **extra: str) -> dict[str, str]:
    return {"OPENAI_BASE_URL": base_url, "COWORK_PROVIDER": "openai", "COWORK_MODEL": "mock-model", **extra}


def anthropic_env(base_url: str) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": base_url, "COWORK_PROVIDER": "anthropic", "COWORK_MODEL": "mock-model"}


async def run_turn(harness: CoreHarness, core: Core, text: str = "hello") -> OperationStatus:
    session = await harness.session(core)
    operation = await harness.start(core, session, text)
    done = await harness.status(session, operation, *_TERMINAL)
    return done.status


_TERMINAL = (OperationStatus.DONE, OperationStatus.ERROR, OperationStatus.CANCELLED)


async def restart(harness: CoreHarness, core: Core, env: dict[str, str]) -> Core:
    """Stop `core` and start a new one on the same home (a server restart)."""
    harness.cores.remove(core)
    await core.stop()
    return await harness.core("", env=env)


# -- status ------------------------------------------------------------------------------------------------------


async def test_missing_key_names_the_variables_and_connect(harness: CoreHarness) -> None:
    core = await harness.core("")

    result = await core.providers.status("google")

    [info] = result.providers
    assert (info.state, info.key_source, info.key_env) == ("missing_key", "none", ["GOOGLE_API_KEY", "GEMINI_API_KEY"])
    assert "/connect google" in info.message
    assert "GOOGLE_API_KEY or GEMINI_API_KEY" in info.message
    assert info.checked_at is None
    assert result.credential_store == str(credentials_file(harness))


async def test_status_with_an_env_key(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_api_keys({ENV_KEY})
    core = await harness.core("", env=openai_env(mock_llm.openai_base_url, OPENAI_API_KEY=ENV_KEY))

    [info] = (await core.providers.status("openai")).providers

    assert (info.state, info.key_source, info.base_url) == ("connected", "env", mock_llm.openai_base_url)
    assert info.models == []  # only local servers report what they serve
    assert info.checked_at is not None and info.latency_ms is not None


async def test_status_reports_a_rejected_env_key(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_api_keys({KEY})
    core = await harness.core("", env=openai_env(mock_llm.openai_base_url, OPENAI_API_KEY=ENV_KEY))

    [info] = (await core.providers.status("openai")).providers

    assert info.state == "auth_failed"
    assert "/connect openai" in info.message


async def test_unchecked_status_contacts_nothing(harness: CoreHarness) -> None:
    # Nothing listens there: a probe would say unreachable.
    core = await harness.core("", env=openai_env(closed_port_url() + "/v1", OPENAI_API_KEY=ENV_KEY))

    [unchecked] = (await core.providers.status("openai", check=False)).providers
    [checked] = (await core.providers.status("openai")).providers

    assert (unchecked.state, unchecked.message) == ("unchecked", "OpenAI has a key; not checked.")
    assert (unchecked.checked_at, unchecked.latency_ms) == (None, None)
    assert checked.state == "unreachable"


async def test_ollama_status_lists_models_and_preflight(
    harness: CoreHarness, mock_llm: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    mock_llm.set_ollama_models([ollama_model(), ollama_model(name="llama3.2")])
    core = await harness.core("", env={"OLLAMA_BASE_URL": mock_llm.openai_base_url})
    monkeypatch.setattr(core.providers, "_total_memory", lambda: 7 * GIB)

    [info] = (await core.providers.status("ollama")).providers

    assert (info.state, info.key_source, info.local) == ("connected", "not_needed", True)
    assert info.models == ["qwen3:8b", "llama3.2:latest"]
    # The preset's default model is the one in use; 7 GiB - 3 GiB reserve < 6.0 GB needed.
    assert [(p.model, p.verdict) for p in info.preflight] == [("qwen3:8b", "red")]


async def test_ollama_status_without_preflight(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_ollama_models([ollama_model()])
    env = {"OLLAMA_BASE_URL": mock_llm.openai_base_url, "COWORK_LOCAL_MODELS__PREFLIGHT": "false"}
    core = await harness.core("", env=env)

    [info] = (await core.providers.status("ollama")).providers

    assert (info.state, info.preflight) == ("connected", [])


async def test_unchecked_local_server_has_no_key(harness: CoreHarness) -> None:
    core = await harness.core("")

    [info] = (await core.providers.status("ollama", check=False)).providers

    assert (info.state, info.message) == ("unchecked", "Ollama is set up; not checked.")


async def test_status_of_every_provider(harness: CoreHarness) -> None:
    core = await harness.core("")

    result = await core.providers.status(check=False)

    assert [p.id for p in result.providers] == list(core.selector.presets)
    assert {p.state for p in result.providers if not p.local} == {"missing_key"}
    assert {p.state for p in result.providers if p.local} == {"unchecked"}


# -- connect -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("provider", "env"), [("openai", openai_env), ("anthropic", anthropic_env)])
async def test_a_good_key_is_verified_saved_and_used(
    harness: CoreHarness, mock_llm: MockLLMServer, provider: str, env: Callable[[str], dict[str, str]]
) -> None:
    mock_llm.set_api_keys({KEY})
    mock_llm.set_script(lambda request: MockResponse(text="hi"))
    base = mock_llm.openai_base_url if provider == "openai" else mock_llm.anthropic_base_url
    core = await harness.core("", env=env(base))
    preset = core.selector.preset(provider)
    assert core.selector.key_source(preset) == "none"

    info = await core.providers.connect(ProviderConnectParams(provider=provider, api_key=KEY))

    assert (info.state, info.key_source, info.id) == ("connected", "store", provider)
    assert core.selector.key_source(preset) == "store"
    path = credentials_file(harness)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert saved_secrets(harness) == {f"provider/{provider}": KEY}
    # Only the credentials file holds it: not the project, not the database, not the config.
    assert files_holding(harness.home, KEY) == ["auth/credentials.json"]
    assert files_holding(harness.workspace, KEY) == []

    assert await run_turn(harness, core) == OperationStatus.DONE
    [request] = mock_llm.requests
    # Sent as a bearer token (OpenAI; Anthropic's SDK too, these days) or x-api-key.
    assert request.api_key == KEY


async def test_a_wrong_key_saves_nothing(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_api_keys({ENV_KEY})
    core = await harness.core("", env=openai_env(mock_llm.openai_base_url, OPENAI_API_KEY=ENV_KEY))
    preset = core.selector.preset("openai")

    with pytest.raises(ProtocolError) as caught:
        await core.providers.connect(ProviderConnectParams(provider="openai", api_key=WRONG))

    assert caught.value.code == ErrorCode.AUTH_FAILED
    assert caught.value.message == (
        "OpenAI rejected the API key (HTTP 401). Connect it again (/connect openai in the REPL, Models → Connect in the "
        "web UI). Nothing was saved; to save it "
        "anyway, connect with verify off (--no-verify)."
    )
    assert not credentials_file(harness).exists()
    assert files_holding(harness.home, WRONG) == []
    assert (core.selector.key_source(preset), core.selector.api_key(preset)) == ("env", ENV_KEY)


async def test_a_wrong_key_leaves_the_saved_one(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_api_keys({KEY})
    mock_llm.set_script(lambda request: MockResponse(text="hi"))
    core = await harness.core("", env=openai_env(mock_llm.openai_base_url))
    await core.providers.connect(ProviderConnectParams(provider="openai", api_key=KEY))
    before = credentials_file(harness).read_bytes()

    with pytest.raises(ProtocolError, match="rejected the API key"):
        await core.providers.connect(ProviderConnectParams(provider="openai", api_key=WRONG))

    assert credentials_file(harness).read_bytes() == before
    assert core.selector.api_key(core.selector.preset("openai")) == KEY
    assert await run_turn(harness, core) == OperationStatus.DONE


async def test_connect_without_verify_saves_without_contacting(harness: CoreHarness) -> None:
    core = await harness.core("", env=openai_env(closed_port_url() + "/v1"))

    with pytest.raises(ProtocolError) as caught:
        await core.providers.connect(ProviderConnectParams(provider="openai", api_key=KEY))
    assert caught.value.code == ErrorCode.PROVIDER_UNAVAILABLE
    assert not credentials_file(harness).exists()

    info = await core.providers.connect(ProviderConnectParams(provider="openai", api_key=KEY, verify=False))

    assert (info.state, info.key_source, info.checked_at) == ("unchecked", "store", None)
    assert saved_secrets(harness) == {"provider/openai": KEY}


async def test_a_saved_base_url_survives_a_restart_and_beats_the_env(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script(lambda request: MockResponse(text="hi"))
    env = openai_env(closed_port_url() + "/v1", OPENAI_API_KEY=ENV_KEY)
    core = await harness.core("", env=env)

    info = await core.providers.connect(
        ProviderConnectParams(provider="openai", base_url=mock_llm.openai_base_url + "/")
    )
    assert (info.state, info.base_url, info.key_source) == ("connected", mock_llm.openai_base_url, "env")
    assert not credentials_file(harness).exists()  # a URL is not a secret

    core = await restart(harness, core, env)

    preset = core.selector.preset("openai")
    assert core.selector.base_url(preset) == mock_llm.openai_base_url
    [status] = (await core.providers.status("openai")).providers
    assert (status.state, status.base_url) == ("connected", mock_llm.openai_base_url)
    assert await run_turn(harness, core) == OperationStatus.DONE
    assert [r.api_key for r in mock_llm.requests] == [ENV_KEY]


async def test_a_saved_key_survives_a_restart_and_beats_the_env(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_api_keys({KEY})
    mock_llm.set_script(lambda request: MockResponse(text="hi"))
    env = openai_env(mock_llm.openai_base_url, OPENAI_API_KEY=ENV_KEY)
    core = await harness.core("", env=env)
    await core.providers.connect(ProviderConnectParams(provider="openai", api_key=KEY))

    core = await restart(harness, core, env)

    assert core.selector.key_source(core.selector.preset("openai")) == "store"
    assert await run_turn(harness, core) == OperationStatus.DONE
    assert [r.api_key for r in mock_llm.requests] == [KEY]


async def test_disconnect_removes_key_and_url(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    env_url = closed_port_url() + "/v1"
    env = openai_env(env_url, OPENAI_API_KEY=ENV_KEY)
    core = await harness.core("", env=env)
    await core.providers.connect(
        ProviderConnectParams(provider="openai", api_key=KEY, base_url=mock_llm.openai_base_url)
    )
    preset = core.selector.preset("openai")
    assert (core.selector.key_source(preset), core.selector.base_url(preset)) == ("store", mock_llm.openai_base_url)

    removed = await core.providers.disconnect("openai")

    assert (removed.provider, removed.removed_key, removed.removed_base_url) == ("openai", True, True)
    assert saved_secrets(harness) == {}
    assert files_holding(harness.home, KEY) == []
    # What the environment says is in force again, now and after a restart.
    assert (core.selector.api_key(preset), core.selector.base_url(preset)) == (ENV_KEY, env_url)
    core = await restart(harness, core, env)
    assert (core.selector.api_key(preset), core.selector.base_url(preset)) == (ENV_KEY, env_url)

    again = await core.providers.disconnect("openai")
    assert (again.removed_key, again.removed_base_url) == (False, False)


async def test_connect_a_local_server_by_url(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_ollama_models([ollama_model()])
    core = await harness.core("")

    info = await core.providers.connect(ProviderConnectParams(provider="ollama", base_url=mock_llm.openai_base_url))

    assert (info.state, info.models, info.key_source) == ("connected", ["qwen3:8b"], "not_needed")
    assert core.selector.base_url(core.selector.preset("ollama")) == mock_llm.openai_base_url


async def test_connect_to_nothing_saves_nothing(harness: CoreHarness) -> None:
    core = await harness.core("")
    url = closed_port_url() + "/v1"

    with pytest.raises(ProtocolError) as caught:
        await core.providers.connect(ProviderConnectParams(provider="ollama", base_url=url))

    assert caught.value.code == ErrorCode.PROVIDER_UNAVAILABLE
    assert "Is Ollama running?" in caught.value.message
    core = await restart(harness, core, {})
    assert core.selector.base_url(core.selector.preset("ollama")) == "http://127.0.0.1:11434/v1"


@pytest.mark.parametrize("call", ["connect", "disconnect", "status"])
async def test_unknown_provider(harness: CoreHarness, call: str) -> None:
    core = await harness.core("")
    service = core.providers

    with pytest.raises(ProtocolError) as caught:
        if call == "connect":
            await service.connect(ProviderConnectParams(provider="openia", api_key=KEY))
        elif call == "disconnect":
            await service.disconnect("openia")
        else:
            await service.status("openia")

    assert caught.value.code == ErrorCode.UNKNOWN_PROVIDER
    assert caught.value.message.startswith("Unknown provider 'openia'. Known providers: openai, anthropic, ")


@pytest.mark.parametrize(
    ("provider", "message"),
    [
        ("openai", "Connecting OpenAI needs an apiKey (or a baseUrl)."),
        ("ollama", "Connecting Ollama needs a baseUrl."),
    ],
)
async def test_neither_key_nor_url(harness: CoreHarness, provider: str, message: str) -> None:
    core = await harness.core("")

    with pytest.raises(ProtocolError) as caught:
        await core.providers.connect(ProviderConnectParams(provider=provider))

    assert (caught.value.code, caught.value.message) == (ErrorCode.INVALID_PARAMS, message)
