"""The Context view and the capture indicator: a day's timeline by application with totals and focus sessions, the span
list and its filter, titles shown as text, consent per stream (a stream this build lacks cannot be turned on), the
user's exclusions and retention kept across reloads and refused changes shown, pausing from the view or another
client, deleting a day or the last hour after a confirmation; at a wide and a narrow width.

Activity is seeded into the home's database before the server starts; the browser runs in a fixed time zone with a
half-hour offset, so "today" and local midnight are the page's, not the test machine's."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, Page, expect

from cowork.store.repos import activity
from cowork.store.repos.activity import ActivitySpanRow
from cowork.testing import xdisplay
from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer
from cowork.testing.postgres import store_of
from cowork.testing.server import ServerProcess, provider_env

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ZONE_ID = "Asia/Kolkata"  # +05:30 all year: the page's local midnight is not the server's or UTC's
ZONE = timezone(timedelta(hours=5, minutes=30))
XSS = "<img src=x onerror=alert(1)>"
_ids = itertools.count(1)


def today() -> datetime:
    """Local midnight today, in the page's time zone."""
    return datetime.now(ZONE).replace(hour=0, minute=0, second=0, microsecond=0)


def span(app: str, title: str, start: datetime, minutes: float) -> ActivitySpanRow:
    return ActivitySpanRow(f"span-{next(_ids)}", app, title, app.lower(), start, start + timedelta(minutes=minutes))


def day_of_work() -> list[ActivitySpanRow]:
    """Firefox 1 h 12 min (one focus session of 1 h 4 min), Editor 9 min, Terminal 8 min."""
    at = today() + timedelta(hours=9)
    return [
        span("Firefox", "Pull request #12", at, 64),
        span("Terminal", "make test", at + timedelta(minutes=64), 8),
        span("Firefox", "Docs — Python", at + timedelta(minutes=72), 8),
        span("Editor", "main.py — cowork", at + timedelta(minutes=80), 5),
        span("Editor", XSS, at + timedelta(minutes=85), 4),
    ]


def seed(home: Path, spans: list[ActivitySpanRow]) -> None:
    """Write spans into the database the server at `home` opens (as if capture had recorded them)."""
    db = store_of(home)
    try:
        db.migrate()
        db.write_sync(lambda conn: activity.put_many(conn, spans))
    finally:
        db.close()


def start_server(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer, spans: list[ActivitySpanRow]
) -> ServerProcess:
    home = tmp_path / "home"
    seed(home, spans)
    # No DISPLAY (tests/conftest.py removes it): no source runs, capture is `unavailable`; no activity index, so no
    # embedder loads.
    env = provider_env("openai", mock_llm.openai_base_url) | {"COWORK_CAPTURE__INDEX": "false"}
    return ServerProcess(home, workspace, env=env).start()


@pytest.fixture
def seeded(tmp_path: Path, workspace: Path, mock_llm: MockLLMServer) -> Iterator[ServerProcess]:
    process = start_server(tmp_path, workspace, mock_llm, day_of_work())
    yield process
    process.stop()


@pytest.fixture
async def zoned(browser: Browser) -> Any:
    ctx = await browser.new_context(viewport={"width": 1400, "height": 900}, timezone_id=ZONE_ID)
    yield ctx
    await ctx.close()


async def open_context(context: BrowserContext, server: ServerProcess) -> Page:
    page = await open_ui(context, server)
    await page.get_by_test_id("tab-context").click()
    await expect(page.get_by_test_id("context-view")).to_be_visible()
    return page


async def rpc(server: ServerProcess, method: str, params: dict[str, Any] | None = None) -> Any:
    client = await EventClient.connect(server.address)
    try:
        return await client.call(method, params or {})
    finally:
        await client.close()


def whole_day() -> dict[str, str]:
    return {"since": today().isoformat(), "until": (today() + timedelta(days=1)).isoformat()}


