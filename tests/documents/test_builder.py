"""Assembling parts: line numbers of each part, notes at the end, and the text budget."""

from __future__ import annotations

from cowork.documents import DocumentMeta
from cowork.documents._builder import DocumentBuilder


def test_parts_are_joined_by_a_blank_line_and_know_their_first_line() -> None:
    builder = DocumentBuilder("pptx")
    assert builder.add("slide", "One", "## Slide 1: One\nbody\n")
    assert builder.add("slide", None, "## Slide 2")
    builder.note("something was left out")

    document = builder.build(DocumentMeta(slides=2))

    assert document.text == "## Slide 1: One\nbody\n\n## Slide 2\n\n(Note: something was left out)"
    assert [(part.number, part.line, part.label) for part in document.parts] == [
        (1, 1, "slide 1: One"),
        (2, 4, "slide 2"),
    ]
    assert document.meta == DocumentMeta(slides=2, omitted=("something was left out",))


def test_the_part_that_spends_the_budget_is_cut_at_a_line_and_is_the_last() -> None:
    builder = DocumentBuilder("pdf", budget=50)
    assert builder.add("page", None, "--- page 1 ---\nshort")
    assert not builder.add("page", None, "--- page 2 ---\n" + "long line\n" * 10)
    assert not builder.add("page", None, "--- page 3 ---\nnever")

    document = builder.build(DocumentMeta(pages=3))

    assert [part.number for part in document.parts] == [1, 2]
    assert document.parts[1].text == (
        "--- page 2 ---\nlong line\n[... the rest of this page was left out: the converted text reached its cap]"
    )
    assert document.meta.omitted == (
        "Conversion stopped at 50 characters of text; later pages were left out. "
        "Work on a copy split into smaller files to read the rest.",
    )
