"""Documents as text: PDF, Word (.docx), Excel (.xlsx, .xlsm) and PowerPoint (.pptx) converted for a model to read.

The one converter behind the `read` tool and, later, ingestion: a path in, a `Document` out (markdown-ish `text`,
the same text cut into `parts` — pages, slides, sheets, heading sections — and `meta`). It knows nothing of tools
or sessions. Files are untrusted: zip bombs are refused before unpacking, pages, rows and text are capped, and any
parser failure becomes a `DocumentError` that says what is wrong (see `_limits` for every limit).

`build_preview` makes what a person sees of the same files (page images, cell grids, markdown, slides).

Importing this package is cheap: each format's parsing library loads with its first conversion.
"""

from ._cache import DocumentCache
from ._formats import (
    FORMATS,
    LEGACY_FORMATS,
    Converter,
    DocumentFormat,
    LegacyFormat,
    convert,
    format_for,
    legacy_format_for,
)
from ._limits import (
    MAX_CELL_CHARS,
    MAX_PDF_PAGES,
    MAX_SHEET_COLUMNS,
    MAX_SHEET_ROWS,
    MAX_TEXT_CHARS,
    MAX_ZIP_MEMBERS,
    MAX_ZIP_RATIO,
    MAX_ZIP_UNCOMPRESSED,
)
from ._model import Document, DocumentError, DocumentKind, DocumentMeta, Part, PartKind
from ._preview import (
    MAX_PREVIEW_BYTES,
    PREVIEW_KINDS,
    PagePreview,
    Preview,
    PreviewKind,
    SheetPreview,
    SlidePreview,
    build_preview,
    preview_kind,
)

__all__ = [
    "FORMATS",
    "LEGACY_FORMATS",
    "MAX_CELL_CHARS",
    "MAX_PDF_PAGES",
    "MAX_PREVIEW_BYTES",
    "MAX_SHEET_COLUMNS",
    "MAX_SHEET_ROWS",
    "MAX_TEXT_CHARS",
    "MAX_ZIP_MEMBERS",
    "MAX_ZIP_RATIO",
    "MAX_ZIP_UNCOMPRESSED",
    "PREVIEW_KINDS",
    "Converter",
    "Document",
    "DocumentCache",
    "DocumentError",
    "DocumentFormat",
    "DocumentKind",
    "DocumentMeta",
    "LegacyFormat",
    "PagePreview",
    "Part",
    "PartKind",
    "Preview",
    "PreviewKind",
    "SheetPreview",
    "SlidePreview",
    "build_preview",
    "convert",
    "format_for",
    "legacy_format_for",
    "preview_kind",
]
