"""Models, providers, usage and budgets: `model/*`, `provider/*`, `session/usage`, `usage/summary`, `budget/set`."""

from __future__ import annotations

from cowork.core import Core
from cowork.protocol import (
    BudgetSetParams,
    BudgetSetResult,
    ModelListParams,
    ModelListResult,
    ModelSetParams,
    ProviderConnectParams,
    ProviderDisconnectParams,
    ProviderDisconnectResult,
    ProviderStatusInfo,
    ProviderStatusParams,
    ProviderStatusResult,
    SessionInfo,
    SessionUsageParams,
    SessionUsageResult,
    UsageSummaryParams,
    UsageSummaryResult,
)

from .._peer import Peer

__all__ = [
    "budget_set",
    "model_list",
    "model_set",
    "provider_connect",
    "provider_disconnect",
    "provider_status",
    "session_usage",
    "usage_summary",
]


async def model_list(core: Core, peer: Peer | None, params: ModelListParams) -> ModelListResult:
    return await core.model_choices.list_models(params)


async def model_set(core: Core, peer: Peer | None, params: ModelSetParams) -> SessionInfo:
    return await core.model_choices.set_model(params)


async def provider_connect(core: Core, peer: Peer | None, params: ProviderConnectParams) -> ProviderStatusInfo:
    return await core.providers.connect(params)


async def provider_disconnect(
    core: Core, peer: Peer | None, params: ProviderDisconnectParams
) -> ProviderDisconnectResult:
    return await core.providers.disconnect(params.provider)


async def provider_status(core: Core, peer: Peer | None, params: ProviderStatusParams) -> ProviderStatusResult:
    return await core.providers.status(params.provider, check=params.probe)


async def session_usage(core: Core, peer: Peer | None, params: SessionUsageParams) -> SessionUsageResult:
    await core.sessions.get_row(params.session_id)  # session_not_found rather than an empty summary
    return await core.usage.session_usage(params.session_id)


async def usage_summary(core: Core, peer: Peer | None, params: UsageSummaryParams) -> UsageSummaryResult:
    return await core.usage.summary(params.days)


async def budget_set(core: Core, peer: Peer | None, params: BudgetSetParams) -> BudgetSetResult:
    return await core.usage.set_budgets(params)
