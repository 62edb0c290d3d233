"""Provider presets and the model catalog, read from `providers.toml`."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args

__all__ = ["TIER_ORDER", "CatalogModel", "Family", "Probe", "ProviderPreset", "presets"]

Family = Literal["openai", "openai-chat", "anthropic", "google"]
Probe = Literal["openai", "anthropic", "google", "ollama"]
TIER_ORDER: tuple[str, ...] = ("fast", "strong", "max")
"""The catalog's tiers, weakest first: the ladder "try harder" climbs."""


@dataclass(frozen=True)
class CatalogModel:
    id: str
    context_window: int | None = None
    tools: bool = True
    reasoning: bool = False
    tier: str | None = None
    input_per_mtok: float | None = None
    output_per_mtok: float | None = None


@dataclass(frozen=True)
class ProviderPreset:
    id: str
    name: str
    family: Family
    key_env: tuple[str, ...] = ()
    base_url_env: tuple[str, ...] = ()
    base_url: str | None = None
    default_model: str | None = None
    requires_key: bool = True
    local: bool = False
    profile: str | None = None
    """pydantic-ai's provider whose model profiles fit this provider's models."""
    probe: Probe = "openai"
    key_url: str | None = None
    models: tuple[CatalogModel, ...] = field(default_factory=tuple)

    def model(self, model_id: str) -> CatalogModel | None:
        return next((m for m in self.models if m.id == model_id), None)

    def tiers(self) -> list[CatalogModel]:
        """The catalog's tiered models, weakest first."""
        tiered = [m for m in self.models if m.tier in TIER_ORDER]
        return sorted(tiered, key=lambda m: TIER_ORDER.index(m.tier or ""))


_FIELDS = {
    "name",
    "family",
    "key_env",
    "base_url_env",
    "base_url",
    "default_model",
    "requires_key",
    "local",
    "profile",
    "probe",
    "key_url",
    "models",
}


def _preset(pid: str, raw: dict[str, Any]) -> ProviderPreset:
    where = f"providers.toml: [{pid}]"
    unknown = set(raw) - _FIELDS
    if unknown:
        raise ValueError(f"{where} unknown keys {sorted(unknown)}")
    if raw["family"] not in get_args(Family):
        raise ValueError(f"{where} family {raw['family']!r} is not one of {get_args(Family)}")
    probe = raw.get("probe", "openai")
    if probe not in get_args(Probe):
        raise ValueError(f"{where} probe {probe!r} is not one of {get_args(Probe)}")
    models = tuple(CatalogModel(**m) for m in raw.get("models", ()))
    for m in models:
        if m.tier is not None and m.tier not in TIER_ORDER:
            raise ValueError(f"{where} model {m.id!r}: tier {m.tier!r} is not one of {TIER_ORDER}")
    return ProviderPreset(
        id=pid,
        name=raw["name"],
        family=raw["family"],
        key_env=tuple(raw.get("key_env", ())),
        base_url_env=tuple(raw.get("base_url_env", ())),
        base_url=raw.get("base_url"),
        default_model=raw.get("default_model"),
        requires_key=raw.get("requires_key", True),
        local=raw.get("local", False),
        profile=raw.get("profile"),
        probe=probe,
        key_url=raw.get("key_url"),
        models=models,
    )


@cache
def presets() -> dict[str, ProviderPreset]:
    """Every known provider, by id, in the file's order (which is also the auto-detection order)."""
    with (Path(__file__).parent / "providers.toml").open("rb") as fh:
        data = tomllib.load(fh)
    return {pid: _preset(pid, raw) for pid, raw in data.items()}
