"""PDF to text: pages marked, scanned pages named, encryption handled, pages capped."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowork.documents import MAX_PDF_PAGES, DocumentError, convert

from .files import encrypted_pdf, pdf_bytes


def test_pages_are_marked_and_a_page_without_text_says_so(tmp_path: Path) -> None:
    path = tmp_path / "report.pdf"
    path.write_bytes(pdf_bytes([["Hello world", "Second line (x)"], [], ["Page three"]]))

    document = convert(path)

    assert document.kind == "pdf"
    assert document.text == (
        "--- page 1 ---\nHello world\nSecond line (x)\n\n"
        "--- page 2 ---\n"
        "[No extractable text on this page: it is probably a scanned image, which would need OCR to read.]\n\n"
        "--- page 3 ---\nPage three"
    )
    assert [(part.label, part.line) for part in document.parts] == [("page 1", 1), ("page 2", 5), ("page 3", 8)]
    assert document.parts[2].text == "--- page 3 ---\nPage three"
    assert document.meta.pages == 3
    assert document.meta.omitted == ()


def test_a_pdf_with_no_text_at_all_is_called_scanned(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(pdf_bytes([[], []]))

    document = convert(path)

    assert len(document.meta.omitted) == 1
    assert "No page has extractable text" in document.meta.omitted[0] and "OCR" in document.meta.omitted[0]
    assert document.text.endswith(f"(Note: {document.meta.omitted[0]})")


def test_encryption_with_an_empty_user_password_is_opened(tmp_path: Path) -> None:
    path = tmp_path / "locked-for-editing.pdf"
    path.write_bytes(encrypted_pdf([["Secret text"]], user_password=""))

    assert convert(path).text == "--- page 1 ---\nSecret text"


def test_a_password_protected_pdf_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "locked.pdf"
    path.write_bytes(encrypted_pdf([["Secret text"]], user_password="pw"))

    with pytest.raises(DocumentError, match="encrypted with a password"):
        convert(path)


def test_pages_past_the_cap_are_counted_not_read(tmp_path: Path) -> None:
    path = tmp_path / "long.pdf"
    path.write_bytes(pdf_bytes([[f"page {n}"] for n in range(1, MAX_PDF_PAGES + 3)]))

    document = convert(path)

    assert document.meta.pages == MAX_PDF_PAGES + 2
    assert len(document.parts) == MAX_PDF_PAGES
    assert document.parts[-1].text == f"--- page {MAX_PDF_PAGES} ---\npage {MAX_PDF_PAGES}"
    assert document.meta.omitted == (
        f"Only the first {MAX_PDF_PAGES} of {MAX_PDF_PAGES + 2} pages were converted. To read the rest, extract "
        "those pages to a new PDF first (for example with `pdfseparate` or `qpdf --pages` through bash) and read that.",
    )


def test_a_truncated_pdf_is_a_document_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.pdf"
    path.write_bytes(pdf_bytes([["Hello"]])[:60])

    with pytest.raises(DocumentError, match=r"Could not read this PDF: it is corrupt"):
        convert(path)
