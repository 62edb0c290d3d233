"""Providers and models on the wire: connecting, status, the model list, switching, reasoning, retry a turn."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, TypeAlias

from pydantic import Field, field_validator

from ._base import Params, WireModel

__all__ = [
    "KeySource",
    "ModelInfo",
    "ModelListParams",
    "ModelListResult",
    "ModelSetParams",
    "PreflightInfo",
    "ProviderConnectParams",
    "ProviderDisconnectParams",
    "ProviderDisconnectResult",
    "ProviderInfo",
    "ProviderState",
    "ProviderStatusInfo",
    "ProviderStatusParams",
    "ProviderStatusResult",
    "ReasoningEffort",
    "RouterInfo",
    "TierInfo",
    "TurnRetryParams",
    "TurnRetryResult",
]

_ID = Field(min_length=1, max_length=200)

ReasoningEffort: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
"""How hard a model thinks before answering; `off` turns thinking off where the model allows it."""

ProviderState: TypeAlias = Literal["connected", "missing_key", "unreachable", "auth_failed", "unchecked", "error"]
"""`unchecked`: a key is there but the provider was not probed (`probe: false`)."""

KeySource: TypeAlias = Literal["store", "env", "none", "not_needed"]


class ProviderInfo(WireModel):
    """A model provider Cowork knows."""

    id: str
    name: str
    configured: bool = Field(description="True when a key or base URL for it is available.")
    key_env: list[str]
    default_model: str | None = None
    local: bool = Field(default=False, description="Runs on this machine (Ollama, LM Studio, vLLM, llama.cpp).")
    key_source: KeySource = "none"


class ModelInfo(WireModel):
    """A model a provider offers."""

    provider: str
    id: str
    context_window: int | None = None
    supports_tools: bool = True
    supports_reasoning: bool = False
    local: bool = False
    source: Literal["catalog", "server"] = Field(
        default="catalog", description="`server`: reported by the running local server, not in the catalog."
    )
    tier: str | None = Field(default=None, description="The catalog's tier: fast, strong or max.")
    input_per_mtok: float | None = Field(default=None, description="USD per million input tokens, when known.")
    output_per_mtok: float | None = Field(default=None, description="USD per million output tokens, when known.")


class TierInfo(WireModel):
    name: str
    provider: str
    model: str
    local: bool = False


class RouterInfo(WireModel):
    """The complexity router: whether it picks models, its preference and its tiers (weakest first)."""

    enabled: bool
    preference: Literal["local", "cloud"]
    tiers: list[TierInfo]
    local_note: str | None = Field(default=None, description="Why the local tier is off, when it is.")


class ModelListParams(Params):
    session_id: str | None = Field(default=None, max_length=200)
    refresh: bool = Field(default=False, description="Ask local servers again for their models (not cached).")


class ModelListResult(WireModel):
    providers: list[ProviderInfo]
    models: list[ModelInfo]
    current_provider: str | None = None
    current_model: str | None = None
    auto: bool = Field(default=False, description="The router picks the model for each turn of this session.")
    reasoning_effort: ReasoningEffort | None = None
    router: RouterInfo | None = None


class ModelSetParams(Params):
    session_id: str = _ID
    model: str = Field(
        min_length=1, max_length=200, description="A model id, `provider:model`, or `auto` to let the router pick."
    )
    provider: str | None = Field(default=None, max_length=100)


class PreflightInfo(WireModel):
    """Whether a local model fits in this machine's memory: weights plus KV cache against what is free."""

    model: str
    verdict: Literal["green", "yellow", "red", "unknown"]
    message: str
    weights_bytes: int | None = None
    kv_cache_bytes: int | None = None
    required_bytes: int | None = None
    usable_bytes: int | None = None
    context_tokens: int | None = None


class ProviderStatusInfo(WireModel):
    """Whether a provider can be used now, and what to do when it cannot."""

    id: str
    name: str
    state: ProviderState
    message: str = Field(description="What the state means and, when it is not connected, how to fix it.")
    local: bool = False
    key_source: KeySource = "none"
    key_env: list[str] = Field(default_factory=list)
    base_url: str | None = None
    models: list[str] = Field(default_factory=list, description="What a local server reports it serves.")
    preflight: list[PreflightInfo] = Field(default_factory=list, description="Ollama models: do they fit?")
    latency_ms: float | None = None
    checked_at: datetime | None = None


def _http_url(value: str | None) -> str | None:
    if value is not None and not value.startswith(("http://", "https://")):
        raise ValueError("must be an http:// or https:// URL")
    return value


class ProviderConnectParams(Params):
    provider: str = Field(min_length=1, max_length=100)
    api_key: str | None = Field(
        default=None, min_length=1, max_length=4096, description="Saved to the credential store, never to config."
    )
    base_url: str | None = Field(default=None, min_length=8, max_length=2000)
    verify: bool = Field(
        default=True, description="Check the key (or the local server) first; nothing is saved if it fails."
    )

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        return _http_url(value)

    @field_validator("api_key")
    @classmethod
    def _check_key(cls, value: str | None) -> str | None:
        if value is not None and (value != value.strip() or any(c.isspace() for c in value)):
            raise ValueError("an API key has no spaces or line breaks (was something else pasted with it?)")
        return value


class ProviderDisconnectParams(Params):
    provider: str = Field(min_length=1, max_length=100)


class ProviderDisconnectResult(WireModel):
    provider: str
    removed_key: bool
    removed_base_url: bool


class ProviderStatusParams(Params):
    provider: str | None = Field(default=None, max_length=100, description="One provider; default: all of them.")
    probe: bool = Field(
        default=True, description="Contact each provider that has a key, and every local server, to check it."
    )


class ProviderStatusResult(WireModel):
    providers: list[ProviderStatusInfo]
    credential_store: str = Field(description="Where saved keys live: the OS keyring or a 0600 file.")


class TurnRetryParams(Params):
    session_id: str = _ID
    operation_id: str | None = Field(
        default=None, max_length=200, description="The turn to retry; default: the session's latest."
    )
    tier: Literal["up", "same"] = Field(default="up", description="`up`: the next stronger tier (try harder).")
    confirm: bool = Field(
        default=False, description="false: only estimate the cost; true: run the retry (after the user agreed)."
    )
    client_message_id: str | None = Field(
        default=None, min_length=1, max_length=200, description="Makes a confirmed retry idempotent."
    )


class TurnRetryResult(WireModel):
    ask_id: str = Field(description="The retry group: the original turn and its retries share it.")
    provider: str
    model: str
    tier: str | None = None
    from_model: str
    estimated_cost_usd: float | None = Field(
        default=None, description="What the retry is expected to cost; null when unknown."
    )
    ask_cost_usd: float = Field(description="What the group has cost so far.")
    started: bool
    operation_id: str | None = None
    duplicate: bool = False
