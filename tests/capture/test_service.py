"""The capture service over a real SQLite file, a scripted source (through the real sampler thread) and a fake
clock: spans reach the store, consent and pauses hold across restarts, exclusions leave nothing, queries and
deletes by range answer what was captured."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cowork.capture import BUFFER_SLOTS, CaptureService, ConsentError, Window
from cowork.config import CaptureConfig, MemoryConfig
from cowork.protocol import CaptureConfigureParams, CaptureStatus
from cowork.retrieval import Retrieval
from cowork.store import Database, repos
from cowork.store.repos.activity import ActivitySpanRow
from cowork.testing.capture import ScriptedSource
from cowork.testing.embedders import HashEmbedder

pytestmark = pytest.mark.anyio

T0 = datetime(2026, 11, 27, 13, 0, tzinfo=UTC)
EDITOR = Window("Code", "budget.py — cowork", 10, "code")
BROWSER = Window("Firefox", "Quarterly budget — Google Sheets", 11, "firefox")


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class Rig:
    def __init__(self, db: Database, source: ScriptedSource, clock: Clock, **config: object) -> None:
        self.db, self.source, self.clock = db, source, clock
        self.published: list[CaptureStatus] = []
        self.config = CaptureConfig(poll_seconds=30, flush_seconds=600, **config)
        self.retrieval: Retrieval | None = None
        self.service = self.build()

    def build(self, retrieval: Retrieval | None = None) -> CaptureService:
        return CaptureService(
            self.db,
            self.config,
            env={},
            publish=self.published.append,
            retrieval=retrieval,
            clock=self.clock,
            sources=lambda _env: (self.source, None),
        )

    async def show(self, window: Window | None, *, after: float = 0.0, idle: float = 0.0) -> None:
        """Advance the clock, put `window` in front, and wait until the service has taken the sample."""
        self.clock.advance(after)
        seen = self.source.samples
        self.source.show(window, idle)
        assert await asyncio.to_thread(self.source.wait_samples, seen + 1)
        await asyncio.sleep(0.05)  # the sample's callback runs on the loop

    def rows(self) -> list[ActivitySpanRow]:
        return self.db.read_sync(
            lambda c: repos.activity.in_range(c, T0 - timedelta(days=400), T0 + timedelta(days=1))
        )[0]


@pytest.fixture
async def rig(db: Database) -> AsyncIterator[Rig]:
    r = Rig(db, ScriptedSource(), Clock())
    await r.service.start()
    yield r
    await r.service.stop()


async def wait_for(condition: Callable[[], bool]) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met in time")


async def test_spans_reach_the_store_and_the_status_shows_the_window(rig: Rig) -> None:
    await rig.show(EDITOR)
    status = rig.service.status()
    assert status.state == "capturing" and status.capturing and status.source == "scripted"
    assert status.current is not None and status.current.title == EDITOR.title
    await rig.show(BROWSER, after=90)
    await rig.show(BROWSER, after=30)
    await rig.service.flush()
    assert [(r.app, r.started_at, r.ended_at) for r in rig.rows()] == [
        ("Code", T0, T0 + timedelta(seconds=90)),
        ("Firefox", T0 + timedelta(seconds=90), T0 + timedelta(seconds=120)),
    ]
    assert any(s.current and s.current.app == "Firefox" for s in rig.published)  # clients were told


async def test_the_buffer_flushes_by_itself_when_full(rig: Rig) -> None:
    for i in range(BUFFER_SLOTS + 1):
        await rig.show(Window("App", f"window {i}", None, None), after=10)
    await wait_for(lambda: len(rig.rows()) >= BUFFER_SLOTS)  # no explicit flush, and the interval is 10 minutes


async def test_pausing_stops_capture_and_holds_across_a_restart(rig: Rig) -> None:
    await rig.show(EDITOR)
    status = await rig.service.configure(CaptureConfigureParams(paused=True))
    assert status.state == "paused" and not status.capturing and status.current is None
    seen = rig.source.samples
    rig.source.show(BROWSER)
    await asyncio.sleep(0.3)
    assert rig.source.samples == seen  # nothing looks at the screen while paused
    await rig.service.stop()

    again = rig.build()
    await again.start()
    try:
        assert again.status().state == "paused"
        assert (await again.configure(CaptureConfigureParams(paused=False))).state == "capturing"
    finally:
        await again.stop()


async def test_a_timed_pause_ends_by_itself(rig: Rig) -> None:
    status = await rig.service.configure(CaptureConfigureParams(paused=True, pause_minutes=5))
    assert status.paused_until == T0 + timedelta(minutes=5)
    rig.clock.advance(301)
    await wait_for(lambda: rig.service.status().state == "capturing")


async def test_consent_changes_persist_and_an_unbuilt_stream_is_refused_changing_nothing(rig: Rig) -> None:
    status = await rig.service.configure(CaptureConfigureParams(streams={"focus": False}))
    assert {s.stream: s.enabled for s in status.streams}["focus"] is False
    before = rig.db.read_sync(lambda c: repos.settings.get(c, "capture:settings"))
    with pytest.raises(ConsentError, match="keystrokes"):
        await rig.service.configure(CaptureConfigureParams(streams={"keystrokes": True}, exclude_apps=["x"]))
    assert rig.db.read_sync(lambda c: repos.settings.get(c, "capture:settings")) == before
    assert rig.service.settings.exclude_apps == ()
    window_off = await rig.service.configure(CaptureConfigureParams(streams={"window": False}))
    assert window_off.state == "off" and "window stream" in (window_off.reason or "")
    keys = {s.stream: s for s in window_off.streams}
    assert not keys["keystrokes"].available and "passwords" in (keys["keystrokes"].note or "")


async def test_an_excluded_app_leaves_no_trace_anywhere_in_the_database(rig: Rig, tmp_path: Path) -> None:
    await rig.service.configure(CaptureConfigureParams(exclude_apps=["signal*"]))
    await rig.show(EDITOR)
    await rig.show(Window("Signal", "Chat with Dr. Alvarez", 12, "signal-desktop"), after=60)
    await rig.show(Window("KeePassXC", "vault.kdbx", 13, "keepassxc"), after=60)
    await rig.show(EDITOR, after=60)
    status_texts = [s.model_dump_json() for s in rig.published]
    await rig.service.stop()
    rig.service = rig.build()
    await rig.service.start()
    with sqlite3.connect(tmp_path / "cowork.db") as raw:
        dump = "\n".join(raw.iterdump())
    for secret in ("Signal", "Alvarez", "KeePassXC", "vault.kdbx"):
        assert secret not in dump
        assert all(secret not in text for text in status_texts)
    assert {r.app for r in rig.rows()} == {"Code"}


async def test_a_source_that_goes_away_is_reported(rig: Rig) -> None:
    await rig.show(EDITOR)
    rig.source.fail("the X display :91 went away")
    await wait_for(lambda: rig.service.status().state == "unavailable")
    status = rig.service.status()
    assert status.reason == "the X display :91 went away" and not status.capturing
    assert rig.published[-1].state == "unavailable" and rig.service.failed  # health: degraded


async def test_query_totals_focus_and_filters(rig: Rig) -> None:
    await rig.show(EDITOR)
    await rig.show(Window("Code", "tests.py — cowork", 10, "code"), after=400)
    await rig.show(BROWSER, after=400)  # 800 s in Code: a focus session (over 10 minutes)
    await rig.show(None, after=120)
    result = await rig.service.query(T0, T0 + timedelta(hours=1))
    assert [(a.app, a.seconds, a.spans) for a in result.apps] == [("Code", 800.0, 2), ("Firefox", 120.0, 1)]
    assert [(f.app, f.seconds) for f in result.focus] == [("Code", 800.0)]
    only = await rig.service.query(T0, T0 + timedelta(hours=1), title="sheets")
    assert [s.app for s in only.spans] == ["Firefox"]
    clipped = await rig.service.query(T0 + timedelta(seconds=100), T0 + timedelta(seconds=200))
    assert [(s.seconds, s.started_at) for s in clipped.spans] == [(100.0, T0 + timedelta(seconds=100))]
    await rig.service.configure(CaptureConfigureParams(streams={"focus": False}))
    assert (await rig.service.query(T0, T0 + timedelta(hours=1))).focus == []


async def test_delete_by_range_removes_inside_and_cuts_the_edges(rig: Rig) -> None:
    await rig.show(EDITOR)
    await rig.show(BROWSER, after=100)
    await rig.show(EDITOR, after=100)
    await rig.show(None, after=100)
    touched = await rig.service.delete(T0 + timedelta(seconds=50), T0 + timedelta(seconds=250))
    assert touched == 3
    assert [(r.app, r.started_at, r.ended_at) for r in rig.rows()] == [
        ("Code", T0, T0 + timedelta(seconds=50)),
        ("Code", T0 + timedelta(seconds=250), T0 + timedelta(seconds=300)),
    ]
    inside = await rig.service.query(T0 + timedelta(seconds=50), T0 + timedelta(seconds=250))
    assert inside.spans == [] and inside.apps == []


async def test_delete_across_the_open_span_does_not_grow_it_back(rig: Rig) -> None:
    await rig.show(EDITOR)
    await rig.show(EDITOR, after=100)
    await rig.service.flush()
    await rig.service.delete(T0, T0 + timedelta(seconds=100))
    await rig.show(EDITOR, after=50)
    await rig.service.flush()
    assert [(r.started_at, r.ended_at) for r in rig.rows()] == [
        (T0 + timedelta(seconds=100), T0 + timedelta(seconds=150))
    ]


async def test_retention_deletes_old_activity(rig: Rig) -> None:
    old = ActivitySpanRow("old", "Code", "x", None, T0 - timedelta(days=40), T0 - timedelta(days=40, seconds=-60))
    rig.db.write_sync(lambda c: repos.activity.put_many(c, [old]))
    assert await rig.service.prune() == 1
    await rig.service.configure(CaptureConfigureParams(retention_days=7))
    assert rig.service.status().retention_days == 7


async def test_capture_off_in_config_never_starts_a_source(db: Database) -> None:
    r = Rig(db, ScriptedSource(), Clock(), enabled=False)
    await r.service.start()
    try:
        status = r.service.status()
        assert status.state == "off" and "capture.enabled = false" in (status.reason or "")
        assert r.source.opened == 0
    finally:
        await r.service.stop()


async def test_activity_is_indexed_by_the_hour_and_found_by_meaning(db: Database, tmp_path: Path) -> None:
    r = Rig(db, ScriptedSource(), Clock())
    retrieval = Retrieval(db, MemoryConfig(), embedder=HashEmbedder())
    r.service = r.build(retrieval)
    await r.service.start()
    try:
        await r.show(BROWSER)
        await r.show(EDITOR, after=600)
        await r.show(None, after=600)
        result = await r.service.query(T0, T0 + timedelta(hours=2), query="quarterly budget sheets")
        assert result.hits and "Quarterly budget — Google Sheets" in result.hits[0].text
        assert result.hits[0].hour == T0.astimezone().replace(minute=0).astimezone(UTC)
        sources = db.read_sync(lambda c: repos.retrieval.sources(c, "activity", "user"))
        assert len(sources) == 1
        await r.service.delete(T0, T0 + timedelta(hours=2))
        assert db.read_sync(lambda c: repos.retrieval.sources(c, "activity", "user")) == []
    finally:
        await r.service.stop()
