"""The `read` tool: read a text file, or a range of its lines, numbered like `cat -n`.

PDF, Word, Excel and PowerPoint files are converted to text by `cowork.documents` (kept in a small cache while the
file is unchanged) and paged through the same way.
"""

from __future__ import annotations

import codecs
import difflib
import os
import shlex
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO, assert_never

from pydantic import BaseModel, ConfigDict, Field

from cowork.documents import (
    MAX_PDF_PAGES,
    Document,
    DocumentCache,
    DocumentError,
    DocumentFormat,
    format_for,
    legacy_format_for,
)
from cowork.tools._base import Tool, ToolContext, ToolError
from cowork.tools._fsutil import (
    SNIFF_BYTES,
    describe_kind,
    display_path,
    human_size,
    looks_binary,
    relative_to_workspace,
    run_blocking,
    thread_checkpoint,
)

__all__ = ["ReadParams", "ReadTool"]

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 256_000
"""A single call never returns more than this, whatever `limit` says: the rest costs context for little gain."""
COUNT_SCAN_LIMIT = 256 * 1024 * 1024
"""Past this many bytes, the total line count is not worth the disk time."""
_SKIP_CHUNK = 64 * 1024
_COUNT_CHUNK = 1024 * 1024

DOCUMENTS = DocumentCache()
"""Converted documents while their file is unchanged: paging through a long PDF converts it once."""


class ReadParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    filePath: str = Field(
        min_length=1,
        description="The file to read: absolute, or relative to the workspace root. Must be inside the workspace.",
    )
    offset: int = Field(
        default=1,
        ge=0,
        description=(
            "1-based line number to start reading at (0 is treated as 1). Use it with `limit` to read a "
            "large file in parts, e.g. offset=2001 after the first 2000 lines."
        ),
    )
    limit: int = Field(
        default=DEFAULT_LIMIT,
        ge=1,
        description=f"Maximum number of lines to return (default {DEFAULT_LIMIT}).",
    )


class ReadTool(Tool[ReadParams]):
    """Read a text file, or a document converted to text, from the workspace with line numbers."""

    name = "read"
    description = f"""Read a file from the workspace and return its lines numbered like `cat -n`: text files, and PDF,
Word (.docx), Excel (.xlsx, .xlsm) and PowerPoint (.pptx) files converted to text.

Use it whenever you need a file's contents: before editing it, to inspect code, config, logs or documents, or to
look at the lines around a grep hit (pass offset a few lines before the hit).
- Do not use read to find files (use glob) or to search across files (use grep). Do not read files with cat,
  head, tail or sed through bash. `filePath` is absolute or relative to the workspace root (nothing outside it).
- Returns up to {DEFAULT_LIMIT} lines by default. For longer files a final note gives the total line count and
  the offset to continue from; read further with `offset` (1-based) and `limit`. Prefer the part you need.
- Each line is "<line number><TAB><text>"; the number and tab are not part of the file: never copy them into an
  edit. Lines over {MAX_LINE_CHARS} characters are cut (a document's are wrapped); one call returns at most
  {MAX_OUTPUT_CHARS // 1000}k characters. Text is UTF-8 (BOMs and UTF-16 with a BOM handled), else latin-1.
- Documents: a first line says what was converted (e.g. "PDF, 12 pages, converted to text:"), then the numbered
  converted text, paged like a text file. PDF pages start with `--- page N ---` (a scanned page has no text:
  it needs OCR); slides, sheets and Word headings are markdown headings, tables are markdown tables. Each
  spreadsheet sheet is a table headed by column letters whose first column is the row number, so cell B7 is in
  row 7 under B; formulas show as `=formula → cached value`. Caps ({MAX_PDF_PAGES} PDF pages, rows and columns
  per sheet) are stated in notes. Legacy .doc/.xls/.ppt are refused: convert them with LibreOffice via bash.
- Other binary files (images, archives, executables, databases) are refused with their size and type; do not
  retry them with read.
- Errors say what to do: a missing file comes with similar names from its directory; a directory is refused
  (use glob); an offset past the end reports the line count.
"""
    params = ReadParams
    path_params = ("filePath",)

    async def run(self, params: ReadParams, ctx: ToolContext) -> str:
        return await run_blocking(lambda: _read(params, ctx))


