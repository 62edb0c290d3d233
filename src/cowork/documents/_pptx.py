"""PowerPoint (.pptx) to markdown with python-pptx: one part per slide.

Each slide is `## Slide N: <title>`, then the text of its shapes in reading order (top to bottom, then left to
right; groups are opened), tables as markdown tables, chart titles, and the speaker notes as `Notes:`.
Pictures and other media are not described.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pptx
from pptx.shapes.autoshape import Shape
from pptx.shapes.base import BaseShape
from pptx.shapes.graphfrm import GraphicFrame
from pptx.shapes.group import GroupShape
from pptx.slide import Slide
from pptx.table import Table
from pptx.text.text import _Paragraph

from ._builder import DocumentBuilder
from ._markdown import clean_text, table
from ._model import Document, DocumentMeta

__all__ = ["convert_pptx"]


def convert_pptx(path: Path, checkpoint: Callable[[], None]) -> Document:
    """Convert every slide's text, tables and notes."""
    presentation = pptx.Presentation(str(path))
    builder = DocumentBuilder("pptx")
    slides = list(presentation.slides)
    for number, slide in enumerate(slides, start=1):
        checkpoint()
        title, text = _slide(slide, number)
        if not builder.add("slide", title, text):
            break
    properties = presentation.core_properties
    return builder.build(
        DocumentMeta(slides=len(slides), title=properties.title or None, author=properties.author or None)
    )


def _slide(slide: Slide, number: int) -> tuple[str | None, str]:
    title_shape = slide.shapes.title
    title = _one_line(title_shape.text_frame.text) if title_shape is not None and title_shape.has_text_frame else ""
    hidden = " (hidden)" if slide._element.get("show") in ("0", "false") else ""
    header = f"## Slide {number}: {title}{hidden}" if title else f"## Slide {number}{hidden}"
    skip = title_shape.shape_id if title_shape is not None else None
    blocks = [header]
    blocks += [block for block in _shapes(slide.shapes, skip) if block]
    notes = _notes(slide)
    if notes:
        blocks.append("Notes: " + notes)
    return title or None, "\n\n".join(blocks)


def _shapes(shapes: Iterable[BaseShape], skip: int | None) -> Iterator[str]:
    """The text of each shape, in reading order."""
    for shape in sorted(shapes, key=lambda s: (s.top or 0, s.left or 0)):
        if shape.shape_id == skip:
            continue
        if isinstance(shape, GroupShape):
            yield from _shapes(shape.shapes, skip)
        elif isinstance(shape, GraphicFrame) and shape.has_table:
            yield table(_table_rows(shape.table))
        elif isinstance(shape, GraphicFrame) and shape.has_chart:
            chart = shape.chart
            name = _one_line(chart.chart_title.text_frame.text) if chart.has_title else ""
            yield f"[Chart: {name}]" if name else "[Chart]"
        elif isinstance(shape, Shape) and shape.has_text_frame:
            yield _paragraphs(shape.text_frame.paragraphs)


def _paragraphs(paragraphs: Iterable[_Paragraph]) -> str:
    """Paragraph texts, indented two spaces per outline level."""
    lines = []
    for paragraph in paragraphs:
        text = clean_text(paragraph.text.replace("\v", "\n"))
        if text.strip():
            indent = "  " * paragraph.level
            lines.append(indent + text.replace("\n", "\n" + indent))
    return "\n".join(lines)


def _table_rows(source: Table) -> list[list[str]]:
    """Cell texts; a merged cell's text is in its first cell only."""
    return [
        ["" if cell.is_spanned else clean_text(cell.text.replace("\v", "\n")) for cell in row.cells]
        for row in source.rows
    ]


def _notes(slide: Slide) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return clean_text(frame.text.replace("\v", "\n")) if frame is not None else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())
