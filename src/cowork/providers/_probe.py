"""Asking a provider whether it can be used: one cheap authenticated GET of its model list."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cowork.models import ProviderPreset, connect_hint
from cowork.protocol import ProviderState

if TYPE_CHECKING:
    import httpx

__all__ = ["ProbeResult", "native_ollama_url", "probe"]

_ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True)
class ProbeResult:
    state: ProviderState
    message: str
    models: list[str] = field(default_factory=list)
    latency_ms: float | None = None


def native_ollama_url(base_url: str) -> str:
    """Ollama serves its native API (`/api/...`) at the root of the URL its OpenAI-compatible API has under `/v1`."""
    root = base_url.rstrip("/")
    return root.removesuffix("/v1")


def _request(preset: ProviderPreset, base_url: str, api_key: str | None) -> tuple[str, dict[str, str]]:
    root = base_url.rstrip("/")
    headers: dict[str, str] = {}
    if preset.probe == "anthropic":
        if api_key:
            headers["x-api-key"] = api_key
        headers["anthropic-version"] = _ANTHROPIC_VERSION
        return f"{root}/v1/models", headers
    if preset.probe == "google":
        if api_key:
            headers["x-goog-api-key"] = api_key
        return f"{root}/v1beta/models", headers
    if preset.probe == "ollama":
        return f"{native_ollama_url(root)}/api/tags", headers
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    return f"{root}/models", headers


def _model_ids(preset: ProviderPreset, body: Any) -> list[str]:
    if not isinstance(body, dict):
        return []
    if preset.probe == "ollama":
        entries, key = body.get("models"), "name"
    elif preset.probe == "google":
        entries, key = body.get("models"), "name"
    else:
        entries, key = body.get("data"), "id"
    ids = [str(e[key]).removeprefix("models/") for e in entries or [] if isinstance(e, dict) and key in e]
    return ids


def _google_bad_key(preset: ProviderPreset, response: httpx.Response) -> bool:
    # Google answers a wrong key with 400 INVALID_ARGUMENT (reason API_KEY_INVALID), not 401.
    return preset.probe == "google" and response.status_code == 400 and "API_KEY_INVALID" in response.text


async def probe(
    client: httpx.AsyncClient, preset: ProviderPreset, base_url: str, api_key: str | None, *, wait_seconds: float
) -> ProbeResult:
    """Connected, auth failed, unreachable, or an error, with a sentence saying what to do about it."""
    import httpx  # loaded by the caller's client already; only its exceptions are needed here

    url, headers = _request(preset, base_url, api_key)
    started = time.perf_counter()
    try:
        response = await client.get(url, headers=headers, timeout=wait_seconds)
    except httpx.TimeoutException:
        return ProbeResult("unreachable", f"{preset.name} did not answer at {base_url} within {wait_seconds:g} s.")
    except httpx.HTTPError as exc:
        hint = f" Is {preset.name} running?" if preset.local else " Check the network and the base URL."
        return ProbeResult("unreachable", f"Cannot reach {preset.name} at {base_url} ({type(exc).__name__}).{hint}")
    latency = (time.perf_counter() - started) * 1000
    status = response.status_code
    if status in (401, 403) or _google_bad_key(preset, response):
        return ProbeResult(
            "auth_failed",
            f"{preset.name} rejected the API key (HTTP {status}). Connect it again ({connect_hint(preset.id)}).",
            latency_ms=latency,
        )
    if status == 429:
        return ProbeResult("connected", f"{preset.name} accepted the key but is rate limiting now.", latency_ms=latency)
    if status >= 400:
        return ProbeResult(
            "error",
            f"{preset.name} answered HTTP {status} at {url}; is the base URL right?",
            latency_ms=latency,
        )
    try:
        models = _model_ids(preset, response.json())
    except ValueError:
        return ProbeResult("error", f"{url} did not answer with JSON; is the base URL right?", latency_ms=latency)
    return ProbeResult("connected", f"{preset.name} is connected.", models, latency)