def _read(params: ReadParams, ctx: ToolContext) -> str:
    root = ctx.workspace.resolve()
    path = ctx.resolve(params.filePath)
    rel_path = relative_to_workspace(path, root)
    rel = display_path(rel_path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ToolError(_not_found_message(params.filePath, path, root)) from None
    except OSError as exc:
        raise ToolError(f"Cannot read {rel}: {exc.strerror or exc}.") from None
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(
            f"{rel} is a directory, not a file. Use glob to list its files (e.g. pattern '*' or '**/*' with "
            f"path {rel_path!r}), then read one of them."
        )
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{rel} is not a regular file (it is a device, socket or pipe), so it cannot be read.")

    try:
        with open(path, "rb") as raw:
            head = raw.read(SNIFF_BYTES)
        if not head:
            return f"(The file {rel} is empty: 0 lines.)"
        document = _document_format(path, head, rel, info.st_size)
        if document is not None:
            return _read_document(path, document, params, rel)
        if looks_binary(head):
            raise ToolError(
                f"{rel} is a binary file ({describe_kind(path, head)}, {human_size(info.st_size)}); read only "
                "reads text files and PDF, Word, Excel and PowerPoint documents. Do not retry it with read; if "
                "you need facts about it, use a tool meant for that format."
            )
        # newline="\n": lines end at "\n" only, as for ripgrep, so grep's line numbers are valid offsets here.
        with open(path, encoding=_encoding(head), errors="replace", newline="\n") as text:
            return _render(_text_lines(text), params, rel, lambda: _text_extent(text, info.st_size))
    except PermissionError:
        raise ToolError(f"Cannot read {rel}: permission denied.") from None
    except OSError as exc:
        raise ToolError(f"Cannot read {rel}: {exc.strerror or exc}.") from None


def _document_format(path: Path, head: bytes, rel: str, size: int) -> DocumentFormat | None:
    """The document format to convert the file with; None to treat it as any other file.

    A file named like a document but starting like text (a misnamed note) is read as text; one that is binary
    without the format's signature, or a legacy Office file, is refused with what to do instead.
    """
    entry = format_for(path)
    if entry is not None:
        if entry.matches(head):
            return entry
        if looks_binary(head):
            # Described by its signature alone: its name is the thing in doubt.
            kind = describe_kind(Path(), head)
            raise ToolError(
                f"{rel} is named like a {entry.label} but is not one: it does not start with the format's "
                f"signature ({kind}, {human_size(size)}). It is corrupt or misnamed; do not retry it with read."
            )
        return None
    legacy = legacy_format_for(path)
    if legacy is not None and looks_binary(head):
        command = f"soffice --headless --convert-to {legacy.target} {shlex.quote(rel)}"
        raise ToolError(
            f"{rel} is a {legacy.label}, an old binary format that read does not convert. Convert it with "
            f"LibreOffice through bash (`{command}` writes a .{legacy.target} copy in the current directory; add "
            "`--outdir <dir>` to put it elsewhere), then read the copy."
        )
    return None


def _read_document(path: Path, entry: DocumentFormat, params: ReadParams, rel: str) -> str:
    try:
        document = DOCUMENTS.get(path, checkpoint=thread_checkpoint)
    except DocumentError as exc:
        raise ToolError(f"Cannot read {rel} ({entry.label}). {exc}") from None
    header = _document_header(document)
    if not document.text.strip():
        return f"{header}\n(No text was found in {rel}.)"
    lines = [piece for line in document.text.split("\n") for piece in _wrap(line)]
    body = _render(
        ((line, 0) for line in lines),
        params,
        f"the text converted from {rel}",
        lambda: f"The converted text has {_lines(len(lines))} in total.",
    )
    return f"{header}\n{body}"


def _document_header(document: Document) -> str:
    """One line saying what was converted: `PDF, 12 pages, converted to text:`."""
    meta = document.meta
    match document.kind:
        case "pdf":
            pages = meta.pages or 0
            what = f"PDF, {_count(pages, 'page')}"
            if pages > MAX_PDF_PAGES:
                what += f" (the first {MAX_PDF_PAGES} converted)"
        case "docx":
            what = f"Word document, {_count(meta.words or 0, 'word')}"
        case "xlsx":
            what = f"Excel workbook, {_count(meta.sheets or 0, 'sheet')}, each a table of rows and lettered columns"
        case "pptx":
            what = f"PowerPoint presentation, {_count(meta.slides or 0, 'slide')}"
        case _:
            assert_never(document.kind)
    if meta.title:
        what += f", titled {' '.join(meta.title.split())[:200]!r}"
    return what + ", converted to text:"


def _count(number: int, noun: str) -> str:
    return f"1 {noun}" if number == 1 else f"{number:,} {noun}s"


def _wrap(line: str) -> list[str]:
    """A converted document's line in pieces of at most MAX_LINE_CHARS, broken at a space where there is one.

    Its line numbers exist only in the converted text, so wrapping loses nothing, where cutting would.
    """
    pieces: list[str] = []
    while len(line) > MAX_LINE_CHARS:
        cut = line.rfind(" ", MAX_LINE_CHARS // 2, MAX_LINE_CHARS)
        cut = cut if cut > 0 else MAX_LINE_CHARS
        pieces.append(line[:cut])
        line = line[cut:].lstrip(" ")
    pieces.append(line)
    return pieces


def _encoding(head: bytes) -> str:
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return "latin-1"
    # Later invalid bytes become U+FFFD rather than failing a file that starts out as UTF-8.
    return "utf-8"


def _read_line(text: TextIO) -> tuple[str, int] | None:
    """The next line without its terminator, cut to MAX_LINE_CHARS, and how many characters were cut.

    Reads in bounded pieces, so a file that is one multi-gigabyte line never sits in memory.
    """
    line = text.readline(MAX_LINE_CHARS + 1)
    if not line:
        return None
    if line.endswith("\n"):
        return line[:-1].removesuffix("\r"), 0
    if len(line) <= MAX_LINE_CHARS:
        return line.removesuffix("\r"), 0  # the last line, with no newline at the end
    cut = len(line) - MAX_LINE_CHARS
    while rest := text.readline(_SKIP_CHUNK):
        if rest.endswith("\n"):
            cut += len(rest) - 1
            break
        cut += len(rest)
    return line[:MAX_LINE_CHARS], cut


def _text_lines(text: TextIO) -> Iterator[tuple[str, int]]:
    while (item := _read_line(text)) is not None:
        yield item


def _text_extent(text: TextIO, size: int) -> str:
    total = _count_lines(text, size)
    if total is None:
        return f"The file ({human_size(size)}) has more lines; they were not counted because it is so large."
    return f"The file has {_lines(total)} in total."


def _render(lines: Iterator[tuple[str, int]], params: ReadParams, what: str, extent: Callable[[], str]) -> str:
    """Number the lines from `params.offset` on, within `limit` and the output cap, with a note when more follow.

    `lines` yields each line with how many characters were cut from it; `extent` says how long the whole is, and
    is called only when there is more to read (it may rescan the file).
    """
    start = max(params.offset, 1)
    out: list[str] = []
    out_chars = 0
    number = 0
    more = stopped_for_size = False
    for line, cut in lines:
        number += 1
        if number < start:
            continue
        if number >= start + params.limit:
            more = True
            break
        if cut:
            line += f" [... line truncated: {cut} more characters]"
        rendered = f"{number:>6}\t{line}"
        if out and out_chars + len(rendered) > MAX_OUTPUT_CHARS:
            more = stopped_for_size = True
            break
        out.append(rendered)
        out_chars += len(rendered) + 1

    if not out:
        raise ToolError(
            f"offset {start} is past the end of {what}, which has {_lines(number)}. "
            f"Use an offset between 1 and {number}."
        )
    if not more:
        return "\n".join(out)
    last_shown = start + len(out) - 1
    reason = (
        f"Output stopped at {MAX_OUTPUT_CHARS // 1000}k characters; showing lines {start}-{last_shown}."
        if stopped_for_size
        else f"Showing lines {start}-{last_shown}."
    )
    out.append(f"\n({reason} {extent()} Use offset={last_shown + 1} to read more.)")
    return "\n".join(out)


def _lines(count: int) -> str:
    return "1 line" if count == 1 else f"{count} lines"


def _count_lines(text: TextIO, size: int) -> int | None:
    """Total line count of the file, or None when it is too large to scan."""
    if size > COUNT_SCAN_LIMIT:
        return None
    total = 0
    if text.encoding == "utf-16":
        text.seek(0)
        last = ""
        while chars := text.read(_COUNT_CHUNK):
            total += chars.count("\n")
            last = chars
        return total + (1 if last and not last.endswith("\n") else 0)
    # Raw bytes count much faster than decoded text, and "\n" is the single byte 0x0A in UTF-8 and latin-1.
    raw = text.buffer
    raw.seek(0)
    tail = b""
    while chunk := raw.read(_COUNT_CHUNK):
        total += chunk.count(b"\n")
        tail = chunk
    return total + (1 if tail and not tail.endswith(b"\n") else 0)


def _not_found_message(requested: str, path: Path, root: Path) -> str:
    message = f"File not found: {requested}."
    parent = path.parent
    try:
        names = os.listdir(parent)
    except OSError:
        return message + " Its directory does not exist either; use glob to find the file."
    lowered = {name.lower(): name for name in names}
    close = difflib.get_close_matches(path.name.lower(), list(lowered), n=3, cutoff=0.6)
    if not close:
        return message + " Use glob to find the file."
    suggestions = ", ".join(
        relative_to_workspace(parent / lowered[name], root) + ("/" if (parent / lowered[name]).is_dir() else "")
        for name in close
    )
    return message + f" Did you mean: {suggestions}?"
