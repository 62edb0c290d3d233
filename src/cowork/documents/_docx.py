"""Word (.docx) to markdown with python-docx: body paragraphs and tables in document order.

Headings (`Title`, `Heading N` styles) become `#` lines and start a new part; list paragraphs (`List …` styles or
Word numbering) become `-` or `1.` items; tables become markdown tables where they stand. Headers, footers,
footnotes, comments and images are not converted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import docx
from docx.table import Table, _Cell
from docx.text.paragraph import Paragraph

from ._builder import DocumentBuilder
from ._markdown import clean_text, table
from ._model import Document, DocumentMeta

__all__ = ["convert_docx"]

_HEADING = re.compile(r"heading (\d)", re.IGNORECASE)
_LEVEL_SUFFIX = re.compile(r" (\d)$")


def convert_docx(path: Path, checkpoint: Callable[[], None]) -> Document:
    """Convert a Word document's body to markdown, one part per heading section."""
    document = docx.Document(str(path))
    body = _Body(DocumentBuilder("docx"))
    for index, item in enumerate(document.iter_inner_content()):
        if index % 200 == 0:
            checkpoint()
        if not body.add(item):
            break
    body.flush()
    properties = document.core_properties
    return body.builder.build(
        DocumentMeta(words=body.words, title=properties.title or None, author=properties.author or None)
    )


class _Body:
    """The body being written: blocks of the current section, which a heading closes into a part."""

    def __init__(self, builder: DocumentBuilder) -> None:
        self.builder = builder
        self.words = 0
        self._title: str | None = None
        self._blocks: list[str] = []
        self._in_list = False
        self._numbers: dict[int, int] = {}  # list level -> last number, for numbered lists

    def add(self, item: Paragraph | Table) -> bool:
        """Write one body element; False once the builder takes no more text."""
        if isinstance(item, Table):
            self._end_list()
            rows = _table_rows(item)
            rendered = table(rows)
            if rendered:
                self._blocks.append(rendered)
                self.words += sum(len(cell.split()) for row in rows for cell in row)
            return True
        text = clean_text(item.text)
        if not text.strip():
            return True
        self.words += len(text.split())
        level = _heading_level(item)
        if level is not None:
            self._end_list()
            if not self.flush():
                return False
            self._title = " ".join(text.split())
            self._blocks.append("#" * level + " " + self._title)
            return True
        prefix = _list_prefix(item, self._numbers)
        if prefix is None:
            self._end_list()
            self._blocks.append(text)
        elif self._in_list:
            self._blocks[-1] += "\n" + prefix + " ".join(text.split())
        else:
            self._blocks.append(prefix + " ".join(text.split()))
            self._in_list = True
        return True

    def flush(self) -> bool:
        """Close the current section into a part; False once the builder takes no more text."""
        if not self._blocks:
            return True
        text = "\n\n".join(self._blocks)
        self._blocks.clear()
        return self.builder.add("section", self._title, text)

    def _end_list(self) -> None:
        self._in_list = False
        self._numbers.clear()


def _heading_level(paragraph: Paragraph) -> int | None:
    name = _style_name(paragraph)
    if name.lower() == "title":
        return 1
    match = _HEADING.fullmatch(name)
    return min(int(match.group(1)), 6) if match else None


def _style_name(paragraph: Paragraph) -> str:
    try:
        style = paragraph.style
    except (KeyError, ValueError):
        return ""  # a style id the styles part does not define
    return (style.name or "") if style is not None else ""


def _list_prefix(paragraph: Paragraph, numbers: dict[int, int]) -> str | None:
    """The markdown marker (indented by level) for a list paragraph; None for any other paragraph."""
    name = _style_name(paragraph)
    # Word numbering set on the paragraph itself (numId 0 means "numbering removed").
    numbered: list[Any] = paragraph._p.xpath("./w:pPr/w:numPr[not(w:numId/@w:val='0')]")
    if not name.lower().startswith("list") and not numbered:
        return None
    level = 0
    levels: list[Any] = numbered[0].xpath("./w:ilvl/@w:val") if numbered else []
    if levels and str(levels[0]).isdigit():
        level = min(int(levels[0]), 8)
    elif match := _LEVEL_SUFFIX.search(name):
        level = int(match.group(1)) - 1
    indent = "  " * level
    if "number" not in name.lower():
        return indent + "- "
    for deeper in [key for key in numbers if key > level]:
        del numbers[deeper]
    numbers[level] = numbers.get(level, 0) + 1
    return f"{indent}{numbers[level]}. "


def _table_rows(source: Table) -> list[list[str]]:
    """The table's cells as text; a cell spanning several grid columns or rows has its text once, in its first."""
    rows: list[list[str]] = []
    above: list[object] = []
    for row in source.rows:
        cells: list[str] = [""] * row.grid_cols_before
        seen: list[object] = [None] * row.grid_cols_before
        previous: object = None
        for cell in row.cells:
            tc = cell._tc
            column = len(cells)
            repeated = tc is previous or (column < len(above) and above[column] is tc)
            cells.append("" if repeated else _cell_text(cell))
            seen.append(tc)
            previous = tc
        rows.append(cells)
        above = seen
    return rows


def _cell_text(cell: _Cell) -> str:
    return "\n".join(_cell_lines(cell)).strip()


def _cell_lines(cell: _Cell) -> Iterator[str]:
    for item in cell.iter_inner_content():
        if isinstance(item, Table):
            # A table inside a cell: its rows, cells separated by semicolons (a markdown cell holds no table).
            for row in _table_rows(item):
                yield "; ".join(text for text in row if text)
        else:
            yield clean_text(item.text)