async def test_the_timeline_by_app_and_the_spans_of_the_day(zoned: BrowserContext, seeded: ServerProcess) -> None:
    page = await open_context(zoned, seeded)
    rows = page.get_by_test_id("timeline-row")
    await expect(rows.get_by_test_id("timeline-app")).to_have_text(["Firefox", "Editor", "Terminal"])  # most time first
    await expect(rows.get_by_test_id("timeline-total")).to_have_text(["1 h 12 min", "9 min", "8 min"])
    await expect(page.get_by_test_id("timeline-summary")).to_have_text("1 h 29 min in 3 applications · 1 focus session")
    firefox = rows.filter(has_text="Firefox")
    await expect(firefox.get_by_test_id("focus-badge")).to_have_text("Focus 1 h 4 min")
    await expect(firefox.get_by_test_id("timeline-focus")).to_have_count(1)
    await expect(firefox.get_by_test_id("timeline-bar")).to_have_count(2)
    await expect(firefox.get_by_test_id("timeline-bar").first).to_have_attribute(
        "title", "Pull request #12\n09:00–10:04 (1 h 4 min)"
    )
    assert await rows.filter(has_text="Editor").get_by_test_id("focus-badge").count() == 0
    # 09:00 is 37.5 % across the day's lane: local midnight is the page's.
    lane = await firefox.locator(".timeline-lane").bounding_box()
    bar = await firefox.get_by_test_id("timeline-bar").first.bounding_box()
    assert lane is not None and bar is not None
    assert abs((bar["x"] - lane["x"]) / lane["width"] - 9 / 24) < 0.01

    # The spans, newest first; a title is text, never markup.
    spans = page.get_by_test_id("span-row")
    await expect(spans.get_by_test_id("span-title")).to_have_text(
        [XSS, "main.py — cowork", "Docs — Python", "make test", "Pull request #12"]
    )
    await expect(spans.first).to_contain_text("10:25–10:29")
    assert await page.get_by_test_id("context-view").locator("img").count() == 0
    await expect(
        page.get_by_test_id("timeline-row").filter(has_text="Editor").get_by_test_id("timeline-bar").last
    ).to_have_attribute("title", re.compile(re.escape(XSS)))

    await page.get_by_test_id("span-filter").fill("fire")  # the application
    await expect(spans.get_by_test_id("span-title")).to_have_text(["Docs — Python", "Pull request #12"])
    await page.get_by_test_id("span-filter").fill("MAKE")  # the title, any case
    await expect(spans.get_by_test_id("span-title")).to_have_text(["make test"])
    await page.get_by_test_id("span-filter").fill("nothing like it")
    await expect(page.get_by_test_id("spans-empty")).to_have_text("No activity matches.")
    await page.get_by_test_id("span-filter").fill("")

    # Other days: the day before is empty, Today comes back; the next day cannot be picked from today.
    await expect(page.get_by_test_id("day-next")).to_be_disabled()
    await page.get_by_test_id("day-prev").click()
    await expect(page.get_by_test_id("timeline-empty")).to_have_text("Nothing captured on this day.")
    await expect(page.get_by_test_id("day-input")).to_have_value((today() - timedelta(days=1)).strftime("%Y-%m-%d"))
    await page.get_by_test_id("day-today").click()
    await expect(rows).to_have_count(3)
    await page.get_by_test_id("day-input").fill((today() - timedelta(days=3)).strftime("%Y-%m-%d"))
    await expect(page.get_by_test_id("timeline-empty")).to_be_visible()
    await page.get_by_test_id("day-next").click()
    await expect(page.get_by_test_id("day-input")).to_have_value((today() - timedelta(days=2)).strftime("%Y-%m-%d"))
    assert page.errors == []  # type: ignore[attr-defined]


