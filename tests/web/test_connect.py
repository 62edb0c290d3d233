"""Connecting a provider from the web UI: the key goes to the server (checked, then kept in its credential store),
never into the page; a failed check saves nothing and says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import BrowserContext, expect

from cowork.testing.mockllm import MockLLMServer
from cowork.testing.server import ServerProcess

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_connect_a_provider_with_a_key_and_a_url(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, artifacts: Path
) -> None:
    page = await open_ui(context, server)
    await page.get_by_role("button", name="Models").click()
    form = page.get_by_test_id("connect-form")
    await form.get_by_test_id("connect-provider").select_option("deepseek")
    await form.get_by_test_id("connect-key").fill("sk-test-from-the-page")
    await form.get_by_test_id("connect-url").fill("http://127.0.0.1:9/v1")  # nothing listens there
    await form.get_by_test_id("connect-save").click()
    await expect(form.get_by_test_id("connect-result")).not_to_have_text("Checking…")
    await expect(page.locator("[data-testid=provider-row][data-provider=deepseek]")).to_contain_text("missing_key")

    await form.get_by_test_id("connect-url").fill(mock_llm.openai_base_url)
    await form.get_by_test_id("connect-key").fill("sk-test-from-the-page")
    await form.get_by_test_id("connect-save").click()
    row = page.locator("[data-testid=provider-row][data-provider=deepseek]")
    await expect(row).not_to_contain_text("missing_key")
    await expect(page.get_by_test_id("connect-key")).to_have_value("")  # not kept in the page
    await page.screenshot(path=str(artifacts / "connect.png"), full_page=True)
    stored = await page.evaluate("JSON.stringify(localStorage) + JSON.stringify(sessionStorage)")
    assert "sk-test-from-the-page" not in stored
    assert page.errors == []  # type: ignore[attr-defined]
