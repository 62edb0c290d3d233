"""Coalescing a model step's streamed deltas, so one event is logged and sent per short window, not per delta.

Every event is a row in the session's log and a message to every subscribed client; a fast model streams hundreds
of deltas a second, a few characters each. `DeltaCoalescer` joins them:

- the first delta of each kind (text, reasoning) goes out at once, so the time to the first token is unchanged;
- after that, deltas are held and joined until `window` seconds have passed since the last flush (a timer flushes
  a stream that pauses, so nothing waits longer than that), or `max_deltas` deltas or `max_chars` characters are
  held, whichever comes first;
- only one kind is ever held: a delta of the other kind flushes what is held first, so the events keep the model's
  interleaving of reasoning and text, and replay shows the same.

The joined text of the events is exactly the text of the deltas, in order. The owner calls `flush()` before it
records anything else about the step and on every way out (end of stream, provider error, cancellation), so
nothing received is lost or held back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

from cowork.models import ReasoningDelta, TextDelta

__all__ = ["MAX_CHARS", "MAX_DELTAS", "WINDOW_SECONDS", "Delta", "DeltaCoalescer"]

Delta = TextDelta | ReasoningDelta

WINDOW_SECONDS = 0.016
"""About one frame at 60 Hz: faster than a reader notices, slow enough to join a fast model's deltas."""
MAX_DELTAS = 64
MAX_CHARS = 4096
"""Bound one event's size, whatever the model's pace."""


class Timer(Protocol):
    def cancel(self) -> None: ...


Schedule = Callable[[float, Callable[[], None]], Timer]
"""`(delay seconds, callback) -> a handle with cancel()`, as `loop.call_later`."""


class DeltaCoalescer:
    """Joins one model step's deltas and hands each joined delta to `emit` (see the module docstring).

    Args:
        emit: Receives each joined delta, a `TextDelta` or `ReasoningDelta` like the ones given to `add`.
        window: Seconds after a flush before held deltas are flushed.
        max_deltas: Flush once this many deltas are held.
        max_chars: Flush once this many characters are held.
        clock: Monotonic seconds (tests pass a fake).
        schedule: Runs a callback after a delay (default: the running loop's `call_later`; tests pass a fake).
    """

    def __init__(
        self,
        emit: Callable[[Delta], object],
        *,
        window: float = WINDOW_SECONDS,
        max_deltas: int = MAX_DELTAS,
        max_chars: int = MAX_CHARS,
        clock: Callable[[], float] = time.monotonic,
        schedule: Schedule | None = None,
    ) -> None:
        self._emit = emit
        self._window = window
        self._max_deltas = max_deltas
        self._max_chars = max_chars
        self._clock = clock
        self._schedule: Schedule = schedule if schedule is not None else asyncio.get_running_loop().call_later
        self._seen: set[type[Delta]] = set()
        self._kind: type[Delta] | None = None
        self._held: list[str] = []
        self._chars = 0
        self._flushed_at = 0.0
        self._timer: Timer | None = None

    def add(self, delta: Delta) -> None:
        """Take one delta: emit it now (the first of its kind, or the window is up) or hold it."""
        kind = type(delta)
        if kind is not self._kind:
            self.flush()
        if kind not in self._seen:
            self._seen.add(kind)
            self._emit(delta)
            self._flushed_at = self._clock()
            return
        self._kind = kind
        self._held.append(delta.text)
        self._chars += len(delta.text)
        now = self._clock()
        due = self._flushed_at + self._window
        if now >= due or len(self._held) >= self._max_deltas or self._chars >= self._max_chars:
            self.flush()
        elif self._timer is None:
            self._timer = self._schedule(due - now, self._on_timer)

    def flush(self) -> None:
        """Emit what is held, joined into one delta, and stop the timer; the owner calls it on every way out."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._kind is None:
            return
        kind, text = self._kind, "".join(self._held)
        self._kind, self._held, self._chars = None, [], 0
        self._emit(kind(text))
        self._flushed_at = self._clock()

    def _on_timer(self) -> None:
        self._timer = None
        self.flush()
