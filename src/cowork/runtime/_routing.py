"""Routing turns: which tiers there are, when the router picks a turn's model, and what "try harder" climbs to."""

from __future__ import annotations

from dataclasses import dataclass

from cowork.config import CoworkConfig
from cowork.models import ModelSelector, ModelTarget, connect_hint
from cowork.protocol import ErrorCode, ErrorSource, ProtocolError, RouterInfo, TierInfo
from cowork.providers import ProviderService
from cowork.routing import RouteDecision, Router, RouteRequest, Tier
from cowork.sessions import AUTO_MODEL
from cowork.store import SessionRow

__all__ = ["Routed", "TurnRouter"]

_LOCAL_TIER = "local"


@dataclass(frozen=True)
class Routed:
    decision: RouteDecision
    warning: str | None = None


_SERVED_WAIT_SECONDS = 2.0


class TurnRouter:
    """Builds the router from configuration and asks the provider service whether the local tier is usable."""

    def __init__(self, config: CoworkConfig, selector: ModelSelector, providers: ProviderService) -> None:
        self._config = config.router
        self._selector = selector
        self._providers = providers

    def _local_tier(self) -> Tier | None:
        if not self._config.local:
            return None
        provider, model = self._selector.split(self._config.local, None)
        if provider is None:
            raise ProtocolError(
                ErrorCode.INVALID_PARAMS,
                f'router.local must be "provider:model" (e.g. "ollama:qwen3:8b"), got {self._config.local!r}.',
                source=ErrorSource.CONFIG,
            )
        return Tier(_LOCAL_TIER, provider, model, local=True)

    def ladder(self, provider: str | None = None) -> list[Tier]:
        """The tiers, weakest first: the local one (if configured), then the configured cloud tiers, else the
        catalog tiers of `provider` (default: the default provider)."""
        tiers: list[Tier] = []
        local = self._local_tier()
        if local is not None:
            tiers.append(local)
        if self._config.tiers:
            tiers += [Tier(t.name, t.provider, t.model) for t in self._config.tiers]
            return tiers
        provider = provider or self._selector.default_provider()
        preset = self._selector.presets.get(provider) if provider else None
        if preset is not None and not preset.local:
            tiers += [Tier(m.tier or m.id, preset.id, m.id) for m in preset.tiers()]
        return tiers

    async def served_default(self, target: ModelTarget) -> str | None:
        """A served model to use instead of the catalog's default one the provider's own server does not serve
        (see `ProviderService.served_default`)."""
        # Bounded: a slow or unreachable server must not hold up the turn (it then fails or runs with `target`).
        return await self._providers.served_default(target.provider, target.model, wait=_SERVED_WAIT_SECONDS)

    def routes(self, session: SessionRow) -> bool:
        """Does the router pick this session's model? (`auto`, or no choice of its own and routing enabled)."""
        if session.model == AUTO_MODEL:
            return True
        return session.model is None and session.provider is None and self._config.enabled

    async def _local_state(self, tiers: list[Tier]) -> tuple[bool, str | None, str | None]:
        local = next((t for t in tiers if t.local), None)
        if local is None or self._config.preference != "local":
            return local is not None, None, None
        state = await self._providers.local_state(local.provider, local.model)
        return state.available, state.note, state.warning

    async def route(self, text: str, history_tokens: int) -> Routed:
        """Pick the tier for a new turn.

        Raises:
            ProtocolError: `no_provider` when there are no tiers at all.
        """
        tiers = self._require(self.ladder())
        available, note, warning = await self._local_state(tiers)
        decision = self._router(tiers).route(
            RouteRequest(
                text=text,
                history_tokens=history_tokens,
                preference=self._config.preference,
                local_available=available,
                local_note=note,
            )
        )
        return Routed(decision, warning if decision.tier.local else None)

    def step_up(self, provider: str, model: str, tier: str | None, *, text: str, history_tokens: int) -> RouteDecision:
        """The decision for "try harder" on a turn that ran on `provider:model` (tier `tier`, if routed).

        A model that is not on the ladder is placed by the router's own rules (one above what it would pick).

        Raises:
            ProtocolError: `no_provider` when there is no ladder at all.
        """
        tiers = self._require(self.ladder(provider))
        current = tier if tier and any(t.name == tier for t in tiers) else None
        if current is None:
            preset = self._selector.presets.get(provider)
            current = next((t.name for t in tiers if (t.provider, t.model) == (provider, model)), None)
            if current is None and preset is not None and preset.local and tiers[0].local:
                current = tiers[0].name
        request = RouteRequest(
            text=text,
            history_tokens=history_tokens,
            try_harder=True,
            previous_tier=current,
            preference=self._config.preference,
        )
        return self._router(tiers).route(request)

    def _router(self, tiers: list[Tier]) -> Router:
        return Router(
            tiers, local_max_tokens=self._config.local_max_tokens, simple_max_tokens=self._config.simple_max_tokens
        )

    @staticmethod
    def _require(tiers: list[Tier]) -> list[Tier]:
        if not tiers:
            raise ProtocolError(
                ErrorCode.NO_PROVIDER,
                f"The router has no models to choose from: connect a provider ({connect_hint()}) or configure router.tiers "
                "and router.local.",
                source=ErrorSource.PROVIDER,
            )
        return tiers

    async def info(self) -> RouterInfo:
        try:
            tiers = self.ladder()
        except ProtocolError:
            tiers = []
        note = None
        if tiers and self._config.preference == "local":
            available, note, _warning = await self._local_state(tiers)
            note = None if available else note
        return RouterInfo(
            enabled=self._config.enabled,
            preference=self._config.preference,
            tiers=[TierInfo(name=t.name, provider=t.provider, model=t.model, local=t.local) for t in tiers],
            local_note=note,
        )
