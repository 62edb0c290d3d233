"""An answer's sources in the browser (a real server, the real local embedder, the mock LLM): the Sources block under
the answer, numbered once each across the operation with a badge for how a passage was found; a click shows the
passage (or says it is gone once its file was indexed again); file names and headings with markup stay text; the
block comes back from the log when the page is reloaded."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step
from cowork.testing.server import ServerProcess, provider_env

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MARKUP = "<img src=x onerror=alert(1)>"
LEAVE = "# Holiday policy\n\nEmployees get twenty-five days of paid vacation per year. Unused days expire in March.\n"
CARRY = f"# {MARKUP} Carry-over\n\nUnused vacation days carry over <b>only</b> with a manager's approval.\n"


@pytest.fixture
def server(tmp_path: Path, workspace: Path, mock_llm: MockLLMServer) -> Iterator[ServerProcess]:
    (workspace / "docs" / "leave.md").write_text(LEAVE, encoding="utf-8")
    (workspace / "docs" / f"{MARKUP}.md").write_text(CARRY, encoding="utf-8")
    env = provider_env("openai", mock_llm.openai_base_url) | {"COWORK_MEMORY__CONTEXT": "auto"}
    with ServerProcess(tmp_path / "home", workspace, env=env) as process:
        yield process


async def index(server: ServerProcess) -> None:
    client = await EventClient.connect(server.address)
    try:
        job = await client.call("ingest/add", {"paths": ["docs"]})
        for _ in range(1200):
            if (await client.call("ingest/status", {"jobId": job["jobId"]}))["jobs"][0]["status"] == "done":
                return
            await asyncio.sleep(0.1)
        raise AssertionError("indexing did not finish")
    finally:
        await client.close()


async def ask(page: Page, text: str) -> None:
    await page.get_by_test_id("composer").fill(text)
    await page.get_by_test_id("composer").press("Enter")


async def check_sources(page: Page) -> None:
    """The first answer's block: under it, each passage once, the markup as text; a second answer's of its own."""
    first, second = page.get_by_test_id("sources").nth(0), page.get_by_test_id("sources").nth(1)
    entries = first.get_by_test_id("source")
    await expect(entries).to_have_count(2)  # context found both; the agent's search found them again: once each
    await expect(entries.locator(".source-number")).to_have_text(["1", "2"])
    labels = await entries.locator(".source-label").all_inner_texts()
    assert sorted(labels) == [f"docs/{MARKUP}.md › {MARKUP} Carry-over", "docs/leave.md › Holiday policy"]
    await expect(first.get_by_test_id("source-badge")).to_have_count(0)  # found for this message
    assert await first.locator("img").count() == 0
    # Under the answer it belongs to: the turn's final answer comes right before it.
    assert await first.evaluate("el => el.previousElementSibling.textContent.trim()") == "Twenty-five days a year."
    again = second.get_by_test_id("source").filter(has_text="docs/leave.md")
    await expect(again.get_by_test_id("source-badge")).to_have_text("earlier answer")


async def test_an_answers_sources_show_their_passages_and_come_back_after_a_reload(
    browser: Browser, server: ServerProcess, mock_llm: MockLLMServer, artifacts: Path
) -> None:
    await index(server)
    mock_llm.set_script(
        [
            tool_step("searchDocuments", query="vacation days carry over"),
            MockResponse(text="Twenty-five days a year."),
            MockResponse(text="Unused days expire in March."),
        ]
    )
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    alerts: list[str] = []
    try:
        page = await open_ui(context, server)
        page.on("dialog", lambda dialog: alerts.append(dialog.message))
        await ask(page, "How many vacation days do employees get?")
        await expect(page.get_by_test_id("assistant-message").last).to_have_text("Twenty-five days a year.")
        await ask(page, "Tell me more about that one.")
        await expect(page.get_by_test_id("assistant-message").last).to_have_text("Unused days expire in March.")
        await check_sources(page)
        await page.screenshot(path=str(artifacts / "sources-1400.png"))

        leave = page.get_by_test_id("sources").first.get_by_test_id("source").filter(has_text="leave.md")
        await leave.click()
        dialog = page.get_by_test_id("passage-dialog")
        await expect(dialog.get_by_test_id("passage-where")).to_have_text("docs/leave.md › Holiday policy")
        await expect(dialog.get_by_test_id("passage-text")).to_contain_text("Employees get twenty-five days")
        await dialog.get_by_test_id("dialog-cancel").click()
        await expect(dialog).to_have_count(0)
        markup = page.get_by_test_id("sources").first.get_by_test_id("source").filter(has_text="Carry-over")
        await markup.click()
        await expect(dialog.get_by_test_id("passage-where")).to_have_text(f"docs/{MARKUP}.md › {MARKUP} Carry-over")
        await expect(dialog.get_by_test_id("passage-text")).to_contain_text("carry over <b>only</b> with")
        assert await dialog.locator("img, b").count() == 0
        await page.screenshot(path=str(artifacts / "sources-passage-1400.png"))
        await dialog.get_by_test_id("dialog-cancel").click()

        await page.reload()  # the transcript, sources included, is rebuilt from the session's log
        await page.locator("[data-testid=connection][data-state=open]").wait_for()
        await check_sources(page)

        (Path(server.workspace) / "docs" / "leave.md").write_text(LEAVE.replace("twenty-five", "thirty"), "utf-8")
        await index(server)  # the passage the answer was given is replaced
        await page.get_by_test_id("sources").first.get_by_test_id("source").filter(has_text="leave.md").click()
        await expect(dialog.get_by_test_id("passage-gone")).to_contain_text("indexed again")
        await page.screenshot(path=str(artifacts / "sources-gone-1400.png"))
        await dialog.get_by_test_id("dialog-cancel").click()
        assert alerts == [] and page.errors == []  # type: ignore[attr-defined]
    finally:
        await context.close()


async def test_the_sources_fit_a_narrow_window(
    browser: Browser, server: ServerProcess, mock_llm: MockLLMServer, artifacts: Path
) -> None:
    await index(server)
    mock_llm.set_script([MockResponse(text="Twenty-five days a year.")])
    context = await browser.new_context(viewport={"width": 420, "height": 800})
    try:
        page = await open_ui(context, server)
        await ask(page, "How many vacation days do employees get?")
        sources = page.get_by_test_id("sources")
        await expect(sources.get_by_test_id("source")).to_have_count(2)
        await page.screenshot(path=str(artifacts / "sources-420.png"))
        assert await page.evaluate("document.documentElement.scrollWidth") <= 420
        for entry in await sources.get_by_test_id("source").all():
            box = await entry.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 420
        await sources.get_by_test_id("source").first.click()
        dialog = page.get_by_test_id("passage-dialog")
        await expect(dialog.get_by_test_id("passage-text")).to_be_visible()
        box = await dialog.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 420
        await page.screenshot(path=str(artifacts / "sources-passage-420.png"))
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        await context.close()
