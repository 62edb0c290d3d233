"""Undo and rewind in the browser: `/undo` and the header's Undo show the diff in a dialog first (Cancel and Esc change
nothing), then put the file back; a message's Rewind offers the files, the conversation or both, and Both goes on in
a new session with the message in the composer and the folder as it was; files changed outside Cowork are named
before they are overwritten; server text (paths, diffs) is shown as text; at a wide and a narrow width."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, BrowserContext, Page, expect

from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step
from cowork.testing.server import ServerProcess

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

NOTES = "alpha\nbeta\n"
ODD = "<img src=x onerror=alert(1)>.txt"  # a real file name; shown as text, never as an image


async def turn(page: Page, text: str, answer: str, approvals: int) -> None:
    """Send a message, approve each change the model asks to make, and wait for the answer."""
    composer = page.get_by_test_id("composer")
    await composer.fill(text)
    await composer.press("Enter")
    for _ in range(approvals):
        await page.get_by_test_id("approval").get_by_test_id("approve").click()
    await expect(page.get_by_test_id("assistant-message").last).to_have_text(answer)
    await expect(page.get_by_test_id("send")).to_have_text("Send")


async def command(page: Page, text: str) -> None:
    composer = page.get_by_test_id("composer")
    await composer.fill(text)
    await composer.press("Enter")


async def test_undo_shows_the_diff_and_asks_first(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, workspace: Path, artifacts: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text(NOTES, encoding="utf-8")
    mock_llm.set_script(
        [
            tool_step("write", filePath=ODD, content="<b>not bold</b>\n"),
            tool_step("edit", filePath="notes.txt", oldString="beta", newString="BETA"),
            MockResponse(text="Edited."),
        ]
    )
    page = await open_ui(context, server)
    await command(page, "/undo")
    await expect(page.get_by_text("Nothing to undo: no session yet.")).to_be_visible()
    await turn(page, "tidy", "Edited.", approvals=2)
    assert notes.read_text(encoding="utf-8") == "alpha\nBETA\n"

    dialog = page.get_by_role("dialog")
    # Cancel and Esc leave everything as it is.
    for leave in ("click", "Escape"):
        await command(page, "/undo")
        await expect(dialog).to_be_visible()
        await expect(dialog.get_by_test_id("dialog-cancel")).to_be_focused()
        if leave == "click":
            await dialog.get_by_test_id("dialog-cancel").click()
        else:
            await page.keyboard.press("Escape")
        await expect(dialog).to_have_count(0)
        assert notes.read_text(encoding="utf-8") == "alpha\nBETA\n"

    await page.get_by_test_id("undo").click()  # the header's Undo: the same dialog
    await expect(dialog).to_have_accessible_name("Undo the agent's last change?")
    await expect(dialog).to_contain_text("The edit call during your message 1")
    file = dialog.get_by_test_id("restore-file")
    await expect(file).to_have_count(1)
    await expect(file).to_have_attribute("data-path", "notes.txt")
    await expect(file).to_have_attribute("data-status", "modified")
    await expect(file.locator(".diff-del")).to_have_text("-BETA")
    await expect(file.locator(".diff-add")).to_have_text("+beta")
    await expect(dialog.get_by_test_id("restore-conflicts")).to_have_count(0)
    await page.screenshot(path=str(artifacts / "undo-dialog-1280.png"))
    await dialog.get_by_test_id("restore-undo").click()
    await expect(dialog).to_have_count(0)
    await expect(page.get_by_test_id("toast").filter(has_text="Undone: 1 file back as it was.")).to_be_visible()
    assert notes.read_text(encoding="utf-8") == NOTES
    # Every client sees it in the transcript (the server's log line).
    await expect(page.get_by_test_id("note-log")).to_have_text(
        "Took back the last change (edit): notes.txt is as before."
    )

    # One change further back: the file with the odd name, its name and content shown as text.
    await command(page, "/undo")
    odd = dialog.get_by_test_id("restore-file")
    await expect(odd).to_have_attribute("data-status", "deleted")
    await expect(odd.locator(".diff-file code")).to_have_text(ODD)
    await expect(odd.locator(".diff-del")).to_have_text("-<b>not bold</b>")
    await expect(dialog.locator("img, b")).to_have_count(0)
    await dialog.get_by_test_id("restore-undo").click()
    await expect(page.get_by_test_id("note-log")).to_have_count(2)
    assert not (workspace / ODD).exists()

    await command(page, "/undo")
    await expect(
        page.get_by_test_id("toast").filter(has_text="Nothing to undo: this session has no change")
    ).to_be_visible()
    await expect(dialog).to_have_count(0)
    assert page.errors == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(("width", "height"), [(1400, 900), (420, 800)])
async def test_rewind_both_goes_on_in_a_new_session_with_the_files_as_they_were(
    browser: Browser,
    server: ServerProcess,
    mock_llm: MockLLMServer,
    workspace: Path,
    artifacts: Path,
    width: int,
    height: int,
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text(NOTES, encoding="utf-8")
    long_lines = "".join(f"line {i}: {'word ' * 30}\n" for i in range(40))  # wide and long: the dialog scrolls
    mock_llm.set_script(
        [
            tool_step("write", filePath="plan/today.md", content=long_lines),
            MockResponse(text="One."),
            tool_step("edit", filePath="notes.txt", oldString="beta", newString="BETA"),
            MockResponse(text="Two."),
        ]
    )
    context = await browser.new_context(viewport={"width": width, "height": height})
    try:
        page = await open_ui(context, server)
        await turn(page, "write the plan", "One.", approvals=1)
        await turn(page, "shout beta", "Two.", approvals=1)
        notes.write_text("alpha\nBETA\nmine\n", encoding="utf-8")  # changed outside Cowork since
        source = page.url

        first = page.get_by_test_id("user-message").first
        await first.hover()
        await expect(first.get_by_test_id("rewind-here")).to_be_visible()
        await page.screenshot(path=str(artifacts / f"undo-rewind-button-{width}.png"))
        # A long transcript scrolls inside the chat; the composer stays in the window.
        await expect(page.get_by_test_id("composer")).to_be_in_viewport(ratio=1)
        assert await page.evaluate("document.documentElement.scrollHeight") <= height
        await first.get_by_test_id("rewind-here").click()
        dialog = page.get_by_role("dialog")
        await expect(dialog).to_have_accessible_name("Rewind to before your message 1?")
        await expect(dialog.get_by_test_id("rewind-message")).to_have_text("write the plan")
        files = dialog.get_by_test_id("restore-file")
        await expect(files).to_have_count(2)
        await expect(dialog.locator('[data-path="plan/today.md"]')).to_have_attribute("data-status", "deleted")
        await expect(dialog.locator('[data-path="notes.txt"] .diff-add')).to_have_text("+beta")
        conflicts = dialog.get_by_test_id("restore-conflicts")
        await expect(conflicts).to_contain_text("Changed outside Cowork since — rewinding the files overwrites that:")
        await expect(conflicts.locator("li")).to_have_text("notes.txt")
        await expect(dialog.get_by_test_id("dialog-cancel")).to_be_focused()
        # The whole dialog fits the window; its body scrolls instead.
        box = await dialog.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width and box["height"] <= height
        for testid in ("rewind-files", "rewind-conversation", "rewind-both", "dialog-cancel"):
            await expect(dialog.get_by_test_id(testid)).to_be_in_viewport()
        assert await page.evaluate("document.documentElement.scrollWidth") <= width
        await page.screenshot(path=str(artifacts / f"undo-rewind-dialog-{width}.png"))

        await dialog.get_by_test_id("rewind-both").click()
        await expect(dialog).to_have_count(0)
        composer = page.get_by_test_id("composer")
        await expect(composer).to_have_value("write the plan")
        await expect(composer).to_be_focused()
        await expect(page.get_by_test_id("user-message")).to_have_count(0)
        assert page.url != source
        await expect(
            page.get_by_test_id("toast").filter(has_text="Rewound. Files: 2 files back as they were.")
        ).to_be_visible()
        assert notes.read_text(encoding="utf-8") == NOTES  # forced: the dialog named the file
        assert not (workspace / "plan").exists()
        await expect(page.get_by_test_id("session-item")).to_have_count(2)  # the rewound one stays
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        await context.close()


async def test_rewind_files_stays_and_errors_change_nothing(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, workspace: Path, artifacts: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text(NOTES, encoding="utf-8")
    mock_llm.set_script(
        [
            MockResponse(text="Nothing changed."),
            tool_step("write", filePath="b.txt", content="b\n"),
            MockResponse(text="Wrote b."),
        ]
    )
    page = await open_ui(context, server)
    await turn(page, "just talk", "Nothing changed.", approvals=0)
    await turn(page, "write b", "Wrote b.", approvals=1)
    source = page.url

    await command(page, "/rewind 7")
    await expect(
        page.get_by_test_id("toast").filter(has_text="Could not rewind: This session has 2 message(s)")
    ).to_be_visible()
    await command(page, "/rewind x")
    await expect(page.get_by_text("Usage: /rewind")).to_be_visible()
    dialog = page.get_by_role("dialog")
    await expect(dialog).to_have_count(0)

    await command(page, "/rewind")  # before the last message: only Files keeps this session
    await expect(dialog).to_have_accessible_name("Rewind to before your message 2?")
    await expect(dialog.locator('[data-path="b.txt"]')).to_have_attribute("data-status", "deleted")
    await dialog.get_by_test_id("rewind-files").click()
    await expect(page.get_by_test_id("note-log")).to_have_text("Took back the last change (write): b.txt is as before.")
    assert not (workspace / "b.txt").exists()
    assert page.url == source
    await expect(page.get_by_test_id("composer")).to_have_value("")

    # Nothing changed since the first message now: only the conversation can go back.
    await page.get_by_test_id("user-message").first.hover()
    await page.get_by_test_id("rewind-here").first.click()
    await expect(dialog).to_contain_text("No file changes since then.")
    await expect(dialog.get_by_test_id("restore-file")).to_have_count(0)
    await expect(dialog.get_by_test_id("rewind-files")).to_be_disabled()
    await expect(dialog.get_by_test_id("rewind-both")).to_be_disabled()
    await page.screenshot(path=str(artifacts / "undo-rewind-nothing-1280.png"))
    await dialog.get_by_test_id("rewind-conversation").click()
    await expect(page.get_by_test_id("composer")).to_have_value("just talk")
    assert page.url != source
    assert notes.read_text(encoding="utf-8") == NOTES
    assert page.errors == []  # type: ignore[attr-defined]
