"""Real documents for the tests, written with the same libraries the converter reads them with (and a PDF by hand)."""

from __future__ import annotations

import datetime as dt
import io
import struct
import zipfile
from pathlib import Path

import docx
import openpyxl  # type: ignore[import-untyped]
import pptx
from pptx.util import Inches
from pypdf import PdfReader, PdfWriter


def pdf_bytes(pages: list[list[str]]) -> bytes:
    """A minimal valid PDF: one page per item, each line of text drawn with a Tj operator (an empty page has none)."""
    count = len(pages)
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: f"<< /Type /Pages /Kids [{' '.join(f'{4 + 2 * i} 0 R' for i in range(count))}] /Count {count} >>".encode(),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    for index, lines in enumerate(pages):
        drawn = b"".join(
            b"(" + line.encode("latin-1").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b") Tj "
            b"0 -16 Td "
            for line in lines
        )
        stream = b"BT /F1 12 Tf 72 720 Td " + drawn + b"ET" if lines else b""
        objects[4 + 2 * index] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents " + f"{5 + 2 * index} 0 R >>".encode()
        )
        objects[5 + 2 * index] = f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream"
    out = bytearray(b"%PDF-1.4\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += f"{number} 0 obj\n".encode() + objects[number] + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offsets[number]:010d} 00000 n \n".encode() for number in sorted(objects))
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def encrypted_pdf(pages: list[list[str]], *, user_password: str) -> bytes:
    """The PDF of `pdf_bytes`, encrypted (AES-128); an empty user password means anyone can open it."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(pages))))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="AES-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def write_xlsx(path: Path) -> None:
    """Two sheets: a budget with a merged title, dates, a pipe in a cell and a formula; notes with a gap."""
    workbook = openpyxl.Workbook()
    budget = workbook.active
    budget.title = "Budget"
    budget["A1"] = "Quarterly budget"
    budget.merge_cells("A1:C1")
    budget.append(["Item", "Cost", "When"])
    budget.append(["Rent", 1200, dt.date(2024, 3, 1)])
    budget.append(["Food", 300.5, dt.datetime(2024, 3, 2, 14, 30)])
    budget["A5"] = "Total|all"
    budget["B5"] = "=SUM(B3:B4)"
    notes = workbook.create_sheet("Notes")
    notes["B2"] = "two\nlines"
    notes["D4"] = True
    workbook.properties.creator = "Ann"
    workbook.save(path)


def with_cached_value(path: Path, formula: str, value: str) -> None:
    """Give the formula cell the value Excel would have cached (openpyxl writes none)."""
    members = _members(path)
    sheet = members["xl/worksheets/sheet1.xml"]
    members["xl/worksheets/sheet1.xml"] = sheet.replace(
        f"<f>{formula}</f><v></v>".encode(), f"<f>{formula}</f><v>{value}</v>".encode()
    )
    _rewrite(path, members)


def write_docx(path: Path) -> None:
    """Title, headings, a bullet and a numbered list, and a table between two paragraphs."""
    document = docx.Document()
    document.core_properties.title = "Plan"
    document.core_properties.author = "Ann"
    document.add_heading("Plan", 0)
    document.add_paragraph("Intro paragraph.")
    document.add_heading("Scope", 1)
    document.add_paragraph("First", style="List Bullet")
    document.add_paragraph("Second", style="List Bullet")
    document.add_paragraph("Between the lists.")
    document.add_paragraph("Step one", style="List Number")
    document.add_paragraph("Step two", style="List Number")
    document.add_paragraph("Before the table.")
    grid = document.add_table(rows=3, cols=3)
    for column, text in enumerate(["Name", "Cost|EUR", "Note"]):
        grid.cell(0, column).text = text
    grid.cell(1, 0).text = "Rent"
    grid.cell(1, 1).text = "1200"
    grid.cell(2, 0).text = "Food"
    grid.cell(2, 1).text = "300"
    grid.cell(1, 2).merge(grid.cell(2, 2)).text = "monthly"
    document.add_paragraph("After the table.")
    document.add_heading("Details", 2)
    document.add_paragraph("Deep.")
    document.save(str(path))


def write_pptx(path: Path) -> None:
    """A title and bullets with speaker notes, then a slide with a table, then one without a title."""
    presentation = pptx.Presentation()
    first = presentation.slides.add_slide(presentation.slide_layouts[1])
    assert first.shapes.title is not None
    first.shapes.title.text = "Hello"
    body = first.placeholders[1].text_frame
    body.text = "Point one"
    sub = body.add_paragraph()
    sub.text = "Sub point"
    sub.level = 1
    first.notes_slide.notes_text_frame.text = "Say hi"
    second = presentation.slides.add_slide(presentation.slide_layouts[5])
    assert second.shapes.title is not None
    second.shapes.title.text = "Numbers"
    grid = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    for (row, column), text in {(0, 0): "Key", (0, 1): "Value", (1, 0): "x", (1, 1): "1"}.items():
        grid.cell(row, column).text = text
    third = presentation.slides.add_slide(presentation.slide_layouts[6])
    box = third.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1))
    box.text_frame.text = "Untitled slide text"
    presentation.save(str(path))


def zip_bomb(path: Path, member: str = "word/document.xml", size: int = 20 * 1024 * 1024) -> None:
    """A .docx-shaped ZIP whose one member inflates from a few KiB of deflated zeros to `size` bytes."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open(member, "w") as handle:
            chunk = b"\0" * (1024 * 1024)
            for _ in range(size // len(chunk)):
                handle.write(chunk)


def declare_size(path: Path, member: str, size: int) -> None:
    """Make the ZIP directory lie about `member`'s unpacked size (its data stays as it is)."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    at = data.find(b"PK\x01\x02")
    while at != -1:
        name_length = struct.unpack_from("<H", data, at + 28)[0]
        if bytes(data[at + 46 : at + 46 + name_length]) == name:
            struct.pack_into("<I", data, at + 24, size)
            path.write_bytes(bytes(data))
            return
        at = data.find(b"PK\x01\x02", at + 4)
    raise AssertionError(f"{member} is not in {path}")


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _rewrite(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
