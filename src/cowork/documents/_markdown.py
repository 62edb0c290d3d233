"""The markdown every converter writes: table rows and cells that cannot break the table."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["cell_text", "clean_text", "table", "table_row"]


def cell_text(text: str) -> str:
    """`text` made safe for one markdown table cell: pipes escaped, line breaks as `<br>`, outer space trimmed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    return text.replace("|", "\\|").replace("\n", "<br>")


def table_row(cells: Sequence[str]) -> str:
    """One table line from already escaped cells."""
    return "| " + " | ".join(cells) + " |" if cells else "|"


def table(rows: Sequence[Sequence[str]]) -> str:
    """A markdown table whose first row is the header; rows are padded to the widest one. Cells are raw text."""
    width = max((len(row) for row in rows), default=0)
    if width == 0:
        return ""
    lines = []
    for index, row in enumerate(rows):
        cells = [cell_text(cell) for cell in row] + [""] * (width - len(row))
        lines.append(table_row(cells))
        if index == 0:
            lines.append(table_row(["---"] * width))
    return "\n".join(lines)


_CONTROLS = {code: None for code in (*range(0, 9), 11, 12, *range(14, 32), 127)}


def clean_text(text: str) -> str:
    """Extracted text tidied: one kind of line break, no control characters, no trailing spaces on a line."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(_CONTROLS)
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")
