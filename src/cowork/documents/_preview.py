"""Previews of documents for people: PDF pages as PNG images, sheets as cell grids, Word as markdown, slides.

Where `convert` makes text for a model, `build_preview` makes what a client shows a person who wants to see what
the agent made: the first pages of a PDF drawn by PDFium (`pypdfium2`), each sheet's top-left cells, a Word
document's markdown, each slide's title, text and notes (and, when LibreOffice's `soffice` is installed, the
slides drawn as images through a PDF it makes). It shares the converter's guards: the size cap here, the zip
check, and the caps of `_limits`. Blocking and CPU-bound: call it from a worker thread.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ._formats import convert, format_for
from ._limits import MAX_CELL_CHARS, check_zip
from ._model import DocumentError

__all__ = [
    "MAX_PREVIEW_BYTES",
    "MAX_PREVIEW_COLUMNS",
    "MAX_PREVIEW_PAGES",
    "MAX_PREVIEW_ROWS",
    "PREVIEW_KINDS",
    "PagePreview",
    "Preview",
    "PreviewKind",
    "SheetPreview",
    "SlidePreview",
    "build_preview",
    "preview_kind",
]

PreviewKind = Literal["pdf", "docx", "xlsx", "pptx", "csv"]
PREVIEW_KINDS: dict[str, PreviewKind] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".pptx": "pptx",
    ".csv": "csv",
}
"""File extensions (lowercase) that have a preview, and the kind each is."""

MAX_PREVIEW_BYTES = 50 * 1024 * 1024
"""Files larger than this are refused before they are opened."""
MAX_PREVIEW_PAGES = 10
"""PDF pages (or slides drawn through LibreOffice) drawn as images."""
PAGE_WIDTH = 800
"""Width in pixels a page is drawn at; its height follows the page's shape."""
MAX_PREVIEW_ROWS = 200
MAX_PREVIEW_COLUMNS = 30
"""Rows and columns of a sheet (or a CSV file) sent, from A1."""
MAX_PREVIEW_SHEETS = 20
MAX_MARKDOWN_CHARS = 200_000
SOFFICE_TIMEOUT = 60.0
"""Seconds LibreOffice may take to turn a presentation into a PDF."""
_SUMMARY_SHEETS = 3


@dataclass(frozen=True, slots=True)
class SheetPreview:
    """The top-left cells of one sheet (or of a CSV file), row 1 column A first."""

    name: str
    range: str
    """The cells the sheet uses, as `A1:D40` (`empty` for a sheet with none)."""
    rows: tuple[tuple[str, ...], ...]
    truncated: bool
    """More rows or columns than `rows` holds."""


@dataclass(frozen=True, slots=True)
class PagePreview:
    number: int
    png: bytes


@dataclass(frozen=True, slots=True)
class SlidePreview:
    number: int
    title: str | None
    text: str
    notes: str


@dataclass(frozen=True, slots=True)
class Preview:
    """What a client shows of one file; which fields are set depends on `kind`."""

    kind: PreviewKind
    size_bytes: int
    summary: str
    """One line: `2 sheets: Budget (A1:C5), Notes (B2:D4)`, `12 slides`, `4 pages`, `1,204 words`."""
    sheets: tuple[SheetPreview, ...] = ()
    markdown: str | None = None
    pages: tuple[PagePreview, ...] = ()
    slides: tuple[SlidePreview, ...] = ()
    note: str | None = None
    """What was left out and why (pages past the cap, no slide images without LibreOffice)."""


def preview_kind(name: str | Path) -> PreviewKind | None:
    """The preview kind a file name's extension asks for, or None when there is no preview for it."""
    return PREVIEW_KINDS.get(Path(name).suffix.lower())


def build_preview(path: Path, *, soffice: str | None = None, find_soffice: bool = True) -> Preview:
    """Build the preview of one file, chosen by its extension.

    Args:
        path: The file, already checked to be one the caller may read.
        soffice: LibreOffice's `soffice` program, to draw slides; looked up on PATH when None and `find_soffice`.
        find_soffice: Whether to look `soffice` up on PATH.

    Returns:
        The preview.

    Raises:
        DocumentError: not a previewable kind, too large, corrupt, or refused by a converter's guard.
        OSError: the file cannot be read.
    """
    kind = preview_kind(path)
    if kind is None:
        known = ", ".join(PREVIEW_KINDS)
        raise DocumentError(f"{path.suffix or 'A file without an extension'} has no preview (only {known}).")
    size = path.stat().st_size
    if size > MAX_PREVIEW_BYTES:
        raise DocumentError(
            f"{path.name} is {size / 1024 / 1024:,.1f} MB; previews are made of files up to "
            f"{MAX_PREVIEW_BYTES // 1024 // 1024} MB."
        )
    if kind == "pdf":
        return _pdf(path, size)
    if kind == "xlsx":
        return _xlsx(path, size)
    if kind == "csv":
        return _csv(path, size)
    if kind == "docx":
        return _docx(path, size)
    if kind == "pptx":
        if soffice is None and find_soffice:
            soffice = shutil.which("soffice") or shutil.which("libreoffice")
        return _pptx(path, size, soffice)
    raise AssertionError(kind)  # pragma: no cover - every kind is handled above


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


