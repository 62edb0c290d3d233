"""How much of a file a conversion reads, and the check that keeps a zip bomb from being unpacked at all.

The files come from the workspace, which is untrusted: every limit here bounds memory or time for a hostile
file, and every refusal says what was found.

XML inside the Office formats: python-docx and python-pptx parse with lxml parsers built with
`resolve_entities=False`; openpyxl parses with the same kind of lxml parser, and streams worksheets with the
standard library's expat, which never fetches external entities and (expat >= 2.4) refuses entity-expansion
("billion laughs") documents. No parser here resolves an entity or reaches the network, so `defusedxml` would add
nothing. lxml also keeps its default depth and size limits (`huge_tree` is off).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from ._model import DocumentError

__all__ = [
    "MAX_CELL_CHARS",
    "MAX_PDF_PAGES",
    "MAX_SHEET_COLUMNS",
    "MAX_SHEET_ROWS",
    "MAX_TEXT_CHARS",
    "MAX_ZIP_MEMBERS",
    "MAX_ZIP_RATIO",
    "MAX_ZIP_UNCOMPRESSED",
    "check_zip",
]

MAX_TEXT_CHARS = 20_000_000
"""Converted text per document; past it the conversion stops with a note."""
MAX_PDF_PAGES = 500
"""PDF pages converted; later pages are counted, named in a note, and not read."""
MAX_SHEET_ROWS = 500
"""Non-empty rows shown per sheet."""
MAX_SHEET_COLUMNS = 50
"""Columns shown per sheet (A to AX)."""
MAX_CELL_CHARS = 1000
"""Characters shown per spreadsheet cell (Excel allows 32,767)."""

MAX_ZIP_UNCOMPRESSED = 200 * 1024 * 1024
"""Total unpacked size of an Office file's members."""
MAX_ZIP_RATIO = 100
"""Compression ratio a large member may have; real Office XML stays well below it."""
_RATIO_FLOOR = 1024 * 1024
"""Members smaller than this unpack to little whatever their ratio (a tiny, repetitive XML part compresses well)."""
MAX_ZIP_MEMBERS = 10_000


def check_zip(path: Path, label: str) -> None:
    """Refuse an Office file (a ZIP container) whose members would unpack to too much, before any parser opens it.

    The sizes checked are the ones the ZIP directory declares. That is enough: Python's `zipfile`, which every
    reader here uses, never returns more than a member's declared size (it stops inflating there, then checks the
    CRC), so a member that lies about its size fails instead of growing.

    Raises:
        DocumentError: the container is corrupt, has too many members, or unpacks past a limit.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise DocumentError(f"The file is not a valid {label}: its ZIP container is corrupt ({exc}).") from None
    if len(members) > MAX_ZIP_MEMBERS:
        raise DocumentError(
            f"Refusing this {label}: its ZIP container has {len(members):,} members (the limit is "
            f"{MAX_ZIP_MEMBERS:,}), which no real document has."
        )
    total = 0
    for member in members:
        total += member.file_size
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > _RATIO_FLOOR and ratio > MAX_ZIP_RATIO:
            raise DocumentError(
                f"Refusing this {label}: its member {member.filename!r} would unpack from "
                f"{member.compress_size:,} to {member.file_size:,} bytes (ratio {ratio:,.0f}, the limit is "
                f"{MAX_ZIP_RATIO}). This is how a zip bomb looks; it was not unpacked."
            )
    if total > MAX_ZIP_UNCOMPRESSED:
        raise DocumentError(
            f"Refusing this {label}: it would unpack to {total:,} bytes (the limit is {MAX_ZIP_UNCOMPRESSED:,}). "
            "It was not unpacked."
        )
