"""Excel (.xlsx, .xlsm) to markdown with openpyxl: one part per worksheet, a table with cell references.

Each sheet is `## Sheet "Name" (A1:D20)`, then a markdown table whose header is the column letters and whose first
column is the row number, so any cell can be named (`B7`). Empty rows are left out (the row numbers say where
they were); at most `MAX_SHEET_ROWS` non-empty rows and `MAX_SHEET_COLUMNS` columns are shown, with a note naming
what was cut.

Formulas and values: cells are streamed twice in read-only mode, once for formulas and, only when the shown range
has formulas, once for the values Excel cached when it last saved. A formula cell shows `=formula → value`, or the
formula alone when there is no cached value (files written by openpyxl and other libraries have none). Nothing is
ever calculated, and macros are never loaded (`keep_vba=False`) or run. Numbers are shown as stored (no number
formats), except dates, which are ISO 8601.

Merged cells: read-only mode streams cells without the sheet's merge list, so the list comes from a full load,
done only for workbooks up to `MERGED_CELLS_LOAD_LIMIT` unpacked (a full load builds every cell in memory).
"""

from __future__ import annotations

import datetime as dt
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openpyxl  # type: ignore[import-untyped]  # openpyxl ships no type hints
from openpyxl.utils import get_column_letter  # type: ignore[import-untyped]
from openpyxl.worksheet.formula import ArrayFormula, DataTableFormula  # type: ignore[import-untyped]

from ._builder import DocumentBuilder
from ._limits import MAX_CELL_CHARS, MAX_SHEET_COLUMNS, MAX_SHEET_ROWS
from ._markdown import cell_text, table_row
from ._model import Document, DocumentMeta

__all__ = ["MERGED_CELLS_LOAD_LIMIT", "convert_xlsx"]

MERGED_CELLS_LOAD_LIMIT = 8 * 1024 * 1024
"""Unpacked size up to which the workbook is also loaded whole, to list its merged cells."""
_MAX_MERGED_LISTED = 100
_CHECKPOINT_EVERY = 1000


@dataclass
class _Sheet:
    """The cells of one sheet within the caps, as read from the formulas workbook."""

    title: str
    rows: list[tuple[int, list[Any]]] = field(default_factory=list)
    """(row number, values of columns 1..MAX_SHEET_COLUMNS) for each non-empty row shown."""
    formulas: set[tuple[int, int]] = field(default_factory=set)
    """(row, column) of the formula cells shown."""
    more_rows: bool = False
    more_columns: bool = False


def convert_xlsx(path: Path, checkpoint: Callable[[], None]) -> Document:
    """Convert every worksheet to a markdown table with row numbers and column letters."""
    merged = _merged_ranges(path) if _unpacked_size(path) <= MERGED_CELLS_LOAD_LIMIT else None
    formulas = _load(path, data_only=False)
    values: Any = None
    try:
        builder = DocumentBuilder("xlsx")
        for sheet in formulas.worksheets:
            checkpoint()
            scanned = _scan(sheet, checkpoint)
            cached: dict[tuple[int, int], Any] = {}
            if scanned.formulas:
                if values is None:
                    values = _load(path, data_only=True)
                cached = _cached_values(values[sheet.title], scanned)
            ranges = None if merged is None else merged.get(sheet.title, [])
            text = _render(sheet, scanned, cached, ranges)
            if not builder.add("sheet", sheet.title, text):
                break
        properties = formulas.properties
        meta = DocumentMeta(
            sheets=len(formulas.worksheets), title=properties.title or None, author=properties.creator or None
        )
    finally:
        formulas.close()
        if values is not None:
            values.close()
    return builder.build(meta)


def _load(path: Path, *, data_only: bool) -> Any:
    return openpyxl.load_workbook(path, read_only=True, data_only=data_only, keep_vba=False, keep_links=False)


def _unpacked_size(path: Path) -> int:
    with zipfile.ZipFile(path) as archive:
        return sum(member.file_size for member in archive.infolist())


def _merged_ranges(path: Path) -> dict[str, list[str]]:
    """Each worksheet's merged ranges (`A1:C1`), from a full load."""
    workbook = openpyxl.load_workbook(path, read_only=False, keep_vba=False, keep_links=False)
    try:
        return {sheet.title: [str(merged) for merged in sheet.merged_cells.ranges] for sheet in workbook.worksheets}
    finally:
        workbook.close()


def _iter_rows(sheet: Any, max_row: int | None = None) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """(row number, cells of columns 1..MAX_SHEET_COLUMNS + 1) from row 1; the extra column shows what is cut."""
    # Read-only sheets yield consecutive rows from min_row, filling the rows missing from the file.
    rows = sheet.iter_rows(min_row=1, max_row=max_row, max_col=MAX_SHEET_COLUMNS + 1)
    return enumerate(rows, start=1)


