"""Word documents to markdown: headings, lists and tables in document order, one part per heading."""

from __future__ import annotations

import zipfile
from pathlib import Path

import docx
import pytest

from cowork.documents import DocumentError, convert

from .files import write_docx


def test_body_in_document_order_with_headings_lists_and_tables(tmp_path: Path) -> None:
    path = tmp_path / "plan.docx"
    write_docx(path)

    document = convert(path)

    assert document.kind == "docx"
    assert document.text == (
        "# Plan\n\nIntro paragraph.\n\n"
        "# Scope\n\n- First\n- Second\n\nBetween the lists.\n\n1. Step one\n2. Step two\n\nBefore the table.\n\n"
        "| Name | Cost\\|EUR | Note |\n| --- | --- | --- |\n| Rent | 1200 | monthly |\n| Food | 300 |  |\n\n"
        "After the table.\n\n"
        "## Details\n\nDeep."
    )
    assert [(part.label, part.line) for part in document.parts] == [
        ("section 1: Plan", 1),
        ("section 2: Scope", 5),
        ("section 3: Details", 24),
    ]
    lines = document.text.split("\n")
    assert [lines[part.line - 1] for part in document.parts] == ["# Plan", "# Scope", "## Details"]
    assert (document.meta.title, document.meta.author, document.meta.words) == ("Plan", "Ann", 29)


def test_text_before_the_first_heading_is_an_untitled_section(tmp_path: Path) -> None:
    path = tmp_path / "memo.docx"
    document = docx.Document()
    document.add_paragraph("No heading here.")
    document.add_paragraph("Nor here.")
    document.save(str(path))

    converted = convert(path)

    assert converted.text == "No heading here.\n\nNor here."
    assert [(part.label, part.title) for part in converted.parts] == [("section 1", None)]


def test_an_empty_document_has_no_parts(tmp_path: Path) -> None:
    path = tmp_path / "empty.docx"
    docx.Document().save(str(path))

    converted = convert(path)

    assert (converted.text, converted.parts) == ("", ())


def test_a_zip_that_is_not_a_word_document_is_a_document_error(tmp_path: Path) -> None:
    path = tmp_path / "fake.docx"

    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "not a document")

    with pytest.raises(DocumentError, match=r"Could not read this Word document \(\.docx\): it is corrupt"):
        convert(path)
