"""Which providers and models a user can choose from, which one a session uses, and switching it (`model/list`,
`model/set`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol, cast

from cowork.config import CoworkConfig
from cowork.models import ModelSelector, ProviderPreset, no_provider_message, price_per_mtok
from cowork.protocol import (
    ErrorCode,
    ErrorSource,
    ModelInfo,
    ModelListParams,
    ModelListResult,
    ModelSetParams,
    ProtocolError,
    ProviderInfo,
    ReasoningEffort,
    RouterInfo,
    SessionInfo,
)
from cowork.sessions import AUTO_MODEL
from cowork.store import SessionRow

from ._service import ProviderService

__all__ = ["ModelChoices", "SessionRows", "TurnRouting"]


class SessionRows(Protocol):
    """The session store's settings API, as far as choosing a model needs it."""

    async def get_row(self, session_id: str) -> SessionRow: ...

    async def update_settings(self, session_id: str, **changes: str | bool | None) -> SessionInfo: ...


class TurnRouting(Protocol):
    """The complexity router as seen from model choice (the runtime's turn router)."""

    def routes(self, session: SessionRow) -> bool: ...

    async def route(self, text: str, history_tokens: int) -> object: ...

    async def info(self) -> RouterInfo: ...


class ModelChoices:
    """Lists providers and models (with prices and what local servers serve) and sets a session's model.

    The router, the session settings and "is a turn running" come in as narrow interfaces, because the runtime that
    owns them is built on top of this package.
    """

    def __init__(
        self,
        config: CoworkConfig,
        selector: ModelSelector,
        providers: ProviderService,
        *,
        sessions: SessionRows,
        router: TurnRouting,
        busy: Callable[[str], object],
    ) -> None:
        self._config = config
        self._selector = selector
        self._providers = providers
        self._sessions = sessions
        self._router = router
        self._busy = busy

    async def list_models(self, params: ModelListParams) -> ModelListResult:
        """Every provider and model, and the current choice (of `params.session_id`, else the defaults).

        Raises:
            ProtocolError: `session_not_found`.
        """
        selector = self._selector
        current_provider = selector.default_provider()
        current_model = selector.default_model(current_provider) if current_provider else None
        auto = self._config.router.enabled
        effort = self._config.agent.reasoning_effort
        if params.session_id is not None:
            session = await self._sessions.get_row(params.session_id)
            auto = self._router.routes(session)
            effort = cast(ReasoningEffort | None, session.reasoning_effort) or effort
            if session.provider or (session.model and not auto):
                current_provider = session.provider or current_provider
                current_model = session.model or (
                    selector.default_model(current_provider) if current_provider else None
                )
        if current_provider and current_model and (params.session_id is None or not session.model) and not auto:
            current_model = await self._providers.served_default(current_provider, current_model) or current_model
        # Local servers, and any provider pointed at a server of one's own (a base URL of its own, such as
        # OPENAI_BASE_URL for vLLM or a gateway), are asked what they serve: that is what can be used.
        own = [p for p in selector.presets.values() if self._providers.own_server(p)]
        served = await asyncio.gather(*(self._providers.served_models(p, refresh=params.refresh) for p in own))
        reported = {p.id: r.models for p, r in zip(own, served, strict=True) if r.state == "connected"}
        providers: list[ProviderInfo] = []
        models: list[ModelInfo] = []
        for preset in selector.presets.values():
            providers.append(self._provider_info(preset))
            if not preset.local and reported.get(preset.id):
                models += self._served_only(preset, reported[preset.id])
            else:
                models += self._models(preset, reported.get(preset.id, []))
        return ModelListResult(
            providers=providers,
            models=models,
            current_provider=None if auto else current_provider,
            current_model=None if auto else current_model,
            auto=auto,
            reasoning_effort=effort,
            router=await self._router.info(),
        )

    async def set_model(self, params: ModelSetParams) -> SessionInfo:
        """Switch a session's model (`auto`: the router picks each turn's).

        Raises:
            ProtocolError: `session_not_found`; `busy` while a turn runs; `no_provider` when there is no provider (or,
                for `auto`, nothing for the router to choose from); `unknown_provider`.
        """
        session = await self._sessions.get_row(params.session_id)
        if self._busy(params.session_id):
            raise ProtocolError(
                ErrorCode.BUSY, "Cannot switch models while a turn is running.", source=ErrorSource.RUNTIME
            )
        if params.model == AUTO_MODEL and params.provider is None:
            await self._router.route("", 0)  # raises no_provider when the router has nothing to choose from
            return await self._sessions.update_settings(params.session_id, provider=None, model=AUTO_MODEL)
        provider, model = self._selector.split(params.model, params.provider)
        provider = provider or session.provider or self._selector.default_provider()
        if provider is None:
            raise ProtocolError(ErrorCode.NO_PROVIDER, no_provider_message(), source=ErrorSource.PROVIDER)
        preset = self._selector.preset(provider)
        head, colon, _ = model.partition(":")
        own_server = self._providers.own_server(preset)
        if colon and params.provider is None and not own_server:
            # `foo:bar` names provider `foo`; only a server of one's own serves model ids with a colon in them.
            raise ProtocolError(
                ErrorCode.UNKNOWN_PROVIDER,
                f"Unknown provider {head!r} in {model!r}. Write provider:model with one of: {', '.join(self._selector.presets)}.",
                source=ErrorSource.PROVIDER,
            )
        if own_server:
            served = await self._providers.served_models(preset)
            if served.state == "connected" and served.models and model not in served.models:
                listed = ", ".join(served.models[:20]) + (", …" if len(served.models) > 20 else "")
                raise ProtocolError(
                    ErrorCode.MODEL_NOT_FOUND,
                    f"The {preset.name} server at {self._selector.base_url(preset)} does not serve {model!r}. "
                    f"It serves: {listed}.",
                    source=ErrorSource.PROVIDER,
                )
        return await self._sessions.update_settings(params.session_id, provider=provider, model=model)

    def _served_only(self, preset: ProviderPreset, served: list[str]) -> list[ModelInfo]:
        """What a provider's own server serves (the catalog's models with their facts where the names match)."""
        catalog = {m.id: m for m in preset.models}
        prices = {name: price_per_mtok(preset.id, name, self._config.prices) for name in served}
        return [
            ModelInfo(
                provider=preset.id,
                id=name,
                context_window=catalog[name].context_window if name in catalog else None,
                supports_tools=catalog[name].tools if name in catalog else True,
                supports_reasoning=catalog[name].reasoning if name in catalog else False,
                local=False,
                tier=catalog[name].tier if name in catalog else None,
                source="server",
                input_per_mtok=price[0] if (price := prices[name]) else None,
                output_per_mtok=price[1] if price else None,
            )
            for name in served
        ]

    def _provider_info(self, preset: ProviderPreset) -> ProviderInfo:
        selector = self._selector
        return ProviderInfo(
            id=preset.id,
            name=preset.name,
            configured=selector.is_configured(preset),
            key_env=list(selector.key_env(preset)),
            default_model=selector.default_model(preset.id),
            local=preset.local,
            key_source=selector.key_source(preset),
        )

    def _models(self, preset: ProviderPreset, served: list[str]) -> list[ModelInfo]:
        """The preset's catalog models with prices, then what its local server serves beyond the catalog (free)."""
        models: list[ModelInfo] = []
        for m in preset.models:
            price = price_per_mtok(preset.id, m.id, self._config.prices)
            models.append(
                ModelInfo(
                    provider=preset.id,
                    id=m.id,
                    context_window=m.context_window,
                    supports_tools=m.tools,
                    supports_reasoning=m.reasoning,
                    local=preset.local,
                    tier=m.tier,
                    input_per_mtok=price[0] if price else None,
                    output_per_mtok=price[1] if price else None,
                )
            )
        catalog = {m.id for m in preset.models}
        models += [
            ModelInfo(provider=preset.id, id=name, local=True, source="server", input_per_mtok=0, output_per_mtok=0)
            for name in served
            if name not in catalog
        ]
        return models
