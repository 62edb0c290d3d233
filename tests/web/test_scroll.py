"""The transcript follows the newest content, also after a tool card grows, until the person scrolls up."""

from __future__ import annotations

import pytest
from playwright.async_api import BrowserContext, Page, expect

from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step
from cowork.testing.server import ServerProcess

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

LONG = "\n\n".join(f"Line {n} of a long answer." for n in range(60))

DISTANCE = "(el) => el.scrollHeight - el.scrollTop - el.clientHeight"


async def distance_from_end(page: Page) -> float:
    distance: float = await page.get_by_test_id("transcript").evaluate(DISTANCE)
    return distance


async def test_the_transcript_follows_tool_results_and_answers_until_scrolled_up(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script(
        [
            tool_step("glob", pattern="**/*"),
            MockResponse(text=LONG),
            tool_step("glob", pattern="**/*"),
            MockResponse(text=LONG),
            MockResponse(text="The third answer."),
        ]
    )
    page = await open_ui(context, server)
    await page.set_viewport_size({"width": 900, "height": 500})
    for number in (1, 2):
        await page.get_by_test_id("composer").fill(f"question {number}")
        await page.get_by_test_id("send").click()
        await expect(page.get_by_text("Line 59 of a long answer.").nth(number - 1)).to_be_visible()
        assert await distance_from_end(page) < 5  # at the end, after a tool card and a long answer
    # Scrolled up by the person: new content does not pull the view down.
    await page.get_by_test_id("transcript").evaluate("(el) => { el.scrollTop = 0; }")
    await page.get_by_test_id("transcript").evaluate("(el) => el.dispatchEvent(new Event('scroll'))")
    await server_note(page)
    assert await page.get_by_test_id("transcript").evaluate("(el) => el.scrollTop") == 0
    # Sending again follows again.
    await page.get_by_test_id("composer").fill("question 3")
    await page.get_by_test_id("send").click()
    await expect(page.get_by_text("The third answer.")).to_be_visible()
    assert await distance_from_end(page) < 5
    assert page.errors == []  # type: ignore[attr-defined]


async def server_note(page: Page) -> None:
    """Something new in the transcript that the person did not send: a note added by the page itself."""
    await page.evaluate(
        "() => document.querySelector('[data-testid=transcript]').append(document.createElement('div'))"
    )
    await page.wait_for_timeout(100)
