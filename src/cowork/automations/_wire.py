"""Store rows as protocol values (`AutomationInfo`, `AutomationRunInfo`)."""

from __future__ import annotations

from typing import Any

from cowork.protocol import (
    AutomationInfo,
    AutomationRunInfo,
    AutomationRunStepInfo,
    PendingStepApproval,
    StepErrorInfo,
)
from cowork.store.repos.automations import AutomationRow, RunRow, RunStepRow

from ._files import dump_flow
from ._model import Flow
from ._tools import flow_tool_name

__all__ = ["automation_info", "flow_of", "run_info", "stored_definition"]


def stored_definition(flow: Flow) -> dict[str, Any]:
    """What the `definition` column keeps: the flow without `enabled` and `version`, which have columns."""
    data: dict[str, Any] = flow.model_dump(mode="json", exclude_defaults=True, exclude={"enabled", "version"})
    return data


def flow_of(row: AutomationRow) -> Flow:
    """The automation's flow, with its enabled switch and version from the row."""
    return Flow.model_validate({**row.definition, "enabled": row.enabled, "version": row.version})


def _error(value: dict[str, str] | None) -> StepErrorInfo | None:
    if not value:
        return None
    return StepErrorInfo(code=str(value.get("code", "error")), message=str(value.get("message", "")))


def _step(row: RunStepRow) -> AutomationRunStepInfo:
    return AutomationRunStepInfo(
        step_id=row.step_id,
        type=row.type,
        status=row.status,
        input=row.input,
        output=row.output,
        error=_error(row.error),
        started_at=row.started_at,
        duration_ms=row.duration_ms,
        note=row.note,
    )


def run_info(row: RunRow, steps: list[RunStepRow]) -> AutomationRunInfo:
    pending = row.pending
    return AutomationRunInfo(
        id=row.id,
        automation_id=row.automation_id,
        automation_name=row.automation_name,
        version=row.version,
        status=row.status,
        trigger=row.trigger,
        inputs=row.inputs,
        started_at=row.started_at,
        finished_at=row.finished_at,
        result=row.result,
        error=_error(row.error),
        pending=PendingStepApproval.model_validate(pending) if pending else None,
        session_id=row.session_id,
        steps=[_step(step) for step in steps],
    )


def automation_info(row: AutomationRow, last_run: AutomationRunInfo | None = None) -> AutomationInfo:
    flow = flow_of(row)
    return AutomationInfo(
        id=row.id,
        name=row.name,
        description=flow.description,
        enabled=row.enabled,
        version=row.version,
        trigger=flow.trigger.model_dump(mode="json"),
        definition=flow.model_dump(mode="json", exclude_defaults=True),
        text=dump_flow(flow),
        tool=flow_tool_name(row.name),
        warnings=flow.warnings(),
        created_at=row.created_at,
        updated_at=row.updated_at,
        next_run_at=row.next_fire_at if row.enabled else None,
        last_run=last_run,
    )
