"""Excel to markdown: a table per sheet with row numbers and column letters, formulas with cached values, caps."""

from __future__ import annotations

from pathlib import Path

import openpyxl  # type: ignore[import-untyped]
import pytest
from openpyxl.utils import get_column_letter  # type: ignore[import-untyped]

from cowork.documents import MAX_CELL_CHARS, MAX_SHEET_COLUMNS, MAX_SHEET_ROWS, _xlsx, convert

from .files import with_cached_value, write_xlsx

BUDGET = """## Sheet "Budget" (A1:C5)
Merged cells: A1:C1 (the value is in the top-left cell).
Formula cells show `=formula → cached value`, or the formula alone when the file cached none.

| row | A | B | C |
| --- | --- | --- | --- |
| 1 | Quarterly budget |  |  |
| 2 | Item | Cost | When |
| 3 | Rent | 1200 | 2024-03-01 |
| 4 | Food | 300.5 | 2024-03-02T14:30:00 |
| 5 | Total\\|all | {formula} |  |"""

NOTES = """## Sheet "Notes" (B2:D4)

| row | B | C | D |
| --- | --- | --- | --- |
| 2 | two<br>lines |  |  |
| 4 |  |  | TRUE |"""


def test_sheets_as_tables_with_cell_references_merged_cells_dates_and_formulas(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    write_xlsx(path)

    document = convert(path)

    # openpyxl saves no cached values (it never calculates), so the formula is shown alone.
    assert document.text == BUDGET.format(formula="=SUM(B3:B4)") + "\n\n" + NOTES
    assert [(part.label, part.line) for part in document.parts] == [('sheet "Budget"', 1), ('sheet "Notes"', 13)]
    assert (document.meta.sheets, document.meta.author) == (2, "Ann")


def test_a_formula_shows_the_value_the_file_cached(tmp_path: Path) -> None:
    path = tmp_path / "saved-by-excel.xlsx"
    write_xlsx(path)
    with_cached_value(path, "SUM(B3:B4)", "1500.5")

    assert convert(path).parts[0].text == BUDGET.format(formula="=SUM(B3:B4) → 1500.5")


def test_xlsm_is_read_without_its_macros(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsm"
    write_xlsx(path)

    assert convert(path).text == BUDGET.format(formula="=SUM(B3:B4)") + "\n\n" + NOTES


def test_rows_and_columns_past_the_caps_are_named_in_a_note(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Big"
    for row in range(1, MAX_SHEET_ROWS + 11):
        sheet.append([row * 100 + column for column in range(1, MAX_SHEET_COLUMNS + 6)])
    path = tmp_path / "big.xlsx"
    workbook.save(path)

    text = convert(path).text
    lines = text.split("\n")

    assert lines[0] == f'## Sheet "Big" (A1:AX{MAX_SHEET_ROWS})'
    assert lines[1] == (
        f"(Not shown: rows after the first {MAX_SHEET_ROWS} non-empty ones (row {MAX_SHEET_ROWS}) and columns after "
        f"AX. The sheet's stated range is A1:BC{MAX_SHEET_ROWS + 10}. To see a given range, query it with a short "
        "Python script through bash (openpyxl), or convert the sheet to CSV and read that.)"
    )
    assert lines[3] == "| row | " + " | ".join(get_column_letter(c) for c in range(1, 51)) + " |"
    assert lines[-1].startswith(f"| {MAX_SHEET_ROWS} | {MAX_SHEET_ROWS * 100 + 1} | ")
    assert lines[-1].endswith(f" | {MAX_SHEET_ROWS * 100 + MAX_SHEET_COLUMNS} |")


def test_empty_rows_and_leading_columns_are_left_out_and_long_cells_cut(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet["C3"] = "x" * (MAX_CELL_CHARS + 5)
    sheet["D40"] = 0.1 + 0.2
    workbook.create_sheet("Blank")
    path = tmp_path / "sparse.xlsx"
    workbook.save(path)

    assert convert(path).text == (
        '## Sheet "Sheet" (C3:D40)\n\n| row | C | D |\n| --- | --- | --- |\n'
        f"| 3 | {'x' * MAX_CELL_CHARS} [... 5 more characters] |  |\n"
        "| 40 |  | 0.3 |\n\n"
        '## Sheet "Blank" (empty)'
    )


def test_a_workbook_too_large_to_load_whole_is_streamed_without_its_merge_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "book.xlsx"
    write_xlsx(path)
    monkeypatch.setattr(_xlsx, "MERGED_CELLS_LOAD_LIMIT", 0)

    text = convert(path).parts[0].text

    assert text.split("\n")[1] == "(Merged cells are not marked: the workbook is too large to load whole.)"
    assert "| 3 | Rent | 1200 | 2024-03-01 |" in text
