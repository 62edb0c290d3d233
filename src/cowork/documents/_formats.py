"""The formats the converter reads, one registry entry each, and `convert`, the one way in."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from cowork.lazy import HEAVY_IMPORTS

from ._limits import check_zip
from ._model import Document, DocumentError, DocumentKind

__all__ = [
    "FORMATS",
    "LEGACY_FORMATS",
    "Converter",
    "DocumentFormat",
    "LegacyFormat",
    "convert",
    "format_for",
    "legacy_format_for",
]

Converter = Callable[[Path, Callable[[], None]], Document]
"""A format's converter: the file, and a checkpoint it calls between pages, slides or sheets (to be cancelled)."""

_ERROR_DETAIL_CHARS = 200


@dataclass(frozen=True, slots=True)
class DocumentFormat:
    """A format the converter reads: how it is recognised and where its converter lives."""

    kind: DocumentKind
    label: str
    """How the format is named in messages: `PDF`, `Word document (.docx)`."""
    extensions: tuple[str, ...]
    """Lower-case file extensions, with the dot."""
    magic: bytes
    """What the file starts with."""
    converter: str
    """`module:function` of the converter, imported on first use: the parsing libraries are heavy to load."""
    zipped: bool
    """A ZIP container (Office Open XML), checked for zip bombs before the converter opens it."""

    def matches(self, head: bytes) -> bool:
        """Whether a file starting with `head` has this format's signature."""
        return head.startswith(self.magic)

    def load(self) -> Converter:
        """The converter function (importing its module, and the library it wraps, the first time)."""
        module, _, name = self.converter.partition(":")
        # Worker threads may convert concurrently while the server warms up in another: import under the lock.
        with HEAVY_IMPORTS:
            return cast(Converter, getattr(importlib.import_module(module, __package__), name))


@dataclass(frozen=True, slots=True)
class LegacyFormat:
    """A pre-2007 binary Office format: not read, but named, with the modern format to convert it to."""

    label: str
    target: str
    """The extension LibreOffice should convert it to, without the dot (`docx`)."""


_ZIP = b"PK\x03\x04"

FORMATS: tuple[DocumentFormat, ...] = (
    DocumentFormat("pdf", "PDF", (".pdf",), b"%PDF", "._pdf:convert_pdf", zipped=False),
    DocumentFormat("docx", "Word document (.docx)", (".docx",), _ZIP, "._docx:convert_docx", zipped=True),
    DocumentFormat("xlsx", "Excel workbook", (".xlsx", ".xlsm"), _ZIP, "._xlsx:convert_xlsx", zipped=True),
    DocumentFormat("pptx", "PowerPoint presentation (.pptx)", (".pptx",), _ZIP, "._pptx:convert_pptx", zipped=True),
)
"""Every format `convert` reads; adding one is an entry here and a converter module."""

LEGACY_FORMATS: dict[str, LegacyFormat] = {
    ".doc": LegacyFormat("legacy Word document (.doc)", "docx"),
    ".xls": LegacyFormat("legacy Excel workbook (.xls)", "xlsx"),
    ".ppt": LegacyFormat("legacy PowerPoint presentation (.ppt)", "pptx"),
}

_BY_EXTENSION = {extension: entry for entry in FORMATS for extension in entry.extensions}


def format_for(name: str | Path) -> DocumentFormat | None:
    """The format a file name's extension claims (case-insensitive); None when it is not one `convert` reads."""
    return _BY_EXTENSION.get(Path(name).suffix.lower())


def legacy_format_for(name: str | Path) -> LegacyFormat | None:
    """The legacy Office format a file name's extension claims, if any."""
    return LEGACY_FORMATS.get(Path(name).suffix.lower())


def _no_checkpoint() -> None:
    return None


def convert(path: str | Path, *, checkpoint: Callable[[], None] = _no_checkpoint) -> Document:
    """Convert a PDF, Word, Excel or PowerPoint file to text, chosen by its extension and checked by its signature.

    Blocking and CPU-bound: call it from a worker thread.

    Args:
        path: The file. Its extension picks the format (`format_for`).
        checkpoint: Called between pages, slides, sheets and blocks of rows; it may raise to abandon the work
            (a cancelled tool call).

    Returns:
        The converted document.

    Raises:
        DocumentError: not a format read here, not what its extension says, corrupt, encrypted, or past a limit.
        OSError: the file cannot be opened.
    """
    path = Path(path)
    entry = format_for(path)
    if entry is None:
        known = ", ".join(extension for item in FORMATS for extension in item.extensions)
        raise DocumentError(f"{path.suffix or 'A file without an extension'} is not a format read here ({known}).")
    with open(path, "rb") as handle:
        head = handle.read(len(entry.magic))
    if not entry.matches(head):
        raise DocumentError(
            f"This is not a valid {entry.label}: it does not start with the format's signature "
            f"({entry.magic!r}). It may be corrupt, or another kind of file with the wrong extension."
        )
    if entry.zipped:
        check_zip(path, entry.label)
    converter = entry.load()
    try:
        return converter(path, checkpoint)
    except (DocumentError, OSError):
        raise
    except Exception as exc:
        # The parsers are third-party code fed untrusted bytes: anything they raise means "this file is broken
        # in a way the parser cannot handle", and is reported as that, never as a traceback.
        detail = f"{type(exc).__name__}: {exc}"
        if len(detail) > _ERROR_DETAIL_CHARS:
            detail = detail[:_ERROR_DETAIL_CHARS] + "…"
        raise DocumentError(
            f"Could not read this {entry.label}: it is corrupt or uses something the reader does not support "
            f"({detail})."
        ) from exc
