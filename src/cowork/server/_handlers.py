"""JSON-RPC methods → core calls. Each handler is a thin adapter; behaviour lives in the core."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, Protocol, TypeAlias

import cowork
from cowork.core import Core
from cowork.models import no_provider_message, price_per_mtok
from cowork.protocol import (
    EVENT_PAYLOADS,
    METHODS,
    PROTOCOL_VERSION,
    AgentCancelResult,
    AgentListParams,
    AgentListResult,
    AgentWaitParams,
    ApprovalRespondParams,
    AskRespondParams,
    BudgetSetParams,
    Capabilities,
    ErrorCode,
    ErrorSource,
    EventsReplayParams,
    InitializeParams,
    InitializeResult,
    ModelInfo,
    ModelListParams,
    ModelListResult,
    ModelSetParams,
    OperationRef,
    OperationResumeResult,
    Params,
    PingResult,
    ProtocolError,
    ProviderConnectParams,
    ProviderDisconnectParams,
    ProviderInfo,
    ProviderStatusParams,
    PublicConfig,
    ServerInfo,
    SessionCreateParams,
    SessionGetParams,
    SessionGetResult,
    SessionListParams,
    SessionListResult,
    SessionRef,
    SessionUpdateParams,
    SessionUsageParams,
    SubscribeParams,
    SubscribeResult,
    ToolListResult,
    ToolSetPolicyParams,
    TurnCancelParams,
    TurnCancelResult,
    TurnRetryParams,
    TurnStartParams,
    TurnSteerParams,
    UnsubscribeResult,
    UsageSummaryParams,
    WireModel,
)
from cowork.sessions import AUTO_MODEL

__all__ = ["HANDLERS", "Peer"]


class Peer(Protocol):
    """The connection a request came in on, when it can receive notifications (a WebSocket)."""

    async def subscribe(self, session_id: str, after_seq: int | None) -> int: ...

    def unsubscribe(self, session_id: str) -> bool: ...


Handler: TypeAlias = Callable[[Core, "Peer | None", Any], Awaitable[WireModel]]
HANDLERS: dict[str, Handler] = {}


def handles(method: str) -> Callable[[Handler], Handler]:
    if method not in METHODS:
        raise LookupError(f"{method} is not a protocol method")

    def register(fn: Handler) -> Handler:
        HANDLERS[method] = fn
        return fn

    return register


def _needs_websocket(peer: Peer | None, method: str) -> Peer:
    if peer is None:
        raise ProtocolError(
            ErrorCode.INVALID_REQUEST,
            f"{method} needs a WebSocket connection (/ws); POST /rpc cannot receive notifications.",
            source=ErrorSource.SERVER,
        )
    return peer


@handles("initialize")
async def initialize(core: Core, peer: Peer | None, params: InitializeParams) -> InitializeResult:
    config = core.config
    provider = core.selector.default_provider()
    return InitializeResult(
        protocol_version=PROTOCOL_VERSION,
        server_info=ServerInfo(name="cowork", version=cowork.__version__),
        capabilities=Capabilities(
            methods=sorted(HANDLERS),
            event_types=list(EVENT_PAYLOADS),
            tools=core.tools.names(),
            max_frame_bytes=config.server.max_frame_bytes,
            max_inflight_requests=config.server.max_inflight_requests,
            sandbox=core.bwrap is not None,
            sandbox_note=core.sandbox_note,
        ),
        config=PublicConfig(
            workspace=str(core.workspace),
            provider=provider,
            model=core.selector.default_model(provider) if provider else None,
            home=str(core.paths.home),
        ),
    )


@handles("ping")
async def ping(core: Core, peer: Peer | None, params: Params) -> PingResult:
    return PingResult(time=datetime.now(UTC))


@handles("session/create")
async def session_create(core: Core, peer: Peer | None, params: SessionCreateParams) -> WireModel:
    if params.provider is not None:
        core.selector.preset(params.provider)
    return await core.sessions.create(params)


@handles("session/list")
async def session_list(core: Core, peer: Peer | None, params: SessionListParams) -> SessionListResult:
    return SessionListResult(sessions=await core.sessions.list_sessions(params))


@handles("session/update")
async def session_update(core: Core, peer: Peer | None, params: SessionUpdateParams) -> WireModel:
    return await core.settings.update(params)


@handles("tool/list")
async def tool_list(core: Core, peer: Peer | None, params: Params) -> WireModel:
    return ToolListResult(tools=core.tool_policies.infos())


@handles("tool/setPolicy")
async def tool_set_policy(core: Core, peer: Peer | None, params: ToolSetPolicyParams) -> WireModel:
    return await core.tool_policies.set(params)


@handles("session/get")
async def session_get(core: Core, peer: Peer | None, params: SessionGetParams) -> SessionGetResult:
    session = await core.sessions.get(params.session_id)
    return SessionGetResult(
        session=session,
        messages=await core.sessions.messages(params.session_id),
        pending=await core.runtime.pending(params.session_id),
        todos=await core.todos.get(params.session_id),
    )


@handles("session/subscribe")
async def session_subscribe(core: Core, peer: Peer | None, params: SubscribeParams) -> SubscribeResult:
    target = _needs_websocket(peer, "session/subscribe")
    last_seq = await target.subscribe(params.session_id, params.after_seq)
    # Whatever the session waits on is handed over now, however long ago it was asked.
    return SubscribeResult(last_seq=last_seq, pending=await core.runtime.pending(params.session_id))


@handles("session/unsubscribe")
async def session_unsubscribe(core: Core, peer: Peer | None, params: SessionRef) -> UnsubscribeResult:
    target = _needs_websocket(peer, "session/unsubscribe")
    return UnsubscribeResult(unsubscribed=target.unsubscribe(params.session_id))


@handles("turn/start")
async def turn_start(core: Core, peer: Peer | None, params: TurnStartParams) -> WireModel:
    if peer is not None:
        # Subscribe first (live only), so not one event of this turn can slip past the connection that started it.
        await peer.subscribe(params.session_id, None)
    return await core.runtime.start_turn(params)


@handles("turn/cancel")
async def turn_cancel(core: Core, peer: Peer | None, params: TurnCancelParams) -> TurnCancelResult:
    return TurnCancelResult(cancelled=await core.runtime.cancel(params.session_id, params.operation_id))


@handles("turn/steer")
async def turn_steer(core: Core, peer: Peer | None, params: TurnSteerParams) -> WireModel:
    if peer is not None:
        await peer.subscribe(params.session_id, None)
    return await core.runtime.steer(params)


@handles("approval/respond")
async def approval_respond(core: Core, peer: Peer | None, params: ApprovalRespondParams) -> WireModel:
    return await core.runtime.respond_approval(params)


@handles("ask/respond")
async def ask_respond(core: Core, peer: Peer | None, params: AskRespondParams) -> WireModel:
    return await core.runtime.respond_ask(params)


@handles("operation/get")
async def operation_get(core: Core, peer: Peer | None, params: OperationRef) -> WireModel:
    return await core.runtime.operation_info(params.operation_id)


@handles("operation/resume")
async def operation_resume(core: Core, peer: Peer | None, params: OperationRef) -> WireModel:
    info = await core.runtime.operation_info(params.operation_id, with_calls=False)
    if peer is not None:
        await peer.subscribe(info.session_id, None)
    status = await core.runtime.resume(params.operation_id)
    return OperationResumeResult(operation_id=params.operation_id, status=status)


@handles("agent/list")
async def agent_list(core: Core, peer: Peer | None, params: AgentListParams) -> WireModel:
    return AgentListResult(agents=await core.runtime.agents.list(params))


@handles("agent/wait")
async def agent_wait(core: Core, peer: Peer | None, params: AgentWaitParams) -> WireModel:
    return await core.runtime.agents.wait(params.operation_id, params.timeout_seconds)


@handles("agent/cancel")
async def agent_cancel(core: Core, peer: Peer | None, params: OperationRef) -> WireModel:
    return AgentCancelResult(cancelled=await core.runtime.agents.cancel(params.operation_id))


@handles("events/replay")
async def events_replay(core: Core, peer: Peer | None, params: EventsReplayParams) -> WireModel:
    return await core.sessions.replay(params.session_id, params.after_seq, params.limit)


@handles("model/list")
async def model_list(core: Core, peer: Peer | None, params: ModelListParams) -> ModelListResult:
    selector = core.selector
    current_provider = selector.default_provider()
    current_model = selector.default_model(current_provider) if current_provider else None
    auto = core.config.router.enabled
    effort = core.config.agent.reasoning_effort
    if params.session_id is not None:
        session = await core.sessions.get_row(params.session_id)
        auto = core.runtime.router.routes(session)
        effort = session.reasoning_effort or effort  # type: ignore[assignment]
        if session.provider or (session.model and not auto):
            current_provider = session.provider or current_provider
            current_model = session.model or (selector.default_model(current_provider) if current_provider else None)
    providers, models = [], []
    local = [p for p in selector.presets.values() if p.local]
    served = await asyncio.gather(*(core.providers.served_models(p, refresh=params.refresh) for p in local))
    reported = {p.id: r.models for p, r in zip(local, served, strict=True) if r.state == "connected"}
    for preset in selector.presets.values():
        providers.append(
            ProviderInfo(
                id=preset.id,
                name=preset.name,
                configured=selector.is_configured(preset),
                key_env=list(selector.key_env(preset)),
                default_model=selector.default_model(preset.id),
                local=preset.local,
                key_source=selector.key_source(preset),
            )
        )
        for m in preset.models:
            price = price_per_mtok(preset.id, m.id, core.config.prices)
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
            for name in reported.get(preset.id, [])
            if name not in catalog
        ]
    return ModelListResult(
        providers=providers,
        models=models,
        current_provider=None if auto else current_provider,
        current_model=None if auto else current_model,
        auto=auto,
        reasoning_effort=effort,
        router=await core.runtime.router.info(),
    )


@handles("model/set")
async def model_set(core: Core, peer: Peer | None, params: ModelSetParams) -> WireModel:
    session = await core.sessions.get_row(params.session_id)
    if core.runtime.active_operation(params.session_id):
        raise ProtocolError(ErrorCode.BUSY, "Cannot switch models while a turn is running.", source=ErrorSource.RUNTIME)
    if params.model == AUTO_MODEL and params.provider is None:
        await core.runtime.router.route("", 0)  # raises no_provider when the router has nothing to choose from
        return await core.sessions.update_settings(params.session_id, provider=None, model=AUTO_MODEL)
    provider, model = core.selector.split(params.model, params.provider)
    provider = provider or session.provider or core.selector.default_provider()
    if provider is None:
        raise ProtocolError(ErrorCode.NO_PROVIDER, no_provider_message(), source=ErrorSource.PROVIDER)
    core.selector.preset(provider)
    return await core.sessions.update_settings(params.session_id, provider=provider, model=model)


@handles("provider/connect")
async def provider_connect(core: Core, peer: Peer | None, params: ProviderConnectParams) -> WireModel:
    return await core.providers.connect(params)


@handles("provider/disconnect")
async def provider_disconnect(core: Core, peer: Peer | None, params: ProviderDisconnectParams) -> WireModel:
    return await core.providers.disconnect(params.provider)


@handles("provider/status")
async def provider_status(core: Core, peer: Peer | None, params: ProviderStatusParams) -> WireModel:
    return await core.providers.status(params.provider, check=params.probe)


@handles("session/usage")
async def session_usage(core: Core, peer: Peer | None, params: SessionUsageParams) -> WireModel:
    await core.sessions.get_row(params.session_id)
    return await core.usage.session_usage(params.session_id)


@handles("usage/summary")
async def usage_summary(core: Core, peer: Peer | None, params: UsageSummaryParams) -> WireModel:
    return await core.usage.summary(params.days)


@handles("budget/set")
async def budget_set(core: Core, peer: Peer | None, params: BudgetSetParams) -> WireModel:
    return await core.usage.set_budgets(params)


@handles("turn/retry")
async def turn_retry(core: Core, peer: Peer | None, params: TurnRetryParams) -> WireModel:
    if peer is not None and params.confirm:
        await peer.subscribe(params.session_id, None)
    return await core.runtime.retry(params)


from . import _mcp_handlers as _mcp_handlers  # noqa: E402 - registers the mcp/* handlers (needs `handles`)
from . import _mcp_install_handlers as _mcp_install_handlers  # noqa: E402 - mcp/install/*, mcp/auth/start


def _check_complete() -> None:
    missing = set(METHODS) - set(HANDLERS)
    if missing:
        raise RuntimeError(f"protocol methods without a handler: {sorted(missing)}")


_check_complete()
