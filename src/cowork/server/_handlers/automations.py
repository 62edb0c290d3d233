"""Automations and notifications (`automation/*`, `notification/*`; see `cowork.automations`, `cowork.notify`)."""

from __future__ import annotations

from cowork.automations import parse_definition
from cowork.core import Core
from cowork.protocol import (
    AutomationCreateParams,
    AutomationDeleteResult,
    AutomationIdParams,
    AutomationInfo,
    AutomationListResult,
    AutomationRespondParams,
    AutomationRunIdParams,
    AutomationRunInfo,
    AutomationRunParams,
    AutomationRunsParams,
    AutomationRunsResult,
    AutomationUpdateParams,
    EmptyParams,
    NotificationInfo,
    NotificationListParams,
    NotificationListResult,
    NotificationRespondParams,
)

from .._peer import Peer

__all__ = [
    "automation_cancel",
    "automation_create",
    "automation_delete",
    "automation_disable",
    "automation_enable",
    "automation_get",
    "automation_list",
    "automation_respond",
    "automation_resume",
    "automation_run",
    "automation_runs",
    "automation_update",
    "notification_list",
    "notification_respond",
]


async def automation_list(core: Core, peer: Peer | None, params: EmptyParams) -> AutomationListResult:
    return AutomationListResult(automations=await core.automations.list_all())


async def automation_get(core: Core, peer: Peer | None, params: AutomationIdParams) -> AutomationInfo:
    return await core.automations.get(params.id)


async def automation_create(core: Core, peer: Peer | None, params: AutomationCreateParams) -> AutomationInfo:
    return await core.automations.create(parse_definition(params.definition, params.text, params.format))


async def automation_update(core: Core, peer: Peer | None, params: AutomationUpdateParams) -> AutomationInfo:
    flow = parse_definition(params.definition, params.text, params.format)
    return await core.automations.update(params.id, flow)


async def automation_delete(core: Core, peer: Peer | None, params: AutomationIdParams) -> AutomationDeleteResult:
    return AutomationDeleteResult(deleted=await core.automations.delete(params.id))


async def automation_enable(core: Core, peer: Peer | None, params: AutomationIdParams) -> AutomationInfo:
    return await core.automations.set_enabled(params.id, True)


async def automation_disable(core: Core, peer: Peer | None, params: AutomationIdParams) -> AutomationInfo:
    return await core.automations.set_enabled(params.id, False)


async def automation_run(core: Core, peer: Peer | None, params: AutomationRunParams) -> AutomationRunInfo:
    return await core.automations.run(params.id, dict(params.inputs))


async def automation_runs(core: Core, peer: Peer | None, params: AutomationRunsParams) -> AutomationRunsResult:
    return AutomationRunsResult(runs=await core.automations.runs(params.id, params.run_id, params.limit))


async def automation_cancel(core: Core, peer: Peer | None, params: AutomationRunIdParams) -> AutomationRunInfo:
    return await core.automations.cancel(params.run_id)


async def automation_resume(core: Core, peer: Peer | None, params: AutomationRunIdParams) -> AutomationRunInfo:
    return await core.automations.resume(params.run_id)


async def automation_respond(core: Core, peer: Peer | None, params: AutomationRespondParams) -> AutomationRunInfo:
    return await core.automations.respond(params.run_id, params.approve)


async def notification_list(core: Core, peer: Peer | None, params: NotificationListParams) -> NotificationListResult:
    found = await core.notifications.recent(limit=params.limit, unanswered=params.unanswered)
    return NotificationListResult(notifications=found)


async def notification_respond(core: Core, peer: Peer | None, params: NotificationRespondParams) -> NotificationInfo:
    return await core.notifications.respond(params.id, params.response, snooze_minutes=params.snooze_minutes)
