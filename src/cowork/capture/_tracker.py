"""From samples to spans: what the user was in, from when to when, and whether they are in deep work.

Pure and clocked from outside (every call takes `now`), so a test drives an hour of switching in microseconds. A
sample is (the active window, the seconds since the last input); the tracker keeps one open span (same
application and title) and closes it when the window or its title changes, when the user goes idle (closed at
their last input, not when idleness was noticed), when nothing has focus, or when an excluded window comes in front
(and records nothing of that one). Consecutive spans in one application make a focus run; a run longer than the
focus threshold is deep work (DESIGN §10, seed 002's focus detection).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from cowork.store.repos.activity import ActivitySpanRow

from ._privacy import Exclusions
from ._source import Window

__all__ = ["Observation", "Tracker"]


@dataclass(slots=True)
class _Open:
    id: str
    app: str
    title: str
    process: str | None
    started_at: datetime
    last_seen: datetime
    written: bool = False

    def row(self, ended_at: datetime | None = None) -> ActivitySpanRow:
        end = self.last_seen if ended_at is None else max(ended_at, self.started_at)
        return ActivitySpanRow(self.id, self.app, self.title, self.process, self.started_at, end)


@dataclass(frozen=True, slots=True)
class Observation:
    """What one sample changed."""

    spans: tuple[ActivitySpanRow, ...] = ()
    """Spans to write: closed ones in their final form, the open one as it stands."""
    changed: bool = False
    """What a client shows changed: the window being recorded, or deep work started or ended."""


class Tracker:
    def __init__(
        self,
        *,
        idle_seconds: float,
        focus_seconds: float,
        min_span_seconds: float,
        exclusions: Exclusions,
        focus: bool = True,
    ) -> None:
        self.idle_seconds = idle_seconds
        self.focus_seconds = focus_seconds
        self.min_span_seconds = min_span_seconds
        self.exclusions = exclusions
        self.focus = focus
        """Whether focus runs are tracked (the `focus` stream's consent)."""
        self.current: _Open | None = None
        self.focus_app: str | None = None
        self.focus_since: datetime | None = None
        self._last_shown: tuple[object, ...] = (None, False)
        self.samples = 0
        self.excluded = 0

    # ---- reading -------------------------------------------------------------------------------------------------

    def deep_work(self, now: datetime) -> bool:
        return (
            self.focus
            and self.focus_since is not None
            and (now - self.focus_since).total_seconds() >= self.focus_seconds
        )

    # ---- feeding -------------------------------------------------------------------------------------------------

    def observe(self, now: datetime, window: Window | None, idle: float | None) -> Observation:
        """One sample at `now`."""
        self.samples += 1
        spans: list[ActivitySpanRow] = []
        if idle is not None and idle >= self.idle_seconds:
            self._close(max(now - timedelta(seconds=idle), self._start_or(now)), spans)
            self._end_focus()
        elif window is None or self.exclusions.excludes(window):
            if window is not None:
                self.excluded += 1
            self._close(now, spans)
            self._end_focus()
        elif self.current is not None and (self.current.app, self.current.title) == (window.app, window.title):
            self.current.last_seen = now
            if self._long_enough(self.current, now):
                self.current.written = True
                spans.append(self.current.row())
        else:
            self._close(now, spans)
            self.current = _Open(uuid.uuid4().hex, window.app, window.title, window.process, now, now)
            if self.focus and window.app != self.focus_app:
                self.focus_app, self.focus_since = window.app, now
        return Observation(tuple(spans), changed=self._changed(now))

    def close(self, now: datetime) -> Observation:
        """Capture stops (paused, consent withdrawn, the source went away): close what is open."""
        spans: list[ActivitySpanRow] = []
        self._close(now, spans)
        self._end_focus()
        return Observation(tuple(spans), changed=self._changed(now))

    def snapshot(self, now: datetime) -> ActivitySpanRow | None:
        """The open span as it stands at `now` (the window is still in front as far as the last sample knows), for
        a flush: None while it is shorter than the minimum."""
        current = self.current
        if current is None or not self._long_enough(current, now):
            return None
        current.written = True
        current.last_seen = max(current.last_seen, now)
        return current.row()

    def restart(self, now: datetime) -> None:
        """Forget the open span's past (it was deleted): the same window goes on as a new span from `now`."""
        if self.current is not None:
            self.current = replace(self.current, id=uuid.uuid4().hex, started_at=now, last_seen=now, written=False)

    # ---- inside --------------------------------------------------------------------------------------------------

    def _start_or(self, now: datetime) -> datetime:
        return self.current.started_at if self.current is not None else now

    def _long_enough(self, span: _Open, end: datetime) -> bool:
        return span.written or (end - span.started_at).total_seconds() >= self.min_span_seconds

    def _close(self, end: datetime, spans: list[ActivitySpanRow]) -> None:
        span, self.current = self.current, None
        if span is not None and self._long_enough(span, end):
            spans.append(span.row(end))

    def _end_focus(self) -> None:
        self.focus_app = self.focus_since = None

    def _changed(self, now: datetime) -> bool:
        """Whether what a client shows (the window recorded, deep work) differs from the last time it was asked."""
        current = self.current
        shown = (None if current is None else (current.id, current.app, current.title), self.deep_work(now))
        changed, self._last_shown = shown != self._last_shown, shown
        return changed
