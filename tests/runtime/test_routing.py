"""Routing turns through the core: the local tier (a mock Ollama) for short simple requests, the cloud tier (the
same mock, as OpenAI) for long ones or when the local model is off (down, not pulled, does not fit), the preflight's
warning, and `model/set auto`. Both tiers are one mock; the model name in each request tells them apart."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cowork.core import Core
from cowork.protocol import ModelSetParams, OperationStatus, Route, SessionInfo
from cowork.routing import estimate_tokens
from cowork.server._registry import HANDLERS
from cowork.store import repos
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse

from ..providers import GIB, closed_port_url, ollama_model

pytestmark = pytest.mark.anyio

SIMPLE = "What is the capital of France?"
LONG = "Summarise this for me. " + "The quick brown fox jumps over the lazy dog. " * 900  # about 10,000 tokens
PLENTY = 64 * GIB
# qwen3:8b needs 6.0 GiB at 8,192 tokens; with the 3 GiB reserve, 10 GiB leaves 7 (above 80%: yellow), 8 leaves 5.
YELLOW_MEMORY = 10 * GIB
RED_MEMORY = 8 * GIB


def router(**changes: Any) -> str:
    config = {
        "enabled": True,
        "preference": "local",
        "local": "ollama:qwen3:8b",
        "tiers": [{"name": "cloud", "provider": "openai", "model": "mock-model"}],
    }
    return json.dumps(config | changes)


@pytest.fixture
def mock(mock_llm: MockLLMServer) -> MockLLMServer:
    mock_llm.set_ollama_models([ollama_model()])
    mock_llm.set_script(lambda request: MockResponse(text=f"{request.model} here"))
    return mock_llm


async def routed_core(
    harness: CoreHarness,
    mock: MockLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    *,
    memory: int = PLENTY,
    ollama_url: str | None = None,
    **router_changes: Any,
) -> Core:
    env = {
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": mock.openai_base_url,
        "OLLAMA_BASE_URL": ollama_url or mock.openai_base_url,
        "COWORK_ROUTER": router(**router_changes),
    }
    core = await harness.core("", env=env)
    monkeypatch.setattr(core.providers, "_total_memory", lambda: memory)
    return core


async def turn(harness: CoreHarness, core: Core, session: str, text: str) -> tuple[str, Route | None]:
    """Run a turn to the end; returns its operation id and its route event, if it was routed."""
    operation = await harness.start(core, session, text)
    done = await harness.status(session, operation, OperationStatus.DONE, OperationStatus.ERROR)
    assert done.status == OperationStatus.DONE, done
    routes = [p for p in harness.payloads(session, Route) if isinstance(p, Route) and p.operation_id == operation]
    assert len(routes) <= 1
    return operation, routes[0] if routes else None


async def ran_on(core: Core, operation: str) -> tuple[str | None, str | None, str | None]:
    row = await core.db.read(lambda conn: repos.operations.get(conn, operation))
    assert row is not None
    return row.provider, row.model, row.tier


async def test_a_short_simple_message_goes_local(
    harness: CoreHarness, mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = await routed_core(harness, mock, monkeypatch)
    session = await harness.session(core)

    operation, route = await turn(harness, core, session, SIMPLE)

    assert route == Route(
        operation_id=operation,
        tier="local",
        provider="ollama",
        model="qwen3:8b",
        code="simple",
        reason="A short, simple request, so the local model (qwen3:8b) answers it for free.",
        notify=False,
        estimated_tokens=estimate_tokens(SIMPLE),
    )
    # The route is announced with the user's message, before the turn runs.
    assert harness.types(session) == [
        "user_message",
        "session_updated",
        "route",
        "operation_status",
        "model_stream_chunk",
        "assistant_message",
        "usage",
        "operation_status",
    ]
    assert [r.model for r in mock.requests] == ["qwen3:8b"]
    assert await ran_on(core, operation) == ("ollama", "qwen3:8b", "local")


async def test_a_long_message_goes_to_the_first_cloud_tier(
    harness: CoreHarness, mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = await routed_core(harness, mock, monkeypatch)
    session = await harness.session(core)
    tokens = estimate_tokens(LONG)
    assert tokens > 8000

    operation, route = await turn(harness, core, session, LONG)

    assert route is not None
    assert (route.tier, route.provider, route.model, route.code, route.notify) == (
        "cloud",
        "openai",
        "mock-model",
        "too_long",
        True,
    )
    assert route.reason == (
        f"This one needed cloud: at about {tokens:,} tokens it is longer than the local model's 8,000-token budget."
    )
    assert [r.model for r in mock.requests] == ["mock-model"]
    assert await ran_on(core, operation) == ("openai", "mock-model", "cloud")


async def test_a_model_that_does_not_fit_is_skipped(
    harness: CoreHarness, mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = await routed_core(harness, mock, monkeypatch, memory=RED_MEMORY)
    session = await harness.session(core)
    preflight = await core.providers.preflight(core.selector.preset("ollama"), "qwen3:8b")
    assert preflight.verdict == "red"

    _, route = await turn(harness, core, session, SIMPLE)

    assert route is not None
    assert (route.tier, route.code, route.notify, route.warning) == ("cloud", "local_unavailable", True, None)
    assert route.reason == f"This one needed cloud: the local model is unavailable ({preflight.message.rstrip('.')})."
    assert "only 5.0 GB are usable" in route.reason
    assert [r.model for r in mock.requests] == ["mock-model"]


async def test_a_tight_fit_runs_local_with_a_warning(
    harness: CoreHarness, mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = await routed_core(harness, mock, monkeypatch, memory=YELLOW_MEMORY)
    session = await harness.session(core)

    _, simple = await turn(harness, core, session, SIMPLE)
    _, long = await turn(harness, core, session, LONG)

    assert simple is not None
    assert (simple.tier, simple.code) == ("local", "simple")
    assert simple.warning == (
        "qwen3:8b needs 6.0 GB (4.9 GB weights + 1.1 GB KV cache) of 7.0 GB usable: it fits, but may be slow."
    )
    # The warning is about the local model: a turn sent to the cloud does not carry it.
    assert long is not None
    assert (long.tier, long.warning) == ("cloud", None)
    assert [r.model for r in mock.requests] == ["qwen3:8b", "mock-model"]


async def test_ollama_down_means_cloud(
    harness: CoreHarness, mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    down = closed_port_url() + "/v1"
    core = await routed_core(harness, mock, monkeypatch, ollama_url=down)
    session = await harness.session(core)

    _, route = await turn(harness, core, session, SIMPLE)

    assert route is not None
    assert (route.tier, route.code, route.notify) == ("cloud", "local_unavailable", True)
    assert route.reason == (
        f"This one needed cloud: the local model is unavailable (Cannot reach Ollama at {down} (ConnectError). "
        "Is Ollama running?)."
    )
    assert [r.model for r in mock.requests] == ["mock-model"]


async def test_a_model_ollama_has_not_pulled_means_cloud(
    harness: CoreHarness, mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ollama answers 404 for a model it does not have: sending the turn there would fail it.
    mock.set_ollama_models([ollama_model(name="llama3.2")])
    core = await routed_core(harness, mock, monkeypatch)
    session = await harness.session(core)

    _, route = await turn(harness, core, session, SIMPLE)

    assert route is not None
    assert (route.tier, route.code) == ("cloud", "local_unavailable")
    assert "pull it with `ollama pull qwen3:8b`" in route.reason
    assert [r.model for r in mock.requests] == ["mock-model"]


async def test_preferring_cloud_never_asks_ollama(
    harness: CoreHarness, mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ollama is down, and that does not matter: the local tier is not wanted.
    core = await routed_core(harness, mock, monkeypatch, ollama_url=closed_port_url() + "/v1", preference="cloud")
    session = await harness.session(core)

    async def no_asking(provider: str, model: str) -> None:
        raise AssertionError(f"asked whether {provider}:{model} is available")

    monkeypatch.setattr(core.providers, "local_state", no_asking)

    _, route = await turn(harness, core, session, SIMPLE)

    assert route is not None
    assert (route.tier, route.model, route.code, route.notify) == ("cloud", "mock-model", "prefer_cloud", False)
    assert route.reason == "You prefer cloud, so this goes to cloud (mock-model)."
    assert [r.model for r in mock.requests] == ["mock-model"]


async def model_set(core: Core, session: str, model: str) -> SessionInfo:
    info = await HANDLERS["model/set"](core, None, ModelSetParams(session_id=session, model=model))
    assert isinstance(info, SessionInfo)
    return info


async def test_model_set_auto_turns_routing_on_for_a_session(
    harness: CoreHarness, mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = await routed_core(harness, mock, monkeypatch, enabled=False)
    session = await harness.session(core)

    _, unrouted = await turn(harness, core, session, SIMPLE)
    auto = await model_set(core, session, "auto")
    _, routed = await turn(harness, core, session, SIMPLE)
    pinned = await model_set(core, session, "openai:mock-model")
    _, unrouted_again = await turn(harness, core, session, SIMPLE)

    assert unrouted is None
    assert (auto.auto_model, auto.provider, auto.model) == (True, None, "auto")
    assert routed is not None and (routed.tier, routed.code) == ("local", "simple")
    assert (pinned.auto_model, pinned.provider, pinned.model) == (False, "openai", "mock-model")
    assert unrouted_again is None
    # The default provider's model (OPENAI_BASE_URL is a server of one's own, which serves the Ollama model first
    # and not the catalog's default), the router's local pick, then the pinned model.
    assert [r.model for r in mock.requests] == ["qwen3:8b", "qwen3:8b", "mock-model"]


async def test_a_session_with_its_own_model_is_not_routed(
    harness: CoreHarness, mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = await routed_core(harness, mock, monkeypatch)  # routing on for sessions without a model
    session = await harness.session(core)
    await model_set(core, session, "openai:mock-model")

    _, route = await turn(harness, core, session, SIMPLE)

    assert route is None
    assert [r.model for r in mock.requests] == ["mock-model"]
