"""Local-model preflight: will an Ollama model fit in this machine's memory at the context Cowork runs it with?

    required = weights + KV cache
    KV cache = layers x context x KV heads x (key dim + value dim) x 2 bytes (f16)
    usable   = total memory - reserve
    RED      required > usable            the model would not load (or would swap): local routing off
    YELLOW   required > 80% of usable     it may be slow: warn
    GREEN    otherwise

The figures come from Ollama's own metadata: `/api/tags` (the weights' size on disk) and `/api/show`
(`model_info`: block count, KV heads, key/value lengths, context length).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from cowork.protocol import PreflightInfo

if TYPE_CHECKING:
    import httpx

__all__ = ["ModelFacts", "facts_from_ollama", "fit", "kv_cache_bytes", "preflight_ollama", "same_model"]

_GIB = 1024**3
_YELLOW_SHARE = 0.8
_BYTES_PER_ELEMENT = 2  # Ollama's default KV cache type is f16


@dataclass(frozen=True)
class ModelFacts:
    weights_bytes: int
    block_count: int
    head_count_kv: int
    key_length: int
    value_length: int
    context_length: int | None


def _int(info: dict[str, Any], key: str) -> int | None:
    value = info.get(key)
    return int(value) if isinstance(value, int | float) and value > 0 else None


def facts_from_ollama(weights_bytes: int, show: dict[str, Any]) -> ModelFacts:
    """Read the sizes from `/api/show`'s `model_info` (keys are prefixed by the architecture, e.g. `qwen3.`).

    Raises:
        ValueError: the metadata lacks what the estimate needs.
    """
    info = show.get("model_info")
    if not isinstance(info, dict):
        raise ValueError("no model_info in /api/show")
    arch = info.get("general.architecture")
    if not isinstance(arch, str):
        raise ValueError("no general.architecture in model_info")
    blocks = _int(info, f"{arch}.block_count")
    heads = _int(info, f"{arch}.attention.head_count")
    kv_heads = _int(info, f"{arch}.attention.head_count_kv") or heads
    embedding = _int(info, f"{arch}.embedding_length")
    head_dim = embedding // heads if embedding and heads else None
    key_length = _int(info, f"{arch}.attention.key_length") or head_dim
    value_length = _int(info, f"{arch}.attention.value_length") or key_length
    if not (blocks and kv_heads and key_length and value_length):
        raise ValueError(f"model_info lacks {arch}.block_count / attention.head_count_kv / key_length")
    return ModelFacts(
        weights_bytes=weights_bytes,
        block_count=blocks,
        head_count_kv=kv_heads,
        key_length=key_length,
        value_length=value_length,
        context_length=_int(info, f"{arch}.context_length"),
    )


def kv_cache_bytes(facts: ModelFacts, context_tokens: int) -> int:
    return (
        facts.block_count
        * context_tokens
        * facts.head_count_kv
        * (facts.key_length + facts.value_length)
        * (_BYTES_PER_ELEMENT)
    )


def fit(model: str, facts: ModelFacts, *, context_tokens: int, total_memory: int, reserve_bytes: int) -> PreflightInfo:
    """GREEN / YELLOW / RED for running `model` with `context_tokens` of context (capped at the model's own)."""
    context = min(context_tokens, facts.context_length) if facts.context_length else context_tokens
    kv = kv_cache_bytes(facts, context)
    required = facts.weights_bytes + kv
    usable = max(0, total_memory - reserve_bytes)
    verdict: Literal["green", "yellow", "red"]
    sizes = f"{required / _GIB:.1f} GB ({facts.weights_bytes / _GIB:.1f} GB weights + {kv / _GIB:.1f} GB KV cache)"
    if required > usable:
        verdict = "red"
        message = (
            f"{model} needs {sizes} at {context:,} tokens of context, but only {usable / _GIB:.1f} GB are usable "
            f"({total_memory / _GIB:.1f} GB minus a {reserve_bytes / _GIB:.1f} GB reserve): local routing is off. "
            "Pick a smaller model or quantization, or lower local_models.context_tokens."
        )
    elif required > usable * _YELLOW_SHARE:
        verdict = "yellow"
        message = f"{model} needs {sizes} of {usable / _GIB:.1f} GB usable: it fits, but may be slow."
    else:
        verdict = "green"
        message = f"{model} fits: {sizes} of {usable / _GIB:.1f} GB usable."
    return PreflightInfo(
        model=model,
        verdict=verdict,
        message=message,
        weights_bytes=facts.weights_bytes,
        kv_cache_bytes=kv,
        required_bytes=required,
        usable_bytes=usable,
        context_tokens=context,
    )


def same_model(listed: str, wanted: str) -> bool:
    """Is `listed` (a name Ollama reports) the model `wanted`?"""
    # Ollama lists "qwen3:latest" for a model pulled as "qwen3".
    return listed == wanted or listed == f"{wanted}:latest" or wanted == f"{listed}:latest"


async def preflight_ollama(
    client: httpx.AsyncClient,
    root_url: str,
    model: str,
    *,
    context_tokens: int,
    total_memory: int,
    reserve_bytes: int,
    wait_seconds: float,
) -> PreflightInfo:
    """Ask a running Ollama about `model` and judge whether it fits. Never raises: problems are `unknown`."""
    import httpx  # loaded by the caller's client already; only its exceptions are needed here

    try:
        tags = (await client.get(f"{root_url}/api/tags", timeout=wait_seconds)).raise_for_status().json()
        entry = next((m for m in tags.get("models", []) if same_model(str(m.get("name")), model)), None)
        if entry is None:
            return PreflightInfo(
                model=model,
                verdict="unknown",
                message=f"Ollama has no model {model!r}; pull it with `ollama pull {model}`.",
            )
        response = await client.post(f"{root_url}/api/show", json={"model": entry["name"]}, timeout=wait_seconds)
        facts = facts_from_ollama(int(entry.get("size") or 0), response.raise_for_status().json())
    except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return PreflightInfo(model=model, verdict="unknown", message=f"Could not check {model}: {exc}")
    return fit(model, facts, context_tokens=context_tokens, total_memory=total_memory, reserve_bytes=reserve_bytes)