async def test_consent_and_exclusions_are_kept(zoned: BrowserContext, seeded: ServerProcess) -> None:
    page = await open_context(zoned, seeded)
    await expect(page.get_by_test_id("capture-state")).to_contain_text("Not capturing: No capture source can run here.")
    streams = page.get_by_test_id("stream")
    await expect(streams).to_have_count(6)

    # A stream this build does not have: off, cannot be turned on, and says why.
    keys = page.locator("[data-testid=stream][data-stream=keystrokes]")
    await expect(keys.get_by_test_id("stream-toggle")).to_be_disabled()
    await expect(keys.get_by_test_id("stream-toggle")).not_to_be_checked()
    await expect(keys.get_by_test_id("stream-note")).to_contain_text("records passwords and private messages")

    # Focus detection off: kept across a reload and told to every client; the timeline has no focus sessions then.
    focus = page.locator("[data-testid=stream][data-stream=focus]")
    await expect(focus.get_by_test_id("stream-toggle")).to_be_checked()
    await expect(page.get_by_test_id("focus-badge")).to_have_count(1)
    await focus.get_by_test_id("stream-toggle").click()
    await expect(focus).to_have_attribute("data-enabled", "false")
    status = await rpc(seeded, "capture/status")
    assert {s["stream"]: s["enabled"] for s in status["streams"]}["focus"] is False
    await page.reload()
    await page.get_by_test_id("tab-context").click()
    await expect(
        page.locator("[data-testid=stream][data-stream=focus]").get_by_test_id("stream-toggle")
    ).not_to_be_checked()
    await expect(page.get_by_test_id("timeline-row")).to_have_count(3)
    await expect(page.get_by_test_id("focus-badge")).to_have_count(0)

    # An application excluded: kept across a reload; the built-in exclusions are there, read-only.
    await expect(page.get_by_test_id("builtin-exclusions")).to_contain_text("keepass")
    assert await page.get_by_test_id("builtin-exclusions").get_by_role("button").count() == 0
    await page.get_by_test_id("exclude-app-input").fill("*bank*")
    await page.get_by_test_id("exclude-app-add").click()
    await expect(page.get_by_test_id("exclude-apps").get_by_test_id("exclusion")).to_have_text(["*bank*×"])
    await page.get_by_test_id("exclude-title-input").fill("*salary*")
    await page.get_by_test_id("exclude-title-input").press("Enter")
    await expect(page.get_by_test_id("exclude-titles").get_by_test_id("exclusion")).to_have_text(["*salary*×"])
    await page.reload()
    await page.get_by_test_id("tab-context").click()
    await expect(page.get_by_test_id("exclude-apps").get_by_test_id("exclusion")).to_have_text(["*bank*×"])
    status = await rpc(seeded, "capture/status")
    assert (status["excludeApps"], status["excludeTitles"]) == (["*bank*"], ["*salary*"])
    await page.get_by_test_id("exclude-titles").get_by_test_id("exclusion-remove").click()
    await expect(page.get_by_test_id("exclude-titles")).to_have_text("none")

    # A change the server refuses is shown and changes nothing; an accepted one is kept.
    await page.get_by_test_id("retention-days").fill("0")
    await page.get_by_test_id("retention-save").click()
    await expect(page.get_by_test_id("capture-error")).to_be_visible()
    await expect(page.get_by_test_id("retention-days")).to_have_value("30")
    assert (await rpc(seeded, "capture/status"))["retentionDays"] == 30
    await page.get_by_test_id("exclude-app-input").fill("x" * 201)
    await page.get_by_test_id("exclude-app-add").click()
    await expect(page.get_by_test_id("capture-error")).to_contain_text("1 to 200 characters")
    await expect(page.get_by_test_id("exclude-apps").get_by_test_id("exclusion")).to_have_count(1)
    await page.get_by_test_id("retention-days").fill("14")
    await page.get_by_test_id("retention-save").click()
    await expect(page.get_by_test_id("capture-error")).to_be_hidden()
    await page.reload()
    await page.get_by_test_id("tab-context").click()
    await expect(page.get_by_test_id("retention-days")).to_have_value("14")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_pausing_shows_in_the_indicator(zoned: BrowserContext, seeded: ServerProcess) -> None:
    page = await open_ui(zoned, seeded)
    indicator = page.get_by_test_id("capture-indicator")
    await expect(indicator).to_have_attribute("data-state", "unavailable")
    await expect(indicator).to_be_hidden()  # nothing is recorded: no indicator

    # Paused from another client: the notification reaches the page; the indicator opens the Context view.
    await rpc(seeded, "capture/configure", {"paused": True})
    await expect(indicator).to_have_attribute("data-state", "paused")
    await expect(indicator).to_have_text("Paused")
    await expect(indicator).to_have_attribute("title", "Capture paused until you resume it (open Context)")
    await indicator.click()
    await expect(page.get_by_test_id("context-view")).to_be_visible()
    await expect(page.get_by_test_id("capture-state")).to_have_text("Paused until you resume")

    await page.get_by_test_id("capture-resume").click()
    await expect(indicator).to_be_hidden()
    await expect(page.get_by_test_id("capture-state")).to_contain_text("Not capturing")

    # Paused for 30 minutes from the view: until a time, told in the state line and the indicator.
    await page.get_by_test_id("capture-pause-30").click()
    await expect(page.get_by_test_id("capture-state")).to_have_text(re.compile(r"^Paused until \d\d:\d\d$"))
    await expect(indicator).to_have_attribute("title", re.compile(r"^Capture paused until \d\d:\d\d \(open Context\)$"))
    status = await rpc(seeded, "capture/status")
    assert status["state"] == "paused" and status["pausedUntil"] is not None
    await page.get_by_test_id("capture-resume").click()
    await page.get_by_test_id("capture-pause-indefinitely").click()
    await expect(indicator).to_have_text("Paused")
    await page.reload()  # the initial state comes from `capture/status` after connecting
    await expect(page.get_by_test_id("capture-indicator")).to_have_attribute("data-state", "paused")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_delete_this_day(zoned: BrowserContext, seeded: ServerProcess) -> None:
    page = await open_context(zoned, seeded)
    await expect(page.get_by_test_id("timeline-row")).to_have_count(3)
    await page.get_by_test_id("context-delete-day").click()
    dialog = page.get_by_test_id("context-delete-dialog")
    await expect(dialog).to_contain_text("This cannot be undone.")
    await expect(dialog.get_by_test_id("dialog-cancel")).to_be_focused()  # Enter never deletes
    await dialog.get_by_test_id("dialog-cancel").click()
    await expect(dialog).to_have_count(0)
    assert len((await rpc(seeded, "context/query", whole_day()))["spans"]) == 5

    await page.get_by_test_id("context-delete-day").click()
    await page.get_by_test_id("context-delete-confirm").click()
    await expect(page.get_by_test_id("timeline-empty")).to_have_text("Nothing captured on this day.")
    await expect(page.get_by_test_id("spans-empty")).to_be_visible()
    await expect(page.get_by_test_id("toast").last).to_have_text("Deleted 5 spans of activity.")
    assert (await rpc(seeded, "context/query", whole_day()))["spans"] == []
    assert page.errors == []  # type: ignore[attr-defined]


