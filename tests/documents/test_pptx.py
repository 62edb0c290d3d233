"""PowerPoint to markdown: a part per slide with its title, shapes in reading order, tables and speaker notes."""

from __future__ import annotations

from pathlib import Path

import pptx
from pptx.util import Inches

from cowork.documents import convert

from .files import write_pptx


def test_slides_with_titles_bullets_tables_and_notes(tmp_path: Path) -> None:
    path = tmp_path / "deck.pptx"
    write_pptx(path)

    document = convert(path)

    assert document.kind == "pptx"
    assert document.text == (
        "## Slide 1: Hello\n\nPoint one\n  Sub point\n\nNotes: Say hi\n\n"
        "## Slide 2: Numbers\n\n| Key | Value |\n| --- | --- |\n| x | 1 |\n\n"
        "## Slide 3\n\nUntitled slide text"
    )
    assert [(part.label, part.title, part.line) for part in document.parts] == [
        ("slide 1: Hello", "Hello", 1),
        ("slide 2: Numbers", "Numbers", 8),
        ("slide 3", None, 14),
    ]
    assert document.meta.slides == 3


def test_shapes_are_read_top_to_bottom_then_left_to_right_groups_included(tmp_path: Path) -> None:
    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[6])
    slide.shapes.add_textbox(Inches(1), Inches(4), Inches(2), Inches(1)).text_frame.text = "bottom"
    slide.shapes.add_textbox(Inches(5), Inches(1), Inches(2), Inches(1)).text_frame.text = "top right"
    group = slide.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(2), Inches(2), Inches(1)).text_frame.text = "grouped"
    slide.shapes.add_textbox(Inches(1), Inches(1), Inches(2), Inches(1)).text_frame.text = "top left"
    path = tmp_path / "order.pptx"
    presentation.save(str(path))

    assert convert(path).text == "## Slide 1\n\ntop left\n\ntop right\n\ngrouped\n\nbottom"
