"""Approvals in the browser: the diff an edit would make, allow for this session, a dangerous call (red, focus on
Reject), a rejected call's card closed as rejected; at a wide and a narrow width."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, BrowserContext, expect

from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step
from cowork.testing.server import ServerProcess

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_an_edit_diff_then_allow_for_session(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, workspace: Path, artifacts: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    mock_llm.set_script(
        [
            tool_step("edit", filePath="notes.txt", oldString="beta", newString="BETA"),
            tool_step("bash", command="touch one.txt", description="t"),
            tool_step("bash", command="touch two.txt", description="t"),
            MockResponse(text="Tidied."),
        ]
    )
    page = await open_ui(context, server)
    await page.get_by_test_id("composer").fill("tidy")
    await page.get_by_test_id("send").click()
    approval = page.get_by_test_id("approval")
    diff = approval.get_by_test_id("approval-diff")
    await expect(diff.locator(".diff-del")).to_have_text("-beta")
    await expect(diff.locator(".diff-add")).to_have_text("+BETA")
    await expect(approval).not_to_contain_text("oldString")  # the diff, not the raw arguments
    await page.screenshot(path=str(artifacts / "approval-diff-1400.png"))
    await approval.get_by_test_id("approve").click()
    allow = page.get_by_test_id("approval").get_by_test_id("allow-session")
    await expect(allow).to_have_text("Allow for session: commands starting with touch")
    await allow.click()
    await expect(page.get_by_test_id("assistant-message").last).to_have_text("Tidied.")
    assert (workspace / "one.txt").exists() and (workspace / "two.txt").exists()
    await expect(page.get_by_test_id("approval")).to_have_count(0)
    # The edit's card shows the change it made.
    edit_card = page.locator('[data-testid="tool-call"][data-tool="edit"]')
    await expect(edit_card.get_by_test_id("result-diff").locator(".diff-add")).to_have_text("+BETA")
    assert page.errors == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(("width", "height"), [(1400, 900), (420, 800)])
async def test_a_dangerous_call_is_red_and_enter_rejects_it(
    browser: Browser,
    server: ServerProcess,
    mock_llm: MockLLMServer,
    workspace: Path,
    artifacts: Path,
    width: int,
    height: int,
) -> None:
    (workspace / "build").mkdir()
    mock_llm.set_script([tool_step("bash", command="rm -rf build", description="t"), MockResponse(text="Kept it.")])
    context = await browser.new_context(viewport={"width": width, "height": height})
    try:
        page = await open_ui(context, server)
        await page.get_by_test_id("composer").fill("clean")
        await page.get_by_test_id("send").click()
        approval = page.get_by_test_id("approval")
        await expect(approval).to_have_class("card approval dangerous")
        await expect(approval).to_contain_text("Dangerous")
        await expect(approval.get_by_test_id("allow-session")).to_have_count(0)
        await expect(approval.get_by_test_id("reject")).to_be_focused()
        await page.screenshot(path=str(artifacts / f"approval-dangerous-{width}.png"))
        assert await page.evaluate("document.documentElement.scrollWidth") <= width
        await page.keyboard.press("Enter")
        await expect(page.get_by_test_id("assistant-message").last).to_have_text("Kept it.")
        await expect(page.get_by_test_id("tool-status").last).to_have_text("rejected")
        assert (workspace / "build").is_dir()
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        await context.close()


async def test_slash_commands_run_in_the_page_and_never_reach_the_model(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, artifacts: Path
) -> None:
    mock_llm.set_script([MockResponse(text="About that path.")])
    page = await open_ui(context, server)
    composer = page.get_by_test_id("composer")
    await composer.fill("/")
    await composer.dispatch_event("input")
    menu = page.get_by_test_id("slash-menu")
    await expect(menu).to_be_visible()
    await expect(menu.get_by_test_id("slash-item").first).to_contain_text("/help")
    await page.screenshot(path=str(artifacts / "slash-menu-1400.png"))
    await composer.fill("/help")
    await composer.press("Enter")
    help_note = page.get_by_test_id("note-help")
    await expect(help_note).to_contain_text("/model [provider:model | auto]")
    await expect(help_note).not_to_contain_text("/mcp")  # the REPL's only
    await composer.fill("/frobnicate")
    await composer.press("Enter")
    await expect(page.get_by_test_id("note-warn").last).to_contain_text("Unknown command /frobnicate")
    assert not mock_llm.requests
    await composer.fill("/usr/bin is slow")  # a path: a message for the model
    await composer.press("Enter")
    await expect(page.get_by_test_id("assistant-message").last).to_have_text("About that path.")
    await composer.fill("/model openai:mock-reasoning-model")
    await composer.press("Enter")
    await expect(page.get_by_test_id("model-chip")).to_have_text("openai:mock-reasoning-model")
    await composer.fill("/network on")
    await composer.press("Enter")
    await expect(page.get_by_test_id("session-header")).to_contain_text("network on")
    assert len(mock_llm.requests) == 1
    assert page.errors == []  # type: ignore[attr-defined]


async def test_compact_from_the_composer(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text="one"), MockResponse(text="two"), MockResponse(text="A summary.")])
    page = await open_ui(context, server)
    composer = page.get_by_test_id("composer")
    await composer.fill("/compact")
    await composer.press("Enter")
    await expect(page.get_by_text("Nothing to compact yet")).to_be_visible()
    for text, answer in (("first", "one"), ("second", "two")):
        await composer.fill(text)
        await composer.press("Enter")
        await expect(page.get_by_test_id("assistant-message").last).to_have_text(answer)
        await expect(page.get_by_test_id("send")).to_have_text("Send")  # the turn is over (not "Steer")
    await composer.fill("/compact keep the numbers")
    await composer.press("Enter")
    await expect(page.get_by_test_id("note-info").last).to_have_text("Context compressed: 3 messages summarised.")
    assert "keep in particular: keep the numbers" in (mock_llm.requests[-1].system or "")
    assert page.errors == []  # type: ignore[attr-defined]