# -- PDF ---------------------------------------------------------------------------------------------------------


def _png(bitmap: Any) -> bytes:
    """A rendered page as PNG bytes (Pillow's encoder)."""
    buffer = io.BytesIO()
    bitmap.to_pil().save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue()


def _render_pdf(path: Path, label: str) -> tuple[int, tuple[PagePreview, ...]]:
    """The PDF's page count and its first pages drawn `PAGE_WIDTH` pixels wide."""
    import pypdfium2  # type: ignore[import-untyped,unused-ignore]  # loads PDFium: only when a PDF is drawn

    try:
        document = pypdfium2.PdfDocument(str(path))
    except pypdfium2.PdfiumError as exc:
        raise DocumentError(f"Could not open this {label}: it is corrupt, encrypted or not a PDF ({exc}).") from None
    try:
        count = len(document)
        pages = []
        for index in range(min(count, MAX_PREVIEW_PAGES)):
            page = document[index]
            try:
                width = page.get_width() or 1
                bitmap = page.render(scale=PAGE_WIDTH / width, may_draw_forms=False)
                try:
                    png = _png(bitmap)
                finally:
                    bitmap.close()
            finally:
                page.close()
            pages.append(PagePreview(index + 1, png))
        return count, tuple(pages)
    finally:
        document.close()


def _pdf(path: Path, size: int) -> Preview:
    count, pages = _render_pdf(path, "PDF")
    note = f"The first {MAX_PREVIEW_PAGES} of {count:,} pages are shown." if count > len(pages) else None
    return Preview("pdf", size, _plural(count, "page"), pages=pages, note=note)


# -- spreadsheets ------------------------------------------------------------------------------------------------


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        text = value.date().isoformat()  # Excel stores dates as datetimes at midnight
    elif isinstance(value, dt.datetime):
        text = value.isoformat(sep=" ", timespec="minutes" if value.second == 0 else "seconds")
    elif isinstance(value, dt.date | dt.time):
        text = value.isoformat()
    elif isinstance(value, float) and value.is_integer():
        text = str(int(value))
    else:
        text = str(value)
    return text if len(text) <= MAX_CELL_CHARS else text[:MAX_CELL_CHARS] + "…"


def _grid(rows: list[list[Any]], convert_cell: Callable[[int, int, Any], str]) -> tuple[tuple[str, ...], ...]:
    width = max((len(row) for row in rows), default=0)
    return tuple(
        tuple(convert_cell(r, c, row[c] if c < len(row) else None) for c in range(width)) for r, row in enumerate(rows)
    )


def _xlsx(path: Path, size: int) -> Preview:
    import openpyxl  # type: ignore[import-untyped]  # openpyxl ships no type hints

    entry = format_for(path)
    assert entry is not None
    with open(path, "rb") as handle:
        if not entry.matches(handle.read(len(entry.magic))):
            raise DocumentError("This is not a valid Excel workbook: it does not start with a ZIP signature.")
    check_zip(path, entry.label)
    try:
        formulas = openpyxl.load_workbook(path, read_only=True, data_only=False, keep_vba=False, keep_links=False)
    except Exception as exc:
        raise DocumentError(f"Could not read this Excel workbook: it is corrupt ({type(exc).__name__}).") from None
    values: Any = None
    try:
        sheets: list[SheetPreview] = []
        worksheets = formulas.worksheets
        for sheet in worksheets[:MAX_PREVIEW_SHEETS]:
            # A read-only sheet knows its size from the file's <dimension> tag; force=True scans when it has none.
            dimension = sheet.calculate_dimension(force=True)
            max_row, max_col = sheet.max_row or 0, sheet.max_column or 0
            raw = [
                list(row)
                for row in sheet.iter_rows(
                    min_row=1,
                    max_row=min(max_row, MAX_PREVIEW_ROWS),
                    max_col=min(max_col, MAX_PREVIEW_COLUMNS),
                    values_only=True,
                )
            ]
            cached: list[list[Any]] = []
            if any(isinstance(v, str) and v.startswith("=") for row in raw for v in row):
                if values is None:
                    values = openpyxl.load_workbook(path, read_only=True, data_only=True, keep_vba=False)
                cached = [
                    list(row)
                    for row in values[sheet.title].iter_rows(
                        min_row=1, max_row=len(raw), max_col=min(max_col, MAX_PREVIEW_COLUMNS), values_only=True
                    )
                ]

            def shown(r: int, c: int, value: Any, cached: list[list[Any]] = cached) -> str:
                # A formula shows the value Excel cached when it saved, or the formula when there is none.
                if isinstance(value, str) and value.startswith("=") and r < len(cached) and c < len(cached[r]):
                    if cached[r][c] is not None:
                        return _cell(cached[r][c])
                return _cell(value)

            empty = max_row == 0 or (
                dimension in {"A1:A1", "A1"} and not any(v is not None for row in raw for v in row)
            )
            truncated = max_row > MAX_PREVIEW_ROWS or max_col > MAX_PREVIEW_COLUMNS
            name = str(sheet.title)
            sheets.append(SheetPreview(name, "empty" if empty else dimension, _grid(raw, shown), truncated))
        listed = ", ".join(f"{s.name} ({s.range})" for s in sheets[:_SUMMARY_SHEETS])
        more = ", …" if len(worksheets) > _SUMMARY_SHEETS else ""
        summary = f"{_plural(len(worksheets), 'sheet')}: {listed}{more}"
        note = None
        if len(worksheets) > MAX_PREVIEW_SHEETS:
            note = f"The first {MAX_PREVIEW_SHEETS} of {len(worksheets)} sheets are shown."
        return Preview("xlsx", size, summary, sheets=tuple(sheets), note=note)
    except DocumentError:
        raise
    except Exception as exc:
        raise DocumentError(f"Could not read this Excel workbook: it is corrupt ({type(exc).__name__}).") from None
    finally:
        formulas.close()
        if values is not None:
            values.close()


