"""The read tool on documents: converted text with a header line, numbered and paged like a text file; bad files
refused with what to do."""

from __future__ import annotations

from pathlib import Path

import docx
import pytest

from cowork.tools._base import ToolError
from cowork.tools._read import MAX_LINE_CHARS
from tests.tools.test_read import numbered, read  # the read tool as its own tests call it

from .files import encrypted_pdf, pdf_bytes, write_docx, write_pptx, write_xlsx, zip_bomb


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


PAGES = [[f"page {page} line {line}" for line in range(1, 4)] for page in range(1, 5)]
PDF_LINES = [line for page in range(1, 5) for line in [f"--- page {page} ---", *PAGES[page - 1], ""]][
    :-1
]  # four lines a page and a blank line between pages


@pytest.mark.anyio
async def test_a_pdf_is_converted_with_a_header_and_numbered_lines(workspace: Path) -> None:
    (workspace / "report.pdf").write_bytes(pdf_bytes(PAGES))

    out = await read(workspace, filePath="report.pdf")

    assert out == "PDF, 4 pages, converted to text:\n" + numbered(1, PDF_LINES)


@pytest.mark.anyio
async def test_paging_through_a_converted_pdf(workspace: Path) -> None:
    (workspace / "report.pdf").write_bytes(pdf_bytes(PAGES))

    out = await read(workspace, filePath="report.pdf", offset=6, limit=4)

    assert out == (
        "PDF, 4 pages, converted to text:\n"
        + numbered(6, ["--- page 2 ---", "page 2 line 1", "page 2 line 2", "page 2 line 3"])
        + "\n\n(Showing lines 6-9. The converted text has 19 lines in total. Use offset=10 to read more.)"
    )
    assert await read(workspace, filePath="report.pdf", offset=19) == (
        "PDF, 4 pages, converted to text:\n" + numbered(19, ["page 4 line 3"])
    )
    with pytest.raises(
        ToolError, match=r"offset 20 is past the end of the text converted from report\.pdf, which has 19"
    ):
        await read(workspace, filePath="report.pdf", offset=20)


@pytest.mark.anyio
async def test_a_spreadsheet_is_read_as_tables_with_cell_references(workspace: Path) -> None:
    write_xlsx(workspace / "book.xlsx")

    lines = (await read(workspace, filePath="book.xlsx")).split("\n")

    assert lines[0] == "Excel workbook, 2 sheets, each a table of rows and lettered columns, converted to text:"
    assert lines[1] == '     1\t## Sheet "Budget" (A1:C5)'
    assert lines[5:7] == ["     5\t| row | A | B | C |", "     6\t| --- | --- | --- | --- |"]
    assert lines[11] == "    11\t| 5 | Total\\|all | =SUM(B3:B4) |  |"


@pytest.mark.anyio
async def test_word_and_powerpoint_headers(workspace: Path) -> None:
    write_docx(workspace / "plan.docx")
    write_pptx(workspace / "deck.pptx")

    plan = (await read(workspace, filePath="plan.docx", limit=1)).split("\n")
    deck = (await read(workspace, filePath="deck.pptx", limit=1)).split("\n")

    assert plan[:2] == ["Word document, 29 words, titled 'Plan', converted to text:", "     1\t# Plan"]
    assert deck[:2] == ["PowerPoint presentation, 3 slides, converted to text:", "     1\t## Slide 1: Hello"]


@pytest.mark.anyio
async def test_long_document_lines_are_wrapped_not_cut(workspace: Path) -> None:
    document = docx.Document()
    words = " ".join(f"word{n:04d}" for n in range(500))  # 4,499 characters
    document.add_paragraph(words)
    document.save(str(workspace / "long.docx"))

    out = await read(workspace, filePath="long.docx")

    lines = out.split("\n")[1:]
    assert len(lines) == 3 and all(len(line) <= MAX_LINE_CHARS + 7 for line in lines)
    assert " ".join(line.split("\t", 1)[1] for line in lines) == words
    assert "truncated" not in out


@pytest.mark.anyio
async def test_a_document_without_text_says_so(workspace: Path) -> None:
    docx.Document().save(str(workspace / "blank.docx"))

    assert await read(workspace, filePath="blank.docx") == (
        "Word document, 0 words, converted to text:\n(No text was found in blank.docx.)"
    )


@pytest.mark.anyio
async def test_random_bytes_named_like_a_document_are_refused(workspace: Path) -> None:
    (workspace / "notes.docx").write_bytes(bytes(range(256)) * 4)

    with pytest.raises(ToolError) as info:
        await read(workspace, filePath="notes.docx")

    assert str(info.value).startswith(
        "notes.docx is named like a Word document (.docx) but is not one: it does not start with the format's "
        "signature (unknown binary type, 1.0 KiB). It is corrupt or misnamed"
    )


@pytest.mark.anyio
async def test_a_corrupt_container_is_a_tool_error_naming_the_format(workspace: Path) -> None:
    (workspace / "broken.docx").write_bytes(b"PK\x03\x04" + bytes(range(256)) * 4)

    with pytest.raises(
        ToolError, match=r"^Cannot read broken\.docx \(Word document \(\.docx\)\)\. The file is not a valid"
    ):
        await read(workspace, filePath="broken.docx")


@pytest.mark.anyio
async def test_a_zip_bomb_is_a_tool_error(workspace: Path) -> None:
    zip_bomb(workspace / "bomb.docx")

    with pytest.raises(
        ToolError, match=r"^Cannot read bomb\.docx \(Word document \(\.docx\)\)\. Refusing this .*zip bomb"
    ):
        await read(workspace, filePath="bomb.docx")


@pytest.mark.anyio
async def test_a_password_protected_pdf_is_a_tool_error(workspace: Path) -> None:
    (workspace / "locked.pdf").write_bytes(encrypted_pdf([["secret"]], user_password="pw"))

    with pytest.raises(ToolError, match=r"^Cannot read locked\.pdf \(PDF\)\. This PDF is encrypted with a password"):
        await read(workspace, filePath="locked.pdf")


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "target"), [("old.doc", "docx"), ("old.xls", "xlsx"), ("my old.ppt", "pptx")])
async def test_legacy_office_files_are_refused_with_the_libreoffice_command(
    workspace: Path, name: str, target: str
) -> None:
    (workspace / name).write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 1024)

    with pytest.raises(ToolError) as info:
        await read(workspace, filePath=name)

    message = str(info.value)
    assert message.startswith(f"{name} is a legacy ")
    assert f"soffice --headless --convert-to {target} " in message
    assert ("'my old.ppt'" in message) == (name == "my old.ppt")


@pytest.mark.anyio
async def test_text_with_a_document_extension_is_read_as_text(workspace: Path) -> None:
    (workspace / "todo.pdf").write_text("not really a pdf\n", encoding="utf-8")
    (workspace / "draft.doc").write_text("plain text saved as .doc\n", encoding="utf-8")

    assert await read(workspace, filePath="todo.pdf") == "     1\tnot really a pdf"
    assert await read(workspace, filePath="draft.doc") == "     1\tplain text saved as .doc"


@pytest.mark.anyio
async def test_other_binary_files_are_still_refused(workspace: Path) -> None:
    (workspace / "data.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 100)

    with pytest.raises(ToolError, match=r"data\.zip is a binary file \(ZIP archive .*PDF, Word, Excel and PowerPoint"):
        await read(workspace, filePath="data.zip")
