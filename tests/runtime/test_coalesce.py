"""`DeltaCoalescer` with a fake clock and fake timers: what it emits, when, and that no text is lost or reordered."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from cowork.models import ReasoningDelta, TextDelta
from cowork.runtime._coalesce import MAX_CHARS, MAX_DELTAS, WINDOW_SECONDS, Delta, DeltaCoalescer

T, R = TextDelta, ReasoningDelta


@dataclass
class _Timer:
    at: float
    callback: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class Loop:
    """A fake clock with `call_later` timers that fire only when the test advances time."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[_Timer] = []

    def clock(self) -> float:
        return self.now

    def schedule(self, delay: float, callback: Callable[[], None]) -> _Timer:
        timer = _Timer(self.now + delay, callback)
        self.timers.append(timer)
        return timer

    def advance(self, seconds: float) -> None:
        """Move the clock on, running each timer that falls due at its own time."""
        end = self.now + seconds
        while due := sorted((t for t in self.pending if t.at <= end + 1e-12), key=lambda t: t.at):
            self.now = max(self.now, due[0].at)
            self.timers.remove(due[0])
            due[0].callback()
        self.now = end

    @property
    def pending(self) -> list[_Timer]:
        return [t for t in self.timers if not t.cancelled]


def make(loop: Loop, *, max_deltas: int = MAX_DELTAS, max_chars: int = MAX_CHARS) -> tuple[DeltaCoalescer, list[Delta]]:
    out: list[Delta] = []
    coalescer = DeltaCoalescer(
        out.append, clock=loop.clock, schedule=loop.schedule, max_deltas=max_deltas, max_chars=max_chars
    )
    return coalescer, out


def test_the_first_delta_goes_out_alone_at_once_and_the_next_wait_for_the_window() -> None:
    loop = Loop()
    coalescer, out = make(loop)
    coalescer.add(T("Hel"))
    assert out == [T("Hel")]
    coalescer.add(T("lo"))
    loop.advance(0.005)
    coalescer.add(T(" th"))
    loop.advance(0.005)
    coalescer.add(T("ere"))
    assert out == [T("Hel")]
    loop.advance(WINDOW_SECONDS - 0.010)  # the window since the first delta's flush is up: the timer fires
    assert out == [T("Hel"), T("lo there")]
    assert loop.pending == []


def test_a_paused_stream_is_flushed_by_the_timer_and_the_next_delta_after_a_pause_goes_at_once() -> None:
    loop = Loop()
    coalescer, out = make(loop)
    coalescer.add(T("a"))
    loop.advance(0.001)
    coalescer.add(T("b"))
    loop.advance(1.0)  # the model pauses; what was held does not wait for it
    assert out == [T("a"), T("b")]
    coalescer.add(T("c"))  # more than a window since the last flush
    assert out == [T("a"), T("b"), T("c")]


def test_a_busy_loop_that_missed_the_timer_still_flushes_on_the_next_delta() -> None:
    loop = Loop()
    coalescer, out = make(loop)
    coalescer.add(T("a"))
    coalescer.add(T("b"))
    loop.now += WINDOW_SECONDS  # time passes but the timer has not run yet
    coalescer.add(T("c"))
    assert out == [T("a"), T("bc")]
    assert loop.pending == []


def test_at_most_max_deltas_per_event() -> None:
    loop = Loop()
    coalescer, out = make(loop)
    for _ in range(1 + MAX_DELTAS * 2 + 3):
        coalescer.add(T("x"))
    assert [len(d.text) for d in out] == [1, MAX_DELTAS, MAX_DELTAS]
    coalescer.flush()
    assert [len(d.text) for d in out] == [1, MAX_DELTAS, MAX_DELTAS, 3]


def test_at_most_max_chars_per_event_give_or_take_the_last_delta() -> None:
    loop = Loop()
    coalescer, out = make(loop)
    coalescer.add(T("first"))
    for _ in range(5):
        coalescer.add(T("y" * 1000))
    assert [len(d.text) for d in out] == [5, 5000]  # flushed by the delta that reached MAX_CHARS
    assert MAX_CHARS <= 5000 < MAX_CHARS + 1000
    coalescer.flush()
    assert [len(d.text) for d in out] == [5, 5000]


def test_reasoning_and_text_keep_their_interleaving() -> None:
    loop = Loop()
    coalescer, out = make(loop)
    stream: list[Delta] = [R("Let"), R(" me"), R(" think"), T("The"), T(" answer"), R(" (again)"), R("."), T(" is 42")]
    for delta in stream:
        coalescer.add(delta)
    coalescer.flush()
    # The first of each kind at once; a switch of kind flushes what is held before the new delta is taken.
    assert out == [R("Let"), R(" me think"), T("The"), T(" answer"), R(" (again)."), T(" is 42")]


def test_flush_emits_what_is_held_stops_the_timer_and_is_idempotent() -> None:
    loop = Loop()
    coalescer, out = make(loop)
    coalescer.flush()
    assert out == []
    coalescer.add(T("a"))
    coalescer.add(T("b"))
    assert len(loop.pending) == 1
    coalescer.flush()
    coalescer.flush()
    assert out == [T("a"), T("b")] and loop.pending == []
    loop.advance(1.0)
    assert out == [T("a"), T("b")]


def test_any_stream_comes_out_whole_and_in_order() -> None:
    rng = random.Random(20)
    for _ in range(200):
        loop = Loop()
        coalescer, out = make(loop, max_deltas=rng.choice([2, 5, MAX_DELTAS]), max_chars=rng.choice([8, MAX_CHARS]))
        sent: list[Delta] = []
        for _ in range(rng.randrange(1, 120)):
            text = "".join(rng.choice("ab ") for _ in range(rng.randrange(1, 6)))
            delta: Delta = T(text) if rng.random() < 0.8 else R(text)
            sent.append(delta)
            coalescer.add(delta)
            loop.advance(rng.choice([0.0, 0.001, 0.004, 0.02]))
        coalescer.flush()
        assert _runs(out) == _runs(sent)
        assert len(out) <= len(sent)


def _runs(deltas: list[Delta]) -> list[Delta]:
    """Adjacent deltas of one kind joined: what any coalescing must preserve."""
    joined: list[Delta] = []
    for delta in deltas:
        if joined and type(joined[-1]) is type(delta):
            joined[-1] = type(delta)(joined[-1].text + delta.text)
        else:
            joined.append(delta)
    return joined


@pytest.mark.anyio
async def test_the_default_timer_is_the_running_loops() -> None:
    out: list[Delta] = []
    second = asyncio.Event()

    def emit(delta: Delta) -> None:
        out.append(delta)
        if len(out) == 2:
            second.set()

    coalescer = DeltaCoalescer(emit)
    coalescer.add(T("a"))
    coalescer.add(T("b"))
    assert out == [T("a")]
    await asyncio.wait_for(second.wait(), 10)
    assert out == [T("a"), T("b")]
