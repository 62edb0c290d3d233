"""A turn's trace in the browser: the Trace button under a finished turn and `/trace` open its waterfall (one row per
span in tree order, bars placed on the turn's time line, model calls with their tokens, a failed call in red with
its message as text, the approval wait apart from the run), rows expand to their attributes, Esc closes; without a
trace there is no dialog, only a notice; at a wide and a narrow width."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, Locator, Page, expect

from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall, tool_step
from cowork.testing.server import ServerProcess, provider_env

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MISSING = "<b>missing</b>.txt"  # read fails: its span is red, and the name in its message stays text
NO_TRACE = "No trace for this session yet: one is recorded for each turn (while tracing is on)."

# Each row's bar, where the page drew it (tree order).
ROWS = """() => [...document.querySelectorAll("[data-testid=trace-span]")].map((li) => {
  const bar = li.querySelector("[data-testid=trace-bar]").getBoundingClientRect();
  const track = li.querySelector(".trace-track").getBoundingClientRect();
  return {name: li.dataset.name, id: li.dataset.spanId, parent: li.dataset.parentSpanId, depth: Number(li.dataset.depth),
    left: bar.left, right: bar.right, trackLeft: track.left, trackRight: track.right};
})"""


def script() -> list[MockResponse]:
    return [
        MockResponse(
            tool_calls=[
                MockToolCall(name="read", arguments={"filePath": MISSING}),
                MockToolCall(name="glob", arguments={"pattern": "**/*.py"}),
            ]
        ),
        tool_step("write", filePath="out.txt", content="out\n"),
        MockResponse(text="Done."),
    ]


async def run_turn(page: Page) -> None:
    composer = page.get_by_test_id("composer")
    await composer.fill("look around, then write out.txt")
    await composer.press("Enter")
    approve = page.get_by_test_id("approval").get_by_test_id("approve")
    await expect(approve).to_be_visible()
    await asyncio.sleep(0.3)  # a wait long enough to see in the waterfall
    await approve.click()
    await expect(page.get_by_test_id("assistant-message").last).to_have_text("Done.")
    await expect(page.get_by_test_id("send")).to_have_text("Send")


def row(dialog: Locator, name: str) -> Locator:
    return dialog.locator(f'[data-testid=trace-span][data-name="{name}"]')


async def check_layout(page: Page, dialog: Locator, width: int) -> None:
    """Tree order, and each bar inside its track, at or after its parent's start, siblings in time order."""
    rows: list[dict[str, Any]] = await page.evaluate(ROWS)
    tree = [(r["depth"], r["name"]) for r in rows]
    assert sorted(tree[3:5]) == [(2, "execute_tool glob"), (2, "execute_tool read")]  # side by side: either first
    assert tree[:3] + tree[5:] == [
        (0, "invoke_agent cowork"),
        (1, "step 1"),
        (2, "chat mock-model"),
        (1, "step 2"),
        (2, "chat mock-model"),
        (2, "approval write"),
        (2, "execute_tool write"),
        (1, "step 3"),
        (2, "chat mock-model"),
    ]
    by_id = {r["id"]: r for r in rows}
    for r in rows:
        assert r["trackLeft"] - 0.5 <= r["left"] < r["right"] <= r["trackRight"] + 0.5, r["name"]
        parent = by_id.get(r["parent"])
        if parent is not None:
            assert r["left"] >= parent["left"] - 0.5, (r["name"], parent["name"])
    for parent in [None, *by_id]:
        lefts = [r["left"] for r in rows if (r["parent"] or None) == parent]
        assert lefts == sorted(lefts), parent
    wait = next(r for r in rows if r["name"] == "approval write")
    run = next(r for r in rows if r["name"] == "execute_tool write")
    assert wait["right"] - wait["left"] > 2 and wait["right"] <= run["left"] + 1, "the run starts after the wait"
    # Nothing wider than the window, nor than the dialog's body (no sideways scrolling).
    assert await page.evaluate("document.documentElement.scrollWidth") <= width
    body = dialog.locator(".modal-body")
    assert await body.evaluate("(el) => el.scrollWidth <= el.clientWidth")