async def test_delete_the_last_hour(
    zoned: BrowserContext, tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    now = datetime.now(UTC)
    recent = span("Editor", "just now", now - timedelta(minutes=30), 10)
    earlier = span("Editor", "this morning", now - timedelta(hours=3), 10)
    server = start_server(tmp_path, workspace, mock_llm, [earlier, recent])
    try:
        page = await open_context(zoned, server)
        await page.get_by_test_id("context-delete-hour").click()
        await expect(page.get_by_test_id("context-delete-dialog")).to_contain_text("Delete the last hour?")
        await page.get_by_test_id("context-delete-confirm").click()
        await expect(page.get_by_test_id("toast").last).to_have_text("Deleted 1 span of activity.")
        since = (now - timedelta(hours=4)).isoformat()
        left = (await rpc(server, "context/query", {"since": since}))["spans"]
        assert [s["title"] for s in left] == ["this morning"]
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        server.stop()


@pytest.mark.parametrize(("width", "height"), [(420, 900), (1400, 900)])
async def test_the_view_narrow_and_wide(
    browser: Browser, seeded: ServerProcess, artifacts: Path, width: int, height: int
) -> None:
    await rpc(seeded, "capture/configure", {"excludeApps": ["*bank*", "Slack"], "excludeTitles": ["*salary*"]})
    context = await browser.new_context(viewport={"width": width, "height": height}, timezone_id=ZONE_ID)
    try:
        page = await open_context(context, seeded)
        await expect(page.get_by_test_id("timeline-row")).to_have_count(3)
        await expect(page.get_by_test_id("span-row")).to_have_count(5)
        await page.get_by_test_id("capture-pause-indefinitely").click()
        await expect(page.get_by_test_id("capture-indicator")).to_be_visible()
        # Only the timeline scrolls sideways (inside its box); the page does not, and the controls fit.
        assert await page.evaluate("document.documentElement.scrollWidth") <= width
        for testid in (
            "capture-state",
            "context-delete-hour",
            "span-filter",
            "capture-streams",
            "exclude-app-add",
            "retention-save",
        ):
            box = await page.get_by_test_id(testid).bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, testid
        # The application column stays in view while the lanes scroll.
        timeline = page.get_by_test_id("timeline")
        await timeline.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
        label = await page.get_by_test_id("timeline-app").first.bounding_box()
        assert label is not None and label["x"] >= 0
        await page.get_by_test_id("timeline").screenshot(path=str(artifacts / f"context-timeline-{width}.png"))
        await timeline.evaluate("el => { el.scrollLeft = 0; }")
        # The view scrolls inside the page: a window tall enough to show all of it, for the picture.
        await page.set_viewport_size({"width": width, "height": 2400})
        await page.screenshot(path=str(artifacts / f"context-{width}.png"))
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        await context.close()


async def test_what_capture_records_now_is_shown_as_text(
    zoned: BrowserContext, seeded: ServerProcess, artifacts: Path
) -> None:
    """The indicator's tooltip and the state line while a source records, from a `capture/status` notification (no
    source runs here; the server side of that is tested with a real display elsewhere)."""
    page = await open_context(zoned, seeded)
    status = await rpc(seeded, "capture/status")
    since = (today() + timedelta(hours=9, minutes=5)).isoformat()
    capturing = status | {
        "state": "capturing", "capturing": True, "source": "x11", "reason": None,
        "current": {"app": "Firefox", "title": f"Pull request #12 {XSS}", "since": since},
        "deepWork": True, "focusApp": "Firefox", "focusSince": since,
    }  # fmt: skip
    await page.evaluate(
        "status => window.coworkApp.onNotification({method: 'capture/status', params: status})", capturing
    )
    indicator = page.get_by_test_id("capture-indicator")
    await expect(indicator).to_have_attribute("data-state", "capturing")
    await expect(indicator).to_have_text("Capturing")
    await expect(indicator).to_have_attribute("title", f"Capturing: Firefox — Pull request #12 {XSS} (open Context)")
    await expect(page.get_by_test_id("capture-state")).to_have_text(
        f"Capturing via x11 — now: Firefox — Pull request #12 {XSS} (since 09:05)"
    )
    await expect(page.get_by_test_id("capture-deep-work")).to_have_text("Deep work in Firefox since 09:05")
    assert await page.locator("header img, [data-testid=context-view] img").count() == 0
    await page.get_by_test_id("context-view").screenshot(path=str(artifacts / "context-capturing.png"))

    # Off again: no indicator, and the reason in the state line.
    off = status | {"state": "off", "capturing": False, "reason": "Capture is turned off in the configuration."}
    await page.evaluate("status => window.coworkApp.onNotification({method: 'capture/status', params: status})", off)
    await expect(indicator).to_be_hidden()
    await expect(page.get_by_test_id("capture-state")).to_have_text("Off: Capture is turned off in the configuration.")
    await expect(page.get_by_test_id("capture-pause-row").get_by_role("button")).to_have_count(0)

    # A status arriving while a control has the keyboard leaves it there (they come every few seconds while capturing).
    toggle = page.locator("[data-testid=stream][data-stream=window]").get_by_test_id("stream-toggle")
    await page.get_by_test_id("exclude-app-input").fill("half-typ")
    await toggle.focus()
    await page.evaluate(
        "status => window.coworkApp.onNotification({method: 'capture/status', params: status})", capturing
    )
    await expect(page.get_by_test_id("capture-state")).to_contain_text("Capturing via x11")
    await expect(toggle).to_be_focused()
    await expect(page.get_by_test_id("exclude-app-input")).to_have_value("half-typ")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_the_indicator_follows_a_real_display(
    zoned: BrowserContext, tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    """A server capturing an X display (Xvfb and openbox) with a real window: the indicator, the "now" line, the
    timeline following a title change, and pausing from the view."""
    if (reason := xdisplay.available()) is not None:
        pytest.skip(reason)
    with xdisplay.XDisplay() as x:
        window = xdisplay.open_window(x.display, "Firefox", "Pull request #12 — Mozilla Firefox")
        try:
            window.activate()
            # tests/conftest.py removes DISPLAY from this process; the server is given the test display explicitly.
            env = provider_env("openai", mock_llm.openai_base_url) | {
                "COWORK_CAPTURE__INDEX": "false",
                "COWORK_CAPTURE__POLL_SECONDS": "0.5",
                "COWORK_CAPTURE__MIN_SPAN_SECONDS": "0",  # the first title lasts as long as the page takes to open
                "DISPLAY": x.display,
            }
            server = ServerProcess(tmp_path / "home", workspace, env=env).start()
            try:
                page = await open_ui(zoned, server)
                indicator = page.get_by_test_id("capture-indicator")
                await expect(indicator).to_have_attribute("data-state", "capturing")
                await expect(indicator).to_have_text("Capturing")
                await expect(indicator).to_have_attribute(
                    "title", "Capturing: Firefox — Pull request #12 — Mozilla Firefox (open Context)"
                )
                await indicator.click()
                state = page.get_by_test_id("capture-state")
                await expect(state).to_have_text(
                    re.compile(
                        r"^Capturing via x11 — now: Firefox — Pull request #12 — Mozilla Firefox \(since \d\d:\d\d\)$"
                    )
                )

                # A new title: the indicator follows, and the timeline shows the window recorded so far.
                window.set_title("Review — Mozilla Firefox")
                await expect(indicator).to_have_attribute(
                    "title", "Capturing: Firefox — Review — Mozilla Firefox (open Context)"
                )
                await expect(state).to_contain_text("now: Firefox — Review — Mozilla Firefox")
                await expect(page.get_by_test_id("timeline-app")).to_have_text(["Firefox"])
                await expect(page.get_by_test_id("span-title").last).to_have_text("Pull request #12 — Mozilla Firefox")

                await page.get_by_test_id("capture-pause-indefinitely").click()
                await expect(indicator).to_have_attribute("data-state", "paused")
                await expect(indicator).to_have_text("Paused")
                await expect(state).to_have_text("Paused until you resume")
                await page.get_by_test_id("capture-resume").click()
                await expect(indicator).to_have_attribute("data-state", "capturing")
                assert page.errors == []  # type: ignore[attr-defined]
            finally:
                server.stop()
        finally:
            window.close()