def _column_letters(number: int) -> str:
    letters = ""
    while number > 0:
        number, rest = divmod(number - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def _csv(path: Path, size: int) -> Preview:
    rows: list[list[str]] = []
    count = 0
    width = 0
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as handle:
        try:
            for row in csv.reader(handle):
                count += 1
                width = max(width, len(row))
                if count <= MAX_PREVIEW_ROWS:
                    rows.append(row[:MAX_PREVIEW_COLUMNS])
        except csv.Error as exc:
            raise DocumentError(f"Could not read this CSV file: {exc}.") from None
    cells = _grid([list(r) for r in rows], lambda _r, _c, value: _cell(value))
    span = "empty" if count == 0 else f"A1:{_column_letters(max(width, 1))}{count}"
    truncated = count > MAX_PREVIEW_ROWS or width > MAX_PREVIEW_COLUMNS
    sheet = SheetPreview(path.stem, span, cells, truncated)
    summary = f"{_plural(count, 'row')} × {_plural(width, 'column')}"
    return Preview("csv", size, summary, sheets=(sheet,))


# -- Word and PowerPoint -----------------------------------------------------------------------------------------


def _docx(path: Path, size: int) -> Preview:
    document = convert(path)
    markdown = document.text
    note = None
    if len(markdown) > MAX_MARKDOWN_CHARS:
        markdown = markdown[:MAX_MARKDOWN_CHARS]
        note = f"The first {MAX_MARKDOWN_CHARS:,} characters are shown."
    words = document.meta.words if document.meta.words is not None else len(document.text.split())
    summary = _plural(words, "word")
    if document.meta.title:
        summary = f"{document.meta.title} · {summary}"
    return Preview("docx", size, summary, markdown=markdown, note=note)


def _slides_as_pages(path: Path, soffice: str) -> tuple[tuple[PagePreview, ...], str | None]:
    """The slides drawn through a PDF LibreOffice makes in a temporary folder; none (and why) when that fails."""
    with tempfile.TemporaryDirectory(prefix="cowork-preview-") as folder:
        out = Path(folder)
        try:
            subprocess.run(
                [
                    soffice,
                    "--headless",
                    f"-env:UserInstallation={out.as_uri()}/profile",
                    "--convert-to",
                    "pdf",
                    "--outdir",
                    str(out),
                    str(path),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=SOFFICE_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return (), f"LibreOffice took over {SOFFICE_TIMEOUT:.0f} s to draw the slides; the outline is shown."
        except OSError as exc:
            return (), f"LibreOffice could not be run ({exc}); the outline is shown."
        made = out / (path.stem + ".pdf")
        if not made.is_file():
            return (), "LibreOffice did not draw the slides; the outline is shown."
        try:
            _count, pages = _render_pdf(made, "PDF LibreOffice made")
        except DocumentError as exc:
            return (), f"{exc} The outline is shown."
        return pages, None


def _pptx(path: Path, size: int, soffice: str | None) -> Preview:
    document = convert(path)
    slides = []
    for part in document.parts:
        if part.kind != "slide":
            continue
        body = part.text.split("\n", 1)[1] if "\n" in part.text else ""
        text, _, notes = body.partition("\nNotes: ")
        if body.startswith("Notes: "):
            text, notes = "", body[len("Notes: ") :]
        slides.append(SlidePreview(part.number, part.title, text.strip(), notes.strip()))
    count = document.meta.slides if document.meta.slides is not None else len(slides)
    pages: tuple[PagePreview, ...] = ()
    note = None
    if soffice is not None:
        pages, note = _slides_as_pages(path, soffice)
    else:
        note = "Slides are shown as an outline: drawing them needs LibreOffice (soffice), which is not installed."
    return Preview("pptx", size, _plural(count, "slide"), pages=pages, slides=tuple(slides), note=note)
