"""The server dies mid-turn: the page reconnects on its own, shows the turn as interrupted, and resumes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import BrowserContext, expect

from cowork.testing.core import marks
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import ServerProcess

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_kill_and_restart_during_a_turn(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, tmp_path: Path, artifacts: Path
) -> None:
    mock_llm.set_script(
        [
            MockResponse(
                text="Sleeping now.", tool_calls=[MockToolCall(name="sleep", arguments={"label": "z", "seconds": 60})]
            ),
            MockResponse(text="resumed and finished"),
        ]
    )
    page = await open_ui(context, server)
    await page.get_by_test_id("composer").fill("sleep a while")
    await page.get_by_test_id("send").click()
    await expect(page.get_by_test_id("stop")).to_be_visible()
    sleep = page.locator("[data-testid=tool-call][data-tool=sleep]")
    await expect(sleep.get_by_test_id("tool-status")).to_have_text("running")
    assert marks(tmp_path / "marks.txt") == ["start z"]

    server.kill()
    await expect(page.locator("[data-testid=connection][data-state=reconnecting]")).to_be_visible()
    await page.screenshot(path=str(artifacts / "reconnecting.png"))
    server.start()

    # Reconnected: only the missed events are replayed (no duplicate transcript), the turn shows as interrupted.
    await expect(page.locator("[data-testid=connection][data-state=open]")).to_be_visible()
    banner = page.get_by_test_id("interrupted-banner")
    await expect(banner).to_be_visible()
    await expect(sleep.get_by_test_id("tool-status")).to_have_text("interrupted")
    await expect(page.get_by_test_id("user-message")).to_have_count(1)
    await page.screenshot(path=str(artifacts / "interrupted.png"))

    await banner.get_by_test_id("resume").click()
    await expect(banner).to_have_count(0)
    # The unfinished call had side effects: it is asked about again, never silently re-run.
    approval = page.get_by_test_id("approval")
    await expect(approval).to_contain_text("Run again after the interruption")
    mock_llm.set_script([MockResponse(text="resumed and finished")])
    await approval.get_by_test_id("reject").click()
    await expect(page.get_by_test_id("assistant-message").last).to_have_text("resumed and finished")
    assert marks(tmp_path / "marks.txt") == ["start z"]
    assert page.errors == []  # type: ignore[attr-defined]
