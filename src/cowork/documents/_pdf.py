"""PDF to text with pypdf: one part per page, marked `--- page N ---`.

pypdf bounds what a hostile PDF can make it inflate (each stream stops at 75 MB, `LimitReachedError`); this
module bounds the pages read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError

from ._builder import DocumentBuilder
from ._limits import MAX_PDF_PAGES
from ._markdown import clean_text
from ._model import Document, DocumentError, DocumentMeta

__all__ = ["convert_pdf"]

NO_TEXT = "[No extractable text on this page: it is probably a scanned image, which would need OCR to read.]"


def convert_pdf(path: Path, checkpoint: Callable[[], None]) -> Document:
    """Convert the first `MAX_PDF_PAGES` pages of a PDF to text."""
    reader = PdfReader(path)
    if reader.is_encrypted:
        _decrypt(reader)
    total = len(reader.pages)
    builder = DocumentBuilder("pdf")
    empty = 0
    shown = min(total, MAX_PDF_PAGES)
    for index in range(shown):
        checkpoint()
        text = clean_text(reader.pages[index].extract_text())
        if not text.strip():
            empty += 1
            text = NO_TEXT
        if not builder.add("page", None, f"--- page {index + 1} ---\n{text}"):
            break
    if shown and empty == shown:
        builder.note(
            "No page has extractable text: the PDF is probably scanned images. Reading it needs OCR "
            "(for example `ocrmypdf` or `tesseract` through bash, when installed)."
        )
    if total > shown:
        builder.note(
            f"Only the first {shown} of {total} pages were converted. To read the rest, extract those pages "
            f"to a new PDF first (for example with `pdfseparate` or `qpdf --pages` through bash) and read that."
        )
    title, author = _info(reader)
    return builder.build(DocumentMeta(pages=total, title=title, author=author))


def _decrypt(reader: PdfReader) -> None:
    try:
        result = reader.decrypt("")
    except DependencyError:
        raise DocumentError(
            "This PDF is encrypted with a method that needs the `cryptography` package, which is not installed."
        ) from None
    if result == PasswordType.NOT_DECRYPTED:
        raise DocumentError(
            "This PDF is encrypted with a password, so its text cannot be read. Ask the user for an unlocked copy."
        )


def _info(reader: PdfReader) -> tuple[str | None, str | None]:
    """The title and author the PDF declares; None for what is missing or unreadable."""
    try:
        info = reader.metadata
        if info is None:
            return None, None
        return _plain(info.title), _plain(info.author)
    except Exception:
        # A broken info dictionary costs the title, not the document.
        return None, None


def _plain(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return clean_text(value).replace("\n", " ") or None