def _scan(sheet: Any, checkpoint: Callable[[], None]) -> _Sheet:
    scanned = _Sheet(title=str(sheet.title))
    for number, cells in _iter_rows(sheet):
        if number % _CHECKPOINT_EVERY == 0:
            checkpoint()
        shown = cells[:MAX_SHEET_COLUMNS]
        if any(cell.value is not None for cell in cells[MAX_SHEET_COLUMNS:]):
            scanned.more_columns = True
        values = [cell.value for cell in shown]
        if all(value is None for value in values):
            continue
        if len(scanned.rows) == MAX_SHEET_ROWS:
            scanned.more_rows = True
            break
        scanned.rows.append((number, values))
        for column, cell in enumerate(shown, start=1):
            if cell.data_type == "f" or isinstance(cell.value, ArrayFormula | DataTableFormula):
                scanned.formulas.add((number, column))
    return scanned


def _cached_values(sheet: Any, scanned: _Sheet) -> dict[tuple[int, int], Any]:
    """The values Excel cached for the formula cells shown (None where it cached none)."""
    last = max(row for row, _ in scanned.formulas)
    found: dict[tuple[int, int], Any] = {}
    for number, cells in _iter_rows(sheet, max_row=last):
        for column, cell in enumerate(cells[:MAX_SHEET_COLUMNS], start=1):
            if (number, column) in scanned.formulas:
                found[number, column] = cell.value
    return found


def _render(sheet: Any, scanned: _Sheet, cached: dict[tuple[int, int], Any], merged: list[str] | None) -> str:
    hidden = "" if sheet.sheet_state == "visible" else f" ({sheet.sheet_state})"
    if not scanned.rows:
        return f'## Sheet "{scanned.title}"{hidden} (empty)'
    used = [column for _, values in scanned.rows for column, value in enumerate(values, start=1) if value is not None]
    first, last = min(used), max(used)
    top, bottom = scanned.rows[0][0], scanned.rows[-1][0]
    shown = f"{get_column_letter(first)}{top}:{get_column_letter(last)}{bottom}"
    lines = [f'## Sheet "{scanned.title}"{hidden} ({shown})']
    if scanned.more_rows or scanned.more_columns:
        lines.append(_cut_note(sheet, scanned))
    if merged:
        listed = ", ".join(merged[:_MAX_MERGED_LISTED])
        more = f" and {len(merged) - _MAX_MERGED_LISTED} more" if len(merged) > _MAX_MERGED_LISTED else ""
        lines.append(f"Merged cells: {listed}{more} (the value is in the top-left cell).")
    elif merged is None:
        lines.append("(Merged cells are not marked: the workbook is too large to load whole.)")
    if scanned.formulas:
        lines.append("Formula cells show `=formula → cached value`, or the formula alone when the file cached none.")
    lines.append("")
    lines.append(table_row(["row", *(get_column_letter(column) for column in range(first, last + 1))]))
    lines.append(table_row(["---"] * (last - first + 2)))
    for number, values in scanned.rows:
        cells = [str(number)]
        for column in range(first, last + 1):
            value = values[column - 1]
            if (number, column) in scanned.formulas:
                cells.append(cell_text(_formula(value, cached.get((number, column)))))
            else:
                cells.append(cell_text(_display(value)))
        lines.append(table_row(cells))
    return "\n".join(lines)


def _cut_note(sheet: Any, scanned: _Sheet) -> str:
    cut = []
    if scanned.more_rows:
        cut.append(f"rows after the first {MAX_SHEET_ROWS} non-empty ones (row {scanned.rows[-1][0]})")
    if scanned.more_columns:
        cut.append(f"columns after {get_column_letter(MAX_SHEET_COLUMNS)}")
    try:
        declared = f" The sheet's stated range is {sheet.calculate_dimension()}."
    except (ValueError, TypeError):
        declared = ""  # the file does not state its size
    return (
        f"(Not shown: {' and '.join(cut)}.{declared} To see a given range, query it with a short Python script "
        "through bash (openpyxl), or convert the sheet to CSV and read that.)"
    )


def _formula(formula: Any, value: Any) -> str:
    text = _display(formula)
    return text if value is None else f"{text} → {_display(value)}"


def _display(value: Any) -> str:
    """A cell value as text: ISO dates, TRUE/FALSE, numbers as stored, long text cut at `MAX_CELL_CHARS`."""
    text = _plain(value)
    if len(text) > MAX_CELL_CHARS:
        return text[:MAX_CELL_CHARS] + f" [... {len(text) - MAX_CELL_CHARS} more characters]"
    return text


def _plain(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else format(value, ".15g")
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return value.date().isoformat()
        return value.isoformat(timespec="seconds" if not value.microsecond else "auto")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, ArrayFormula):
        return "{" + str(value.text or "") + "}"
    if isinstance(value, DataTableFormula):
        return "[data table]"
    return str(value)