@pytest.mark.parametrize(("width", "height"), [(1400, 900), (420, 800)])
async def test_the_trace_button_and_slash_trace_show_the_turns_waterfall(
    browser: Browser,
    server: ServerProcess,
    mock_llm: MockLLMServer,
    artifacts: Path,
    width: int,
    height: int,
) -> None:
    mock_llm.set_script(script())
    context = await browser.new_context(viewport={"width": width, "height": height})
    try:
        page = await open_ui(context, server)
        await run_turn(page)
        button = page.get_by_test_id("trace-open")
        await expect(button).to_have_count(1)
        await button.scroll_into_view_if_needed()
        await page.screenshot(path=str(artifacts / f"trace-button-{width}.png"))
        await button.click()

        dialog = page.get_by_role("dialog")
        await expect(dialog).to_have_accessible_name(re.compile(r"^Trace of the turn · \d"))
        close = dialog.get_by_test_id("dialog-cancel")
        await expect(close).to_have_text("Close")
        await expect(close).to_be_focused()
        spans = dialog.get_by_test_id("trace-span")
        await expect(spans).to_have_count(11)
        trace_id = await dialog.get_by_test_id("trace").get_attribute("data-trace-id")
        assert trace_id is not None and re.fullmatch(r"[0-9a-f]{32}", trace_id)
        await expect(dialog.get_by_test_id("trace-total")).to_contain_text(re.compile(r"\d+(\.\d+)? m?s"))
        await expect(dialog.get_by_test_id("trace-tokens")).to_contain_text(re.compile(r"[\d,]+ in · [\d,]+ out"))
        await expect(dialog.get_by_test_id("trace-cost")).to_contain_text("price unknown")  # the mock has no price
        await expect(dialog.get_by_test_id("trace-waited")).to_be_visible()

        # Model calls: tokens, cost and time to first token; the approval wait; the failed read, its message as text.
        await expect(row(dialog, "chat mock-model").get_by_test_id("trace-meta")).to_have_text(
            [re.compile(r"^[\d,]+ in · [\d,]+ out tokens · price unknown")] * 3
        )
        await expect(row(dialog, "approval write").get_by_test_id("trace-meta")).to_have_text(
            "waited for you · approved"
        )
        await expect(row(dialog, "execute_tool write").get_by_test_id("trace-meta")).to_contain_text(
            "waiting for approval"
        )
        failed = row(dialog, "execute_tool read")
        await expect(failed).to_have_attribute("data-status", "error")
        await expect(failed.get_by_test_id("trace-error")).to_contain_text(MISSING)
        await expect(dialog.locator("b, img")).to_have_count(0)
        await expect(row(dialog, "execute_tool glob")).to_have_attribute("data-status", "ok")
        await check_layout(page, dialog, width)
        await page.screenshot(path=str(artifacts / f"trace-{width}.png"))

        # A row opens to its attributes and closes again, by mouse or keyboard.
        chat = row(dialog, "chat mock-model").first
        toggle = chat.locator("button.trace-span")
        details = chat.get_by_test_id("trace-details")
        await expect(details).to_be_hidden()
        await toggle.click()
        await expect(toggle).to_have_attribute("aria-expanded", "true")
        await expect(details).to_be_visible()
        await expect(details.locator("dt").filter(has_text="gen_ai.request.model")).to_have_count(1)
        await expect(details).to_contain_text("mock-model")
        await expect(details).to_contain_text("gen_ai.usage.input_tokens")
        assert await page.evaluate("document.documentElement.scrollWidth") <= width
        await page.screenshot(path=str(artifacts / f"trace-details-{width}.png"))
        failed_toggle = failed.locator("button.trace-span")
        await failed_toggle.focus()
        await page.keyboard.press("Enter")
        await expect(failed.get_by_test_id("trace-details")).to_contain_text("status message")
        await page.keyboard.press("Enter")
        await expect(failed.get_by_test_id("trace-details")).to_be_hidden()
        await page.keyboard.press("ArrowDown")  # the next row
        await expect(failed_toggle).not_to_be_focused()
        await page.keyboard.press("Escape")
        await expect(dialog).to_have_count(0)
        await expect(button).to_be_focused()  # back where it was

        # `/trace`: the session's latest turn, the same trace.
        composer = page.get_by_test_id("composer")
        await composer.fill("/trace")
        await composer.press("Enter")
        await expect(dialog.get_by_test_id("trace")).to_have_attribute("data-trace-id", trace_id)
        await expect(spans).to_have_count(11)
        await dialog.get_by_test_id("dialog-cancel").click()
        await expect(dialog).to_have_count(0)
        # `/trace ID` by the trace's id.
        await composer.fill(f"/trace {trace_id.upper()}")
        await composer.press("Enter")
        await expect(dialog.get_by_test_id("trace")).to_have_attribute("data-trace-id", trace_id)
        await dialog.get_by_test_id("dialog-cancel").click()
        await expect(dialog).to_have_count(0)  # closed (and no longer "opening"), as after the first one above
        await composer.fill("/trace op_nothing")
        await composer.press("Enter")
        await expect(
            page.get_by_test_id("note-info").filter(has_text="No trace stored for op_nothing.")
        ).to_be_visible()
        await expect(dialog).to_have_count(0)
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        await context.close()


async def test_without_a_trace_there_is_a_notice_and_no_dialog(context: BrowserContext, server: ServerProcess) -> None:
    page = await open_ui(context, server)
    composer = page.get_by_test_id("composer")
    await composer.fill("/trace")  # no session at all
    await composer.press("Enter")
    await expect(page.get_by_test_id("toast").filter(has_text=NO_TRACE)).to_be_visible()
    await composer.fill("/new")
    await composer.press("Enter")
    await expect(page.get_by_test_id("session-title")).to_be_visible()
    await composer.fill("/trace")  # a fresh session: the server has none
    await composer.press("Enter")
    await expect(page.get_by_test_id("note-info").filter(has_text=NO_TRACE)).to_be_visible()
    await expect(page.get_by_role("dialog")).to_have_count(0)
    assert page.errors == []  # type: ignore[attr-defined]


async def test_with_tracing_off_a_turn_has_no_trace_button(
    context: BrowserContext, tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    env = provider_env("openai", mock_llm.openai_base_url) | {"COWORK_TRACING__ENABLED": "false"}
    process = ServerProcess(tmp_path / "home-untraced", workspace, env=env)
    process.start()
    try:
        mock_llm.set_script([MockResponse(text="Hello.")])
        page = await open_ui(context, process)
        composer = page.get_by_test_id("composer")
        await composer.fill("hi")
        await composer.press("Enter")
        await expect(page.get_by_test_id("assistant-message").last).to_have_text("Hello.")
        await expect(page.get_by_test_id("send")).to_have_text("Send")
        await expect(page.get_by_test_id("trace-open")).to_have_count(0)
        await composer.fill("/trace")
        await composer.press("Enter")
        await expect(page.get_by_test_id("note-info").filter(has_text=NO_TRACE)).to_be_visible()
        await expect(page.get_by_role("dialog")).to_have_count(0)
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        process.stop()
