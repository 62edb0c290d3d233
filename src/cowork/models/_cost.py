"""What a model request costs: the configured price, else genai-prices' table, else the catalog's, else unknown.

Local providers (Ollama, LM Studio, vLLM, llama.cpp) cost nothing. genai-prices (which brings an HTTP client for its
updater) is imported on the first price looked up, not at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from cowork.config import PriceOverride

from ._catalog import presets

__all__ = ["Cost", "cost_of", "estimate_cost", "price_per_mtok"]

_PROBE_TOKENS = 10_000
"""Token count used to read a per-token price off the table (below every long-context price tier)."""


@dataclass(frozen=True, slots=True)
class Cost:
    usd: float
    known: bool
    """False when neither configuration, the price table nor the catalog knows the model (then `usd` is 0)."""


def _is_local(provider: str) -> bool:
    preset = presets().get(provider)
    return preset is not None and preset.local


def _catalog_price(provider: str, model: str) -> tuple[float, float] | None:
    preset = presets().get(provider)
    entry = preset.model(model) if preset is not None else None
    if entry is not None and entry.input_per_mtok is not None and entry.output_per_mtok is not None:
        return entry.input_per_mtok, entry.output_per_mtok
    return None


def cost_of(
    provider: str,
    model: str,
    *,
    input_tokens: int,
    output_tokens: int,
    cached_tokens: int = 0,
    overrides: Mapping[str, PriceOverride] | None = None,
) -> Cost:
    """Price one request. `input_tokens` includes cached tokens; cached ones are billed at the cached rate."""
    overrides = overrides or {}
    price = overrides.get(f"{provider}:{model}") or overrides.get(model)
    if price is not None:
        cached_rate = price.cached_input_per_mtok if price.cached_input_per_mtok is not None else price.input_per_mtok
        usd = (
            (input_tokens - cached_tokens) * price.input_per_mtok
            + cached_tokens * cached_rate
            + output_tokens * price.output_per_mtok
        ) / 1_000_000
        return Cost(usd, True)
    if _is_local(provider):
        return Cost(0.0, True)
    from genai_prices import Usage as PriceUsage
    from genai_prices import calc_price

    try:
        calculation = calc_price(
            PriceUsage(input_tokens=input_tokens, output_tokens=output_tokens, cache_read_tokens=cached_tokens or None),
            model_ref=model,
            provider_id=provider,
        )
    except LookupError:
        catalog = _catalog_price(provider, model)
        if catalog is None:
            return Cost(0.0, False)
        return Cost((input_tokens * catalog[0] + output_tokens * catalog[1]) / 1_000_000, True)
    return Cost(float(calculation.total_price), True)


@lru_cache(maxsize=512)
def _table_price(provider: str, model: str) -> tuple[float, float] | None:
    from genai_prices import Usage as PriceUsage
    from genai_prices import calc_price

    try:
        calculation = calc_price(
            PriceUsage(input_tokens=_PROBE_TOKENS, output_tokens=_PROBE_TOKENS), model_ref=model, provider_id=provider
        )
    except LookupError:
        return _catalog_price(provider, model)
    scale = 1_000_000 / _PROBE_TOKENS
    return float(calculation.input_price) * scale, float(calculation.output_price) * scale


def price_per_mtok(
    provider: str, model: str, overrides: Mapping[str, PriceOverride] | None = None
) -> tuple[float, float] | None:
    """USD per million (input, output) tokens, or None when unknown."""
    price = (overrides or {}).get(f"{provider}:{model}") or (overrides or {}).get(model)
    if price is not None:
        return price.input_per_mtok, price.output_per_mtok
    if _is_local(provider):
        return 0.0, 0.0
    return _table_price(provider, model)


def estimate_cost(
    provider: str,
    model: str,
    *,
    input_tokens: int,
    output_tokens: int,
    overrides: Mapping[str, PriceOverride] | None = None,
) -> Cost:
    """What a request of about this size is expected to cost (budgets and "try harder" show it first)."""
    return cost_of(provider, model, input_tokens=input_tokens, output_tokens=output_tokens, overrides=overrides)
