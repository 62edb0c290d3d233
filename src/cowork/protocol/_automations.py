"""Automations and proactive notifications on the wire (see docs/automations.md).

Automations: saved flows (`automation/create|update|list|get|delete|enable|disable`), their runs
(`automation/run|runs|cancel|resume|respond`) and the `automation/run` notification every client gets when a run
changes. A flow's definition crosses the wire as a JSON object in the flow file's shape (camelCase keys, the same
as the YAML file) or as the file's text; the server validates it (`cowork.automations.Flow`), so the protocol does
not repeat the flow model.

Notifications: what the proactive engine decided to tell the user (`notification/delivered`, after its six gates),
the recent ones (`notification/list`) and the user's answers (`notification/respond`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, JsonValue, model_validator

from ._base import Params, WireModel

__all__ = [
    "AutomationChanged",
    "AutomationCreateParams",
    "AutomationDeleteResult",
    "AutomationIdParams",
    "AutomationInfo",
    "AutomationListResult",
    "AutomationRespondParams",
    "AutomationRunIdParams",
    "AutomationRunInfo",
    "AutomationRunParams",
    "AutomationRunStatus",
    "AutomationRunStepInfo",
    "AutomationRunsParams",
    "AutomationRunsResult",
    "AutomationStepStatus",
    "AutomationUpdateParams",
    "NotificationInfo",
    "NotificationListParams",
    "NotificationListResult",
    "NotificationRespondParams",
    "NotificationResponse",
    "NotificationTier",
    "PendingStepApproval",
    "StepErrorInfo",
]

AutomationRunStatus = Literal["running", "waiting_for_human", "interrupted", "done", "failed", "cancelled"]
"""`running`: steps are running (a `delay` step included); `waiting_for_human`: a step waits for the user's approval
(`pending` says which; `automation/respond` answers); `interrupted`: the server stopped while a step with side
effects was running, so it is not run again by itself (`automation/resume` runs it again, asking first);
the rest are final."""

AutomationStepStatus = Literal["running", "done", "failed", "skipped", "waiting", "interrupted"]

NotificationTier = Literal["urgent", "helpful", "informational"]
NotificationResponse = Literal["accept", "dismiss", "snooze", "expand"]


class _Definition(Params):
    definition: dict[str, JsonValue] | None = Field(
        default=None, description="The flow as a JSON object, in the flow file's shape (camelCase keys)."
    )
    text: str | None = Field(default=None, max_length=1_000_000, description="The flow file's text.")
    format: Literal["yaml", "toml"] = Field(default="yaml", description="The format of `text`.")

    @model_validator(mode="after")
    def _one_source(self) -> Any:
        if (self.definition is None) == (self.text is None):
            raise ValueError("give the flow as exactly one of `definition` or `text`")
        return self


class AutomationCreateParams(_Definition):
    """A new automation; its name must not be taken."""


class AutomationUpdateParams(_Definition):
    id: str = Field(description="The automation's id or name.")


class AutomationIdParams(Params):
    id: str = Field(description="The automation's id or name.")


class AutomationRunParams(Params):
    id: str = Field(description="The automation's id or name.")
    inputs: dict[str, JsonValue] = Field(default_factory=dict, description="Values for the flow's inputs.")


class AutomationRunsParams(Params):
    id: str | None = Field(default=None, description="Only this automation's runs (its id or name).")
    run_id: str | None = Field(default=None, description="Only this run.")
    limit: int = Field(default=50, ge=1, le=500)


class AutomationRunIdParams(Params):
    run_id: str


class AutomationRespondParams(Params):
    run_id: str
    approve: bool = Field(description="Run the waiting step (true) or fail the run with a rejection (false).")


class StepErrorInfo(WireModel):
    code: str
    message: str


class PendingStepApproval(WireModel):
    """A step that waits for the user: what it would do, as the approval policy saw it."""

    step_id: str
    tool: str
    arguments: dict[str, JsonValue]
    reason: str
    session_id: str | None = Field(
        default=None, description="For an agent step: the session whose turn waits (answer it there)."
    )


class AutomationRunStepInfo(WireModel):
    step_id: str
    type: str
    status: AutomationStepStatus
    input: JsonValue = Field(default=None, description="The step's templated fields with variables resolved.")
    output: JsonValue = None
    error: StepErrorInfo | None = None
    started_at: datetime | None = None
    duration_ms: float | None = None
    note: str | None = Field(default=None, description="Why it was skipped, what it waits for.")


class AutomationRunInfo(WireModel):
    id: str
    automation_id: str
    automation_name: str
    version: int = Field(description="The flow's version this run ran.")
    status: AutomationRunStatus
    trigger: dict[str, JsonValue] = Field(description="What started it: `{type: manual}`, a cron time, a file …")
    inputs: dict[str, JsonValue]
    started_at: datetime
    finished_at: datetime | None = None
    result: JsonValue = None
    error: StepErrorInfo | None = None
    pending: PendingStepApproval | None = None
    session_id: str | None = Field(default=None, description="The session its agent steps run in, once one ran.")
    steps: list[AutomationRunStepInfo] = Field(default_factory=list)


class AutomationInfo(WireModel):
    id: str
    name: str
    description: str
    enabled: bool
    version: int
    trigger: dict[str, JsonValue]
    definition: dict[str, JsonValue] = Field(description="The whole flow, in the flow file's shape.")
    text: str = Field(description="The flow as a YAML file (what `cowork automation export` writes).")
    tool: str = Field(description="The tool name the agent calls it by while it is enabled (`flow_<name>`).")
    warnings: list[str] = Field(default_factory=list, description="References that will stay literal.")
    created_at: datetime
    updated_at: datetime
    next_run_at: datetime | None = Field(default=None, description="A cron automation's next fire time.")
    last_run: AutomationRunInfo | None = None


class AutomationChanged(WireModel):
    """An automation was created, changed, enabled, disabled or deleted (by anyone: a client, the agent)."""

    id: str
    name: str
    deleted: bool = False


class AutomationListResult(WireModel):
    automations: list[AutomationInfo]


class AutomationDeleteResult(WireModel):
    deleted: bool


class AutomationRunsResult(WireModel):
    runs: list[AutomationRunInfo]


class NotificationInfo(WireModel):
    id: str
    tier: NotificationTier
    kind: str = Field(description="What produced it (`automation`, `automation_approval`, …).")
    title: str
    body: str
    delivered_at: datetime
    count: int = Field(default=1, description="How many related notifications were bundled into this one.")
    run_id: str | None = Field(default=None, description="The automation run it is about, if any.")
    automation_id: str | None = None
    response: NotificationResponse | None = Field(default=None, description="How the user answered it, if they did.")
    desktop: bool = Field(default=False, description="It was also shown as a desktop notification.")


class NotificationListParams(Params):
    limit: int = Field(default=50, ge=1, le=500)
    unanswered: bool = Field(default=False, description="Only those the user has not answered.")


class NotificationListResult(WireModel):
    notifications: list[NotificationInfo]


class NotificationRespondParams(Params):
    id: str
    response: NotificationResponse
    snooze_minutes: int = Field(default=30, ge=1, le=24 * 60, description="With `snooze`: when to show it again.")
