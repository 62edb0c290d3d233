"""What starts a flow: by hand, a cron schedule, files changing, a session event, an MCP notification.

These are definitions only: the scheduler and watchers that fire them come later and read these values.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import PurePosixPath
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator

from cowork.protocol import EVENT_PAYLOADS

from ._base import FlowValue

__all__ = [
    "CronTrigger",
    "FileTrigger",
    "ManualTrigger",
    "McpNotificationTrigger",
    "SessionEventTrigger",
    "Trigger",
]

# croniter also reads a sixth (seconds) and seventh (year) field; a flow fires at most once a minute.
_NICKNAMES = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}


FileEvent = Literal["created", "modified", "deleted"]
_FILE_EVENTS: tuple[FileEvent, ...] = ("created", "modified", "deleted")


class ManualTrigger(FlowValue):
    """Started by the user (or the agent, calling the flow as a tool) only."""

    type: Literal["manual"]


class CronTrigger(FlowValue):
    """A five-field cron schedule in a time zone, and what to do about fire times missed while Cowork was down.

    `catch_up`: `skip` drops missed times, `once` runs once for all of them (the default: a daily report missed for
    a week runs once, not seven times), `all` runs once per missed time, oldest first.
    """

    type: Literal["cron"]
    expression: str = Field(min_length=1, max_length=200)
    timezone: str = "UTC"
    catch_up: Literal["skip", "once", "all"] = "once"

    @field_validator("expression")
    @classmethod
    def _valid_expression(cls, value: str) -> str:
        text = " ".join(value.split())
        if text.lower() in _NICKNAMES:
            return text.lower()
        if len(text.split(" ")) != 5:
            raise ValueError(
                f"cron expression {value!r} needs five fields (minute hour day-of-month month day-of-week) "
                "or one of " + ", ".join(sorted(_NICKNAMES))
            )
        from croniter import croniter  # loaded with the first cron flow, not at start-up

        if not croniter.is_valid(text):
            raise ValueError(f"{value!r} is not a valid cron expression")
        return text

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r}: use an IANA name such as 'Europe/Paris' or 'UTC'") from None
        return value

    def next_after(self, moment: datetime) -> datetime:
        """The first fire time strictly after `moment` (an aware datetime), in the trigger's time zone."""
        if moment.tzinfo is None:
            raise ValueError("next_after needs an aware datetime")
        start = moment.astimezone(ZoneInfo(self.timezone))
        from croniter import croniter

        return croniter(self.expression, start).get_next(datetime)


class FileTrigger(FlowValue):
    """Files in the workspace matching a glob were created, modified or deleted."""

    type: Literal["file"]
    patterns: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(min_length=1, max_length=50)
    events: list[FileEvent] = Field(default_factory=lambda: list(_FILE_EVENTS), min_length=1)

    @field_validator("patterns")
    @classmethod
    def _relative(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            # Patterns are matched inside the workspace; a trigger must not watch the rest of the machine.
            if pattern.startswith(("/", "~")) or re.match(r"[A-Za-z]:[\\/]", pattern) or "\\" in pattern:
                raise ValueError(f"pattern {pattern!r} must be relative to the workspace, with / between folders")
            if ".." in PurePosixPath(pattern).parts:
                raise ValueError(f"pattern {pattern!r} must stay inside the workspace (no '..')")
        return patterns


class SessionEventTrigger(FlowValue):
    """A session emitted an event of this type (one of the protocol's `session/event` types)."""

    type: Literal["sessionEvent"]
    event_type: str

    @field_validator("event_type")
    @classmethod
    def _known_event(cls, value: str) -> str:
        if value not in EVENT_PAYLOADS:
            raise ValueError(f"unknown session event type {value!r}; known: {', '.join(sorted(EVENT_PAYLOADS))}")
        return value


class McpNotificationTrigger(FlowValue):
    """An MCP server sent a notification with this method (e.g. `notifications/resources/updated`)."""

    type: Literal["mcpNotification"]
    server: str = Field(min_length=1, max_length=100)
    method: str = Field(min_length=1, max_length=200)


Trigger = Annotated[
    ManualTrigger | CronTrigger | FileTrigger | SessionEventTrigger | McpNotificationTrigger,
    Field(discriminator="type"),
]
