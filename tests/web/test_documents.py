"""Documents the agent made, in the browser: a chip per file under the tool card, a Preview dialog (a sheet as a
table with column letters and row numbers, a PDF page as an image) and a Download that saves the file's bytes; at a
wide and a narrow width."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import openpyxl  # type: ignore[import-untyped]  # openpyxl ships no type hints
import pytest
from playwright.async_api import BrowserContext, Page, expect

from cowork.testing.mockllm import MockLLMServer, MockResponse, bash_step, tool_step
from cowork.testing.server import ServerProcess
from tests.documents.files import pdf_bytes

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def make_workbook(path: Path) -> None:
    """A workbook the turn's command copies into place: the sandbox cannot run Cowork's own Python when it lives
    under /tmp (the sandbox's /tmp is its own), as in a clone there."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sales"
    for row in (["Region", "Q1", "Q2"], ["North", 120, 135], ["South", 98, 101]):
        ws.append(row)
    wb.create_sheet("Notes")["A1"] = "Figures in k EUR"
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)


async def turn(page: Page, text: str, answer: str, approvals: int) -> None:
    composer = page.get_by_test_id("composer")
    await composer.fill(text)
    await composer.press("Enter")
    for _ in range(approvals):
        await page.get_by_test_id("approval").get_by_test_id("approve").click()
    await expect(page.get_by_test_id("assistant-message").last).to_have_text(answer)


async def test_chips_preview_and_download(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, workspace: Path, artifacts: Path
) -> None:
    report = pdf_bytes([["Quarterly report", "North grew 12%."], ["Appendix"]])
    make_workbook(workspace / "samples" / "sales.xlsx")
    mock_llm.set_script(
        [
            bash_step("mkdir -p out && cp samples/sales.xlsx out/sales.xlsx"),
            tool_step("write", filePath="report.pdf", content=report.decode("latin-1")),
            MockResponse(text="Made both."),
        ]
    )
    page = await open_ui(context, server)
    await turn(page, "make the files", "Made both.", approvals=2)
    assert (workspace / "out" / "sales.xlsx").is_file()

    chips = page.get_by_test_id("doc-chip")
    await expect(chips).to_have_count(2)
    await expect(chips.first).to_contain_text("XLSXsales.xlsx — Preview·Download")
    await expect(chips.last).to_contain_text("report.pdf")
    assert not page.errors  # type: ignore[attr-defined]

    # The workbook: tabs per sheet, a table with column letters and row numbers.
    await chips.first.get_by_test_id("doc-preview-open").click()
    dialog = page.get_by_test_id("doc-dialog")
    await expect(dialog).to_be_visible()
    await expect(dialog.get_by_test_id("doc-summary")).to_contain_text("2 sheets: Sales (A1:C3), Notes (A1:A1)")
    table = dialog.get_by_test_id("doc-table")
    await expect(table.locator("thead th")).to_have_text(["", "A", "B", "C"])
    await expect(table.locator("tbody tr").nth(1).locator("th, td")).to_have_text(["2", "North", "120", "135"])
    for width, height in ((1400, 900), (420, 860)):
        await page.set_viewport_size({"width": width, "height": height})
        await page.screenshot(path=str(artifacts / f"documents-sheet-{width}.png"))
    await dialog.get_by_test_id("doc-tab").nth(1).click()
    await expect(table.locator("tbody tr").first.locator("th, td")).to_have_text(["1", "Figures in k EUR"])
    await dialog.get_by_test_id("dialog-cancel").click()
    await expect(dialog).to_have_count(0)

    # The PDF: its pages as images the server drew.
    await page.set_viewport_size({"width": 1400, "height": 900})
    await chips.last.get_by_test_id("doc-preview-open").click()
    await expect(dialog.get_by_test_id("doc-summary")).to_contain_text("2 pages")
    image = dialog.get_by_test_id("doc-page").first.locator("img")
    await expect(image).to_have_attribute("src", re.compile(r"^data:image/png;base64,"))
    await image.scroll_into_view_if_needed()
    await page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=await image.element_handle())
    assert await image.evaluate("img => img.naturalWidth") == 800
    for width, height in ((1400, 900), (420, 860)):
        await page.set_viewport_size({"width": width, "height": height})
        await page.screenshot(path=str(artifacts / f"documents-pdf-{width}.png"))
    # Download from the dialog saves the very bytes.
    async with page.expect_download() as info:
        await dialog.get_by_test_id("doc-dialog-download").click()
    download = await info.value
    assert download.suggested_filename == "report.pdf"
    assert await anyio.Path(await download.path()).read_bytes() == report
    await dialog.get_by_test_id("dialog-cancel").click()

    # And from the chip.
    async with page.expect_download() as info:
        await chips.first.get_by_test_id("doc-download").click()
    download = await info.value
    assert download.suggested_filename == "sales.xlsx"
    saved = await anyio.Path(await download.path()).read_bytes()
    assert saved == await anyio.Path(workspace / "out" / "sales.xlsx").read_bytes()
    await page.screenshot(path=str(artifacts / "documents-chips-420.png"))
    assert not page.errors  # type: ignore[attr-defined]
