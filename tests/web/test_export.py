"""`/export`, `/delete` and `/search` in the browser: the session downloads as Markdown or JSON, named after its title; a
deletion asks first; a search result opens its session; plan mode shows as a badge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.async_api import BrowserContext, Dialog, expect

from cowork.testing.mockllm import MockLLMServer, MockResponse
from cowork.testing.server import ServerProcess

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_export_downloads_the_session(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, tmp_path: Path
) -> None:
    mock_llm.set_script([MockResponse(text="Plans are **ready**.")])
    page = await open_ui(context, server)
    composer = page.get_by_test_id("composer")
    await composer.fill("/export")
    await composer.press("Enter")
    await expect(page.get_by_text("Nothing to export yet")).to_be_visible()
    await composer.fill("Weekly plan")
    await composer.press("Enter")
    await expect(page.get_by_test_id("assistant-message").last).to_contain_text("Plans are ready.")
    await composer.fill("/title Weekly  plan, v2")
    await composer.press("Enter")
    await expect(page.get_by_test_id("session-header")).to_contain_text("Weekly plan, v2")
    for words, name in (("/export", "weekly-plan-v2.md"), ("/export json", "weekly-plan-v2.json")):
        await composer.fill(words)
        async with page.expect_download() as waiting:
            await composer.press("Enter")
        download = await waiting.value
        assert download.suggested_filename == name
        saved = tmp_path / name
        await download.save_as(saved)
        content = saved.read_text(encoding="utf-8")
        if name.endswith(".md"):
            assert content.startswith("# Weekly plan, v2\n") and "## Cowork\n\nPlans are **ready**." in content
        else:
            assert json.loads(content)["format"] == "cowork.session"
    await expect(page.get_by_test_id("note-export").last).to_contain_text("as json: weekly-plan-v2.json")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_delete_asks_then_removes_the_session(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text="Noted.")])
    page = await open_ui(context, server)
    composer = page.get_by_test_id("composer")
    await composer.fill("Doomed notes")
    await composer.press("Enter")
    await expect(page.get_by_test_id("assistant-message").last).to_have_text("Noted.")
    await expect(page.get_by_test_id("send")).to_have_text("Send")
    items = page.get_by_test_id("session-item")
    await expect(items.filter(has_text="Doomed notes")).to_have_count(1)
    answers = iter([False, True])
    asked: list[str] = []

    async def answer(dialog: Dialog) -> None:
        asked.append(dialog.message)
        await (dialog.accept() if next(answers) else dialog.dismiss())

    page.on("dialog", answer)
    await composer.fill("/delete")
    await composer.press("Enter")
    await expect(page.get_by_text("Nothing was deleted.")).to_be_visible()
    await composer.fill("/delete")
    await composer.press("Enter")
    await expect(items.filter(has_text="Doomed notes")).to_have_count(0)
    assert len(asked) == 2 and asked[0].startswith("Delete “Doomed notes” (2 messages) for good?")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_search_opens_the_session_found(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text="The kumquat is noted.")])
    page = await open_ui(context, server)
    composer = page.get_by_test_id("composer")
    await composer.fill("remember the kumquat")
    await composer.press("Enter")
    await expect(page.get_by_test_id("assistant-message").last).to_have_text("The kumquat is noted.")
    await page.get_by_test_id("new-session").click()
    await expect(page.get_by_test_id("assistant-message")).to_have_count(0)
    await composer.fill("/search kumquat")
    await composer.press("Enter")
    hits = page.get_by_test_id("search-hit")
    await expect(hits).to_have_count(2)  # the question and the answer
    await expect(hits.first.locator("mark")).to_have_text("kumquat")
    await hits.first.click()
    await expect(page.get_by_test_id("assistant-message").last).to_have_text("The kumquat is noted.")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_plan_mode_badge(context: BrowserContext, server: ServerProcess) -> None:
    page = await open_ui(context, server)
    composer = page.get_by_test_id("composer")
    await composer.fill("/plan on")
    await composer.press("Enter")
    await expect(page.get_by_test_id("plan-badge")).to_have_text("plan mode")
    await expect(page.get_by_text("Plan mode on: only tools that change nothing run").last).to_be_visible()
    await composer.fill("/plan off")
    await composer.press("Enter")
    await expect(page.get_by_test_id("plan-badge")).to_have_count(0)
    assert page.errors == []  # type: ignore[attr-defined]


async def test_fork_from_a_message_and_with_the_command(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text="One."), MockResponse(text="Two."), MockResponse(text="Two, again.")])
    page = await open_ui(context, server)
    composer = page.get_by_test_id("composer")
    for text, answer in (("first ask", "One."), ("second ask", "Two.")):
        await composer.fill(text)
        await composer.press("Enter")
        await expect(page.get_by_test_id("assistant-message").last).to_have_text(answer)
        await expect(page.get_by_test_id("send")).to_have_text("Send")
    source = page.url
    await page.get_by_test_id("user-message").nth(1).hover()
    await page.get_by_test_id("fork-here").nth(1).click()
    # The new session holds the first exchange; the second message waits in the composer, to change and send.
    await expect(page.get_by_test_id("session-header")).to_contain_text("first ask (fork)")
    await expect(page.get_by_test_id("user-message")).to_have_count(1)
    await expect(composer).to_have_value("second ask")
    assert page.url != source
    await composer.fill("second ask, differently")
    await composer.press("Enter")
    await expect(page.get_by_test_id("assistant-message").last).to_have_text("Two, again.")
    items = page.get_by_test_id("session-item")
    await expect(items.filter(has_text="(fork)")).to_have_count(1)

    await composer.fill("/fork x")
    await composer.press("Enter")
    await expect(page.get_by_text("Usage: /fork")).to_be_visible()
    await composer.fill("/fork")
    await composer.press("Enter")
    await expect(page.get_by_test_id("user-message")).to_have_count(2)  # a copy of all of it
    await expect(composer).to_have_value("")
    await expect(items.filter(has_text="(fork)")).to_have_count(2)
    assert page.errors == []  # type: ignore[attr-defined]


async def test_import_brings_back_an_exported_session(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, tmp_path: Path
) -> None:
    mock_llm.set_script([MockResponse(text="Stored.")])
    page = await open_ui(context, server)
    composer = page.get_by_test_id("composer")
    await composer.fill("keep the blue door")
    await composer.press("Enter")
    await expect(page.get_by_test_id("assistant-message").last).to_have_text("Stored.")
    await expect(page.get_by_test_id("send")).to_have_text("Send")
    await composer.fill("/export json")
    async with page.expect_download() as waiting:
        await composer.press("Enter")
    saved = tmp_path / "export.json"
    await (await waiting.value).save_as(saved)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}', encoding="utf-8")
    for path in (bad, saved):
        await composer.fill("/import")
        async with page.expect_file_chooser() as choosing:
            await composer.press("Enter")
        await (await choosing.value).set_files(str(path))
    await expect(page.get_by_text("Could not import bad.json: This is not a Cowork session export")).to_be_visible()
    await expect(page.get_by_text("Imported “keep the blue door”")).to_be_visible()
    items = page.get_by_test_id("session-item")
    await expect(items.filter(has_text="keep the blue door")).to_have_count(2)
    await expect(page.get_by_test_id("user-message").locator(".text")).to_have_text("keep the blue door")
    await expect(page.get_by_test_id("assistant-message")).to_have_text("Stored.")
    assert page.errors == []  # type: ignore[attr-defined]
