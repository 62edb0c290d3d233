"""The views beside the chat: models and providers, MCP servers, usage and budgets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from playwright.async_api import Browser, BrowserContext, expect

from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse
from cowork.testing.server import ServerProcess

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_models_usage_and_budgets(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, artifacts: Path
) -> None:
    mock_llm.set_script([MockResponse(text="hello")])
    page = await open_ui(context, server)
    await page.get_by_test_id("composer").fill("hi")
    await page.get_by_test_id("send").click()
    await expect(page.get_by_test_id("assistant-message")).to_have_text("hello")

    await page.get_by_test_id("tab-models").click()
    await expect(page.get_by_test_id("current-model")).to_contain_text("openai:mock-model")
    openai = page.get_by_test_id("provider-row").filter(has_text="OpenAI").first
    await expect(openai).to_contain_text("env")
    await page.get_by_test_id("model-custom").fill("openai:mock-reasoning-model")
    await page.get_by_test_id("model-use").click()
    await expect(page.get_by_test_id("current-model")).to_contain_text("openai:mock-reasoning-model")
    await expect(page.get_by_test_id("model-chip")).to_have_text("openai:mock-reasoning-model")
    await page.screenshot(path=str(artifacts / "models.png"), full_page=True)

    await page.get_by_test_id("tab-usage").click()
    await expect(page.get_by_test_id("usage-today")).to_contain_text("1 calls")
    await page.get_by_test_id("budget-daily").fill("5")
    await page.get_by_test_id("budget-save").click()
    await expect(page.get_by_test_id("budget-row").filter(has_text="Daily")).to_contain_text("$5.00")
    await page.screenshot(path=str(artifacts / "usage.png"), full_page=True)
    client = await EventClient.connect(server.address)
    try:
        summary = await client.call("usage/summary", {})
        assert {b["cap"]: b.get("limitUsd") for b in summary["budgets"]}["daily"] == 5
    finally:
        await client.close()
    assert page.errors == []  # type: ignore[attr-defined]


async def test_mcp_view(context: BrowserContext, server: ServerProcess, artifacts: Path) -> None:
    client = await EventClient.connect(server.address)
    try:
        methods = (await client.call("initialize", {}))["capabilities"]["methods"]
    finally:
        await client.close()
    page = await open_ui(context, server)
    await page.get_by_test_id("tab-mcp").click()
    if "mcp/list" not in methods:
        await expect(page.get_by_test_id("mcp-unavailable")).to_have_text("MCP not available on this server.")
        await page.screenshot(path=str(artifacts / "mcp.png"))
        return
    await expect(page.get_by_test_id("mcp-view")).to_contain_text("Add a server")
    # A real stdio MCP server from PyPI: its status arrives as mcp/status notifications.
    await page.get_by_test_id("mcp-add-name").fill("time")
    await page.get_by_test_id("mcp-add-target").fill(f"{sys.executable} -m mcp_server_time")
    await page.get_by_test_id("mcp-add").click()
    row = page.locator("[data-testid=mcp-server][data-name=time]")
    await expect(row.get_by_test_id("mcp-status")).to_have_text("running", timeout=60_000)
    await expect(row).to_contain_text("2 tools")
    await page.screenshot(path=str(artifacts / "mcp.png"), full_page=True)
    await row.get_by_test_id("mcp-toggle").click()
    await expect(row.get_by_test_id("mcp-status")).to_have_text("disabled")


@pytest.mark.parametrize(("width", "height"), [(420, 800), (1400, 900)])
async def test_every_view_fits_narrow_and_wide(
    browser: Browser, server: ServerProcess, mock_llm: MockLLMServer, artifacts: Path, width: int, height: int
) -> None:
    """Chat, Documents, Memory, Models, MCP and Usage, each screenshotted at a phone's width and a wide window's: nothing scrolls
    sideways and the view's tab stays reachable."""
    mock_llm.set_script([MockResponse(text="hello")])
    context = await browser.new_context(viewport={"width": width, "height": height})
    try:
        page = await open_ui(context, server)
        await page.get_by_test_id("composer").fill("hi")
        await page.get_by_test_id("send").click()
        await expect(page.get_by_test_id("assistant-message")).to_have_text("hello")
        shown = {
            "chat": "assistant-message",
            "documents": "ingest-start",
            "memory": "memory-view",
            "models": "current-model",
            "mcp": "mcp-view",
            "usage": "usage-today",
        }
        for view, content in shown.items():
            tab = page.get_by_test_id(f"tab-{view}")
            await tab.click()
            await expect(tab).to_be_in_viewport()
            await expect(page.get_by_test_id(content)).to_be_visible()
            await page.screenshot(path=str(artifacts / f"view-{view}-{width}.png"), full_page=True)
            assert await page.evaluate("document.documentElement.scrollWidth") <= width, view
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        await context.close()
