"""`build_preview` on real files: page images, cell grids, markdown, slide outlines, and what it refuses."""

from __future__ import annotations

import io
import shutil
import struct
from pathlib import Path
from typing import cast

import openpyxl  # type: ignore[import-untyped]
import pytest
from PIL import Image

from cowork.documents import DocumentError, build_preview, preview_kind
from cowork.documents._preview import MAX_PREVIEW_PAGES, MAX_PREVIEW_ROWS, PAGE_WIDTH

from .files import pdf_bytes, write_docx, write_pptx, write_xlsx


def _png_size(png: bytes) -> tuple[int, int]:
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def test_kinds_follow_the_extension() -> None:
    assert [preview_kind(n) for n in ["a.PDF", "b.xlsm", "c.csv", "d.txt", "e"]] == ["pdf", "xlsx", "csv", None, None]


def test_pdf_pages_are_drawn(tmp_path: Path) -> None:
    path = tmp_path / "r.pdf"
    path.write_bytes(pdf_bytes([["Hello"], []]))
    preview = build_preview(path)
    assert (preview.kind, preview.summary, preview.note) == ("pdf", "2 pages", None)
    assert preview.size_bytes == path.stat().st_size
    width, height = _png_size(preview.pages[0].png)
    assert width == PAGE_WIDTH and abs(height - 792 * PAGE_WIDTH / 612) <= 1
    # The first page has dark text on it; the empty second page is all white.
    # (darkest, lightest) of each page drawn in one grey band
    first, second = (
        cast("tuple[int, int]", Image.open(io.BytesIO(p.png)).convert("L").getextrema()) for p in preview.pages
    )
    assert first[0] < 128 and second == (255, 255)


def test_only_the_first_pages_are_drawn(tmp_path: Path) -> None:
    path = tmp_path / "long.pdf"
    path.write_bytes(pdf_bytes([[f"page {n}"] for n in range(MAX_PREVIEW_PAGES + 2)]))
    preview = build_preview(path)
    assert len(preview.pages) == MAX_PREVIEW_PAGES and preview.summary == f"{MAX_PREVIEW_PAGES + 2} pages"
    assert preview.note == f"The first {MAX_PREVIEW_PAGES} of {MAX_PREVIEW_PAGES + 2} pages are shown."


def test_workbook_sheets_as_grids(tmp_path: Path) -> None:
    path = tmp_path / "b.xlsx"
    write_xlsx(path)
    preview = build_preview(path)
    assert preview.summary == "2 sheets: Budget (A1:C5), Notes (B2:D4)"
    budget, notes = preview.sheets
    assert budget.rows == (
        ("Quarterly budget", "", ""),
        ("Item", "Cost", "When"),
        ("Rent", "1200", "2024-03-01"),
        ("Food", "300.5", "2024-03-02 14:30"),
        ("Total|all", "=SUM(B3:B4)", ""),  # openpyxl caches no value: the formula is shown
    )
    assert notes.rows[1][1] == "two\nlines" and notes.rows[3][3] == "True" and not notes.truncated


def test_big_sheets_are_cut_and_say_so(tmp_path: Path) -> None:
    path = tmp_path / "big.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Data"
    for _ in range(MAX_PREVIEW_ROWS + 10):
        sheet.append(list(range(40)))
    for extra in ("Two", "Three", "Four"):
        workbook.create_sheet(extra)
    workbook.save(path)
    preview = build_preview(path)
    data = preview.sheets[0]
    assert data.truncated and len(data.rows) == MAX_PREVIEW_ROWS and len(data.rows[0]) == 30
    assert data.range == f"A1:AN{MAX_PREVIEW_ROWS + 10}"
    assert preview.summary == f"4 sheets: Data (A1:AN{MAX_PREVIEW_ROWS + 10}), Two (empty), Three (empty), …"


def test_csv_as_one_sheet(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('name,amount\n"Smith, Ann",3\nBob\n', encoding="utf-8")
    preview = build_preview(path)
    assert preview.summary == "3 rows × 2 columns"
    assert preview.sheets[0].range == "A1:B3"
    assert preview.sheets[0].rows == (("name", "amount"), ("Smith, Ann", "3"), ("Bob", ""))


def test_word_as_markdown(tmp_path: Path) -> None:
    path = tmp_path / "d.docx"
    write_docx(path)
    preview = build_preview(path)
    assert preview.kind == "docx" and preview.markdown is not None
    assert preview.markdown.startswith("# Plan\n\nIntro paragraph.")
    assert preview.summary.endswith(" words")


def test_slides_as_an_outline_without_libreoffice(tmp_path: Path) -> None:
    path = tmp_path / "s.pptx"
    write_pptx(path)
    preview = build_preview(path, find_soffice=False)
    assert preview.summary == "3 slides" and preview.pages == ()
    first = preview.slides[0]
    assert (first.number, first.title, first.notes) == (1, "Hello", "Say hi")
    assert "Point one" in first.text and "Notes" not in first.text
    assert preview.note is not None and "LibreOffice" in preview.note


def test_a_failing_soffice_falls_back_to_the_outline(tmp_path: Path) -> None:
    path = tmp_path / "s.pptx"
    write_pptx(path)
    preview = build_preview(path, soffice="/bin/false")
    assert preview.pages == () and len(preview.slides) == 3
    assert preview.note == "LibreOffice did not draw the slides; the outline is shown."


@pytest.mark.skipif(
    shutil.which("soffice") is None, reason="LibreOffice is not installed (scripts/_system_packages.sh installs it)"
)
def test_slides_are_drawn_through_libreoffice(tmp_path: Path) -> None:
    path = tmp_path / "s.pptx"
    write_pptx(path)
    preview = build_preview(path)
    assert [p.number for p in preview.pages] == [1, 2, 3] and len(preview.slides) == 3  # images and the outline
    width, height = _png_size(preview.pages[0].png)
    assert width == PAGE_WIDTH and 0.5 < height / width < 0.8  # a 4:3 or 16:9 slide
    assert preview.note is None


def test_refusals(tmp_path: Path) -> None:
    text = tmp_path / "a.txt"
    text.write_text("x", encoding="utf-8")
    with pytest.raises(DocumentError, match="has no preview"):
        build_preview(text)
    fake = tmp_path / "fake.pdf"
    fake.write_bytes(b"not a pdf")
    with pytest.raises(DocumentError, match="Could not open this PDF"):
        build_preview(fake)
    big = tmp_path / "big.pdf"
    with open(big, "wb") as handle:
        handle.truncate(51 * 1024 * 1024)
    with pytest.raises(DocumentError, match="previews are made of files up to 50 MB"):
        build_preview(big)
