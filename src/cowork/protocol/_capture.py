"""Activity capture and context on the wire (see docs/capture.md): what capture does now and with which consent
(`capture/status`, `capture/configure`, the `capture/status` notification every client shows as its indicator),
and what was captured (`context/query`, `context/delete`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from ._base import Params, WireModel

__all__ = [
    "ActivityAppTotal",
    "ActivityHitInfo",
    "ActivityNow",
    "ActivitySpanInfo",
    "CaptureConfigureParams",
    "CaptureState",
    "CaptureStatus",
    "CaptureStream",
    "CaptureStreamInfo",
    "ContextDeleteParams",
    "ContextDeleteResult",
    "ContextQueryParams",
    "ContextQueryResult",
    "FocusSessionInfo",
]

CaptureStream = Literal["window", "focus", "browser", "keystrokes", "screen", "clipboard"]
"""The streams of the design notes, each with its own consent: the active window (application and title) and
focus detection are on by default; the others are off and, in this build, not available at all."""

CaptureState = Literal["capturing", "paused", "off", "unavailable"]
"""`capturing`: a source is running and something is recorded; `paused`: the user paused it; `off`: no stream that
records anything has consent, or `capture.enabled = false`; `unavailable`: no source works here (`reason` says
why)."""

MAX_PATTERNS = 100
_PATTERN = Field(min_length=1, max_length=200)


class CaptureStreamInfo(WireModel):
    stream: CaptureStream
    enabled: bool = Field(description="The user's consent: this stream may be captured.")
    available: bool = Field(
        description="This build can capture the stream, so consent can be given (whether a source runs here now is "
        "the status's `state`; `note` says why not)."
    )
    description: str = Field(description="What the stream records.")
    note: str | None = Field(default=None, description="Why it is not available, when it is not.")


class ActivityNow(WireModel):
    """What capture sees now, shown to the user so they know exactly what is being recorded."""

    app: str
    title: str
    since: datetime


class CaptureStatus(WireModel):
    state: CaptureState
    capturing: bool = Field(description="Something is being recorded now: clients show an indicator while true.")
    source: str | None = Field(default=None, description="The source in use (`x11`), when one runs.")
    reason: str | None = Field(default=None, description="Why capture is off or unavailable, in plain words.")
    paused_until: datetime | None = Field(
        default=None, description="When a timed pause ends (none: paused until resumed, or not paused)."
    )
    streams: list[CaptureStreamInfo]
    exclude_apps: list[str] = Field(description="The user's own excluded applications (glob patterns, any case).")
    exclude_titles: list[str] = Field(description="The user's own excluded window titles (glob patterns, any case).")
    builtin_exclusions: list[str] = Field(
        description="Always excluded, whatever the user's lists say: password managers and private browser windows."
    )
    retention_days: int = Field(description="Captured activity older than this is deleted.")
    current: ActivityNow | None = Field(default=None, description="The window being recorded now, if any.")
    deep_work: bool = Field(
        default=False, description="The user has stayed in one application past `capture.focus_minutes`."
    )
    focus_app: str | None = Field(default=None, description="The application of the current focus session.")
    focus_since: datetime | None = None


class CaptureConfigureParams(Params):
    """Change consent and privacy settings; every field optional, those given change together (or none does)."""

    streams: dict[CaptureStream, bool] | None = Field(
        default=None,
        description="Consent per stream. Turning on a stream this build cannot capture is `invalid_params`.",
    )
    paused: bool | None = Field(default=None, description="Pause (true) or resume (false) all capture.")
    pause_minutes: int | None = Field(
        default=None, ge=1, le=7 * 24 * 60, description="With `paused: true`: resume by itself after this long."
    )
    exclude_apps: list[str] | None = Field(default=None, max_length=MAX_PATTERNS)
    exclude_titles: list[str] | None = Field(default=None, max_length=MAX_PATTERNS)
    retention_days: int | None = Field(default=None, ge=1, le=3650)

    @model_validator(mode="after")
    def _patterns(self) -> CaptureConfigureParams:
        for pattern in [*(self.exclude_apps or []), *(self.exclude_titles or [])]:
            if not pattern.strip() or len(pattern) > 200:
                raise ValueError("an exclusion pattern must be 1 to 200 characters and not blank")
        if self.pause_minutes is not None and self.paused is not True:
            raise ValueError("pause_minutes needs paused: true")
        return self


class ContextQueryParams(Params):
    since: datetime | None = Field(default=None, description="From (default: 24 hours ago). Give a time zone.")
    until: datetime | None = Field(default=None, description="Until (default: now).")
    app: str | None = Field(default=None, max_length=200, description="Only applications whose name contains this.")
    title: str | None = Field(default=None, max_length=500, description="Only windows whose title contains this.")
    query: str | None = Field(
        default=None,
        max_length=2000,
        description="Also search the captured activity by meaning (the `activity` index): the best hours.",
    )
    limit: int = Field(default=500, ge=1, le=5000, description="At most this many spans (the newest kept).")

    @model_validator(mode="after")
    def _range(self) -> ContextQueryParams:
        for moment in (self.since, self.until):
            if moment is not None and moment.tzinfo is None:
                raise ValueError("since and until need a time zone (e.g. 2026-11-27T14:00:00+01:00 or ...Z)")
        if self.since is not None and self.until is not None and self.since >= self.until:
            raise ValueError("since must be before until")
        return self


class ActivitySpanInfo(WireModel):
    """A stretch of time in one window (same application and title)."""

    id: str
    app: str
    title: str
    process: str | None = None
    started_at: datetime
    ended_at: datetime
    seconds: float


class ActivityAppTotal(WireModel):
    app: str
    seconds: float
    spans: int


class FocusSessionInfo(WireModel):
    """A stretch in one application longer than `capture.focus_minutes`, unbroken by idleness or another app."""

    app: str
    started_at: datetime
    ended_at: datetime
    seconds: float


class ActivityHitInfo(WireModel):
    """An hour of captured activity that matches `query`."""

    hour: datetime
    title: str
    text: str
    score: float


class ContextQueryResult(WireModel):
    since: datetime
    until: datetime
    spans: list[ActivitySpanInfo] = Field(description="In time order, clipped to the range.")
    apps: list[ActivityAppTotal] = Field(description="Time per application in the range, most first.")
    focus: list[FocusSessionInfo] = Field(description="Focus sessions (only with the `focus` stream's consent).")
    hits: list[ActivityHitInfo] = Field(default_factory=list, description="With `query`: the best hours.")
    truncated: bool = Field(default=False, description="More spans matched than `limit`; the oldest were left out.")


class ContextDeleteParams(Params):
    since: datetime
    until: datetime

    @model_validator(mode="after")
    def _range(self) -> ContextDeleteParams:
        if self.since.tzinfo is None or self.until.tzinfo is None:
            raise ValueError("since and until need a time zone")
        if self.since >= self.until:
            raise ValueError("since must be before until")
        return self


class ContextDeleteResult(WireModel):
    deleted: int = Field(description="Spans deleted (those partly inside the range are cut back to outside it).")
