"""A capture source scripted by the test: it shows whatever window and idle time the test sets, and wakes the
sampler thread on every change the way a real source wakes on a window or title change."""

from __future__ import annotations

import threading

from cowork.capture import SourceUnavailable, Window

__all__ = ["ScriptedSource"]


class ScriptedSource:
    name = "scripted"

    def __init__(self) -> None:
        self._window: Window | None = None
        self._idle: float | None = 0.0
        self._changed = threading.Event()
        self._closed = threading.Event()
        self._broken: str | None = None
        self.opened = 0
        self.samples = 0
        self.sampled = threading.Condition()

    def show(self, window: Window | None, idle: float | None = 0.0) -> None:
        """Put `window` in front (None: nothing has focus), with the user idle for `idle` seconds."""
        self._window, self._idle = window, idle
        self._changed.set()

    def fail(self, reason: str) -> None:
        """The source goes away (like an X display that died): the next look raises SourceUnavailable."""
        self._broken = reason
        self._changed.set()

    def wait_samples(self, count: int, timeout: float = 10.0) -> bool:
        """Block until the sampler has looked at least `count` times in all."""
        with self.sampled:
            return self.sampled.wait_for(lambda: self.samples >= count, timeout)

    # ---- the Source protocol -------------------------------------------------------------------------------------

    def open(self) -> None:
        self.opened += 1
        self._closed.clear()

    def active_window(self) -> Window | None:
        if self._broken is not None:
            raise SourceUnavailable(self._broken)
        with self.sampled:
            self.samples += 1
            self.sampled.notify_all()
        return self._window

    def idle_seconds(self) -> float | None:
        return self._idle

    def wait(self, timeout: float) -> bool:
        woken = self._changed.wait(timeout)
        self._changed.clear()
        return woken and not self._closed.is_set()

    def close(self) -> None:
        self._closed.set()
        self._changed.set()
