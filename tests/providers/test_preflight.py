"""The local-model preflight against a mock Ollama (`/api/tags`, `/api/show`): the KV-cache arithmetic, the
GREEN / YELLOW / RED boundaries, and every way of not knowing (`unknown`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import httpx
import pytest

from cowork.config import CoworkConfig, LocalModelsConfig
from cowork.credentials import CredentialStore
from cowork.models import ModelSelector, presets
from cowork.protocol import PreflightInfo
from cowork.providers import ModelFacts, ProviderService, facts_from_ollama, fit, preflight_ollama
from cowork.store import Database
from cowork.testing.mockllm import MockLLMServer

from . import GIB, QWEN3_8B_KV_8K, QWEN3_8B_SIZE, closed_port_url, ollama_model

pytestmark = pytest.mark.anyio

RESERVE = 3 * GIB
REQUIRED_8K = QWEN3_8B_SIZE + QWEN3_8B_KV_8K  # 6,433,347,475 bytes
ServiceFactory = Callable[..., Awaitable[ProviderService]]


@pytest.fixture(scope="module")
def ollama() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


@pytest.fixture
def mock(ollama: MockLLMServer) -> Iterator[MockLLMServer]:
    ollama.set_ollama_models([ollama_model()])
    yield ollama
    ollama.set_ollama_models([])


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(trust_env=False) as c:
        yield c


async def check(
    client: httpx.AsyncClient,
    root: str,
    model: str = "qwen3:8b",
    *,
    total: int = 64 * GIB,
    reserve: int = RESERVE,
    context: int = 8192,
) -> PreflightInfo:
    return await preflight_ollama(
        client, root, model, context_tokens=context, total_memory=total, reserve_bytes=reserve, wait_seconds=5
    )


async def test_kv_cache_arithmetic_on_qwen3_8b(mock: MockLLMServer, client: httpx.AsyncClient) -> None:
    info = await check(client, mock.ollama_base_url, total=64 * GIB)

    assert QWEN3_8B_KV_8K == 1_207_959_552  # exactly 1.125 GiB
    assert info == PreflightInfo(
        model="qwen3:8b",
        verdict="green",
        message="qwen3:8b fits: 6.0 GB (4.9 GB weights + 1.1 GB KV cache) of 61.0 GB usable.",
        weights_bytes=QWEN3_8B_SIZE,
        kv_cache_bytes=1_207_959_552,
        required_bytes=QWEN3_8B_SIZE + 1_207_959_552,
        usable_bytes=61 * GIB,
        context_tokens=8192,
    )


@pytest.mark.parametrize(
    ("usable", "verdict"),
    [
        (REQUIRED_8K - 1, "red"),  # one byte short
        (REQUIRED_8K, "yellow"),  # fits exactly, but above 80% of what is usable
        (8_041_684_343, "yellow"),  # required / 0.8 = 8,041,684,343.75: still above 80%
        (8_041_684_344, "green"),  # now at most 80%
    ],
)
async def test_verdict_boundaries(mock: MockLLMServer, client: httpx.AsyncClient, usable: int, verdict: str) -> None:
    info = await check(client, mock.ollama_base_url, total=usable + RESERVE)

    assert (info.verdict, info.required_bytes, info.usable_bytes) == (verdict, REQUIRED_8K, usable)


@pytest.mark.parametrize(("usable", "verdict"), [(10 * GIB, "green"), (10 * GIB - 1, "yellow")])
def test_exactly_eighty_percent_is_still_green(usable: int, verdict: str) -> None:
    # 7 GiB of weights + 1 GiB of KV cache (1 layer x 8,192 tokens x 8 heads x (4,096 + 4,096) x 2 bytes) = 8 GiB.
    facts = ModelFacts(
        weights_bytes=7 * GIB, block_count=1, head_count_kv=8, key_length=4096, value_length=4096, context_length=None
    )

    info = fit("m", facts, context_tokens=8192, total_memory=usable + GIB, reserve_bytes=GIB)

    assert (info.required_bytes, info.verdict) == (8 * GIB, verdict)


async def test_red_says_why_and_what_to_do(mock: MockLLMServer, client: httpx.AsyncClient) -> None:
    info = await check(client, mock.ollama_base_url, total=8 * GIB)

    assert info.verdict == "red"
    assert info.message == (
        "qwen3:8b needs 6.0 GB (4.9 GB weights + 1.1 GB KV cache) at 8,192 tokens of context, but only 5.0 GB are "
        "usable (8.0 GB minus a 3.0 GB reserve): local routing is off. Pick a smaller model or quantization, or "
        "lower local_models.context_tokens."
    )


async def test_reserve_larger_than_memory_leaves_nothing_usable(mock: MockLLMServer, client: httpx.AsyncClient) -> None:
    info = await check(client, mock.ollama_base_url, total=2 * GIB, reserve=3 * GIB)

    assert (info.verdict, info.usable_bytes) == ("red", 0)


@pytest.mark.parametrize(("context", "used"), [(8192, 4096), (2048, 2048)])
async def test_context_is_capped_at_the_models_own(
    mock: MockLLMServer, client: httpx.AsyncClient, context: int, used: int
) -> None:
    mock.set_ollama_models([ollama_model(context_length=4096)])

    info = await check(client, mock.ollama_base_url, context=context)

    assert info.context_tokens == used
    assert info.kv_cache_bytes == 36 * used * 8 * (128 + 128) * 2


async def test_key_length_missing_is_embedding_over_heads(mock: MockLLMServer, client: httpx.AsyncClient) -> None:
    # Llama-style metadata has no attention.key_length / value_length: the head size is 4096 / 32 = 128.
    llama = ollama_model(
        name="llama3.1:8b",
        architecture="llama",
        context_length=131072,
        block_count=32,
        head_count=32,
        head_count_kv=8,
        embedding_length=4096,
        key_length=None,
        value_length=None,
    )
    mock.set_ollama_models([llama])

    info = await check(client, mock.ollama_base_url, "llama3.1:8b")

    assert info.kv_cache_bytes == 32 * 8192 * 8 * (128 + 128) * 2
    assert info.verdict == "green"


async def test_key_and_value_lengths_may_differ(mock: MockLLMServer, client: httpx.AsyncClient) -> None:
    mock.set_ollama_models([ollama_model(key_length=192, value_length=128)])

    info = await check(client, mock.ollama_base_url)

    assert info.kv_cache_bytes == 36 * 8192 * 8 * (192 + 128) * 2


async def test_a_model_ollama_does_not_have(mock: MockLLMServer, client: httpx.AsyncClient) -> None:
    info = await check(client, mock.ollama_base_url, "llama3.2")

    assert info == PreflightInfo(
        model="llama3.2",
        verdict="unknown",
        message="Ollama has no model 'llama3.2'; pull it with `ollama pull llama3.2`.",
    )


async def test_ollama_down_is_unknown(client: httpx.AsyncClient) -> None:
    info = await check(client, closed_port_url())

    assert info.verdict == "unknown"
    assert info.message.startswith("Could not check qwen3:8b: ")
    assert info.required_bytes is None


@pytest.mark.parametrize(
    ("served", "wanted", "verdict"),
    [
        ("qwen3", "qwen3", "green"),  # listed as qwen3:latest
        ("qwen3", "qwen3:latest", "green"),
        ("qwen3:latest", "qwen3", "green"),
        ("qwen3:8b", "qwen3", "unknown"),  # qwen3 means qwen3:latest, which is not there
        ("qwen3", "qwen3:8b", "unknown"),
    ],
)
async def test_untagged_names_mean_latest(
    mock: MockLLMServer, client: httpx.AsyncClient, served: str, wanted: str, verdict: str
) -> None:
    mock.set_ollama_models([ollama_model(name=served)])

    info = await check(client, mock.ollama_base_url, wanted)

    assert (info.model, info.verdict) == (wanted, verdict)
    if verdict == "green":
        assert info.kv_cache_bytes == QWEN3_8B_KV_8K


def test_facts_need_the_layer_and_head_counts() -> None:
    show = {"model_info": {"general.architecture": "qwen3", "qwen3.attention.head_count": 32}}

    with pytest.raises(ValueError, match=r"qwen3\.block_count"):
        facts_from_ollama(1, show)
    with pytest.raises(ValueError, match="model_info"):
        facts_from_ollama(1, {})


def test_kv_heads_default_to_the_attention_heads() -> None:
    # Models without grouped-query attention report no head_count_kv: every head has its own keys and values.
    info = {
        "general.architecture": "phi",
        "phi.block_count": 2,
        "phi.attention.head_count": 4,
        "phi.embedding_length": 256,
    }

    facts = facts_from_ollama(10, {"model_info": info})

    assert facts == ModelFacts(
        weights_bytes=10, block_count=2, head_count_kv=4, key_length=64, value_length=64, context_length=None
    )
    # No context length of its own: the configured context is used as is.
    assert fit("phi", facts, context_tokens=1000, total_memory=GIB, reserve_bytes=0).kv_cache_bytes == (
        2 * 1000 * 4 * (64 + 64) * 2
    )


# -- through the provider service: configured reserve and context, injected total memory -------------------------


@pytest.fixture
async def make_service(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ServiceFactory]:
    made: list[tuple[ProviderService, Database]] = []

    async def make(base_url: str, total_memory: int, **local_models: object) -> ProviderService:
        home = tmp_path_factory.mktemp("home")
        config = CoworkConfig(local_models=LocalModelsConfig.model_validate(local_models))
        db = Database.memory()
        db.migrate()
        service = ProviderService(
            ModelSelector(config, {"OLLAMA_BASE_URL": base_url}),
            CredentialStore(home, backend="file"),
            db,
            config,
            total_memory=lambda: total_memory,
        )
        made.append((service, db))
        return service

    yield make
    for service, db in made:
        await service.aclose()
        db.close()


@pytest.mark.parametrize(("reserve_gb", "verdict"), [(3, "red"), (1, "yellow"), (0, "green")])
async def test_service_uses_the_configured_reserve(
    mock: MockLLMServer, make_service: ServiceFactory, reserve_gb: float, verdict: str
) -> None:
    total = REQUIRED_8K + 2 * GIB  # usable: required - 1 GiB, required + 1 GiB, required + 2 GiB
    service = await make_service(mock.openai_base_url, total, reserve_gb=reserve_gb)

    info = await service.preflight(presets()["ollama"], "qwen3:8b")

    assert (info.verdict, info.usable_bytes) == (verdict, total - reserve_gb * GIB)


async def test_service_uses_the_configured_context(mock: MockLLMServer, make_service: ServiceFactory) -> None:
    service = await make_service(mock.openai_base_url, 64 * GIB, context_tokens=16384)

    info = await service.preflight(presets()["ollama"], "qwen3:8b")

    assert (info.context_tokens, info.kv_cache_bytes) == (16384, 2 * QWEN3_8B_KV_8K)


async def test_service_caches_the_verdict_until_refresh(mock: MockLLMServer, make_service: ServiceFactory) -> None:
    service = await make_service(mock.openai_base_url, 64 * GIB)
    ollama = presets()["ollama"]
    assert (await service.preflight(ollama, "qwen3:8b")).verdict == "green"

    mock.set_ollama_models([ollama_model(size=100 * GIB)])

    assert (await service.preflight(ollama, "qwen3:8b")).verdict == "green"  # cached
    assert (await service.preflight(ollama, "qwen3:8b", refresh=True)).verdict == "red"
