"""Web UI fixtures: Debian's chromium driven by Playwright, against a real server process and the mock LLM."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright, expect

from cowork.testing.core import TEST_TOOLS_PLUGIN
from cowork.testing.mockllm import MockLLMServer
from cowork.testing.server import ServerProcess, provider_env

CHROMIUM = Path("/usr/bin/chromium")
HAVE_CHROMIUM = CHROMIUM.exists()
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "web"

# Auto-waiting assertions; generous because two cores are shared with other test processes.
expect.set_options(timeout=20_000)


@pytest.fixture
def artifacts() -> Path:
    """Where the screenshots go (gitignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def server(tmp_path: Path, workspace: Path, mock_llm: MockLLMServer) -> Iterator[ServerProcess]:
    env = provider_env("openai", mock_llm.openai_base_url) | {
        "COWORK_TOOLS__PLUGINS": json.dumps([TEST_TOOLS_PLUGIN]),
        "COWORK_TOOLS__AUTO_APPROVE": json.dumps(["sleep"]),
        "COWORK_TEST_MARKS": str(tmp_path / "marks.txt"),
    }
    process = ServerProcess(tmp_path / "home", workspace, env=env)
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    if not HAVE_CHROMIUM:
        pytest.skip(f"{CHROMIUM} is not installed (scripts/_system_packages.sh installs it with apt where it can)")
    async with async_playwright() as playwright:
        # Root in a container has no user namespaces for chromium's own sandbox; the page is our own UI.
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        launched = await playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=args)
        yield launched
        await launched.close()


@pytest.fixture
async def context(browser: Browser) -> AsyncIterator[BrowserContext]:
    ctx = await browser.new_context(viewport={"width": 1280, "height": 800})
    ctx.set_default_timeout(20_000)
    yield ctx
    await ctx.close()


async def open_ui(context: BrowserContext, server: ServerProcess) -> Page:
    """Open the link the CLI prints and wait until the page is connected; JS errors fail the test."""
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors  # type: ignore[attr-defined]
    await page.goto(f"{server.url}/?token={server.token}")
    await page.locator("[data-testid=connection][data-state=open]").wait_for()
    return page
