"""The `read` tool: read a text file, or a range of its lines, numbered like `cat -n`."""

from __future__ import annotations

import codecs
import difflib
import os
import stat
from pathlib import Path
from typing import TextIO

from pydantic import BaseModel, ConfigDict, Field

from cowork.tools._base import Tool, ToolContext, ToolError
from cowork.tools._fsutil import (
    SNIFF_BYTES,
    describe_kind,
    display_path,
    human_size,
    looks_binary,
    relative_to_workspace,
    run_blocking,
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
    """Read a text file from the workspace with line numbers."""

    name = "read"
    description = f"""Read a text file from the workspace and return its lines numbered like `cat -n`.

Use it whenever you need a file's contents: before editing it, to inspect code, config or logs, or to
look at the lines around a grep hit (pass offset a few lines before the hit).
- Do not use read to find files (use glob) or to search for text across files (use grep). Do not run
  cat, head, tail or sed through bash to read files.
- `filePath` is absolute or relative to the workspace root; files outside the workspace are refused.
- Returns up to {DEFAULT_LIMIT} lines from the start by default. For longer files a final note gives the
  total line count and the offset to continue from; read further with `offset` (1-based) and `limit`.
  Prefer reading the part you need over paging through a whole large file.
- Each line is shown as "<line number><TAB><text>". The number and tab are not part of the file: never
  copy them into an edit. Lines longer than {MAX_LINE_CHARS} characters are cut and marked as truncated.
  One call returns at most {MAX_OUTPUT_CHARS // 1000}k characters; the note then says where to continue.
- Text is decoded as UTF-8 (a BOM is handled; UTF-16 with a BOM too), falling back to latin-1.
- Only text files: binary files (images, PDFs, archives, executables, databases) are refused with their
  size and type; do not retry them with read.
- Errors tell you what to do: a missing file comes with similarly named files from the same directory
  (check them, or use glob); a directory is refused (use glob to list it); an offset past the end of the
  file reports the file's line count.
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
        if looks_binary(head):
            raise ToolError(
                f"{rel} is a binary file ({describe_kind(path, head)}, {human_size(info.st_size)}); read only "
                "reads text files. Do not retry it with read; if you need facts about it, use a tool meant "
                "for that format."
            )
        # newline="\n": lines end at "\n" only, as for ripgrep, so grep's line numbers are valid offsets here.
        with open(path, encoding=_encoding(head), errors="replace", newline="\n") as text:
            return _render(text, params, rel, info.st_size)
    except PermissionError:
        raise ToolError(f"Cannot read {rel}: permission denied.") from None
    except OSError as exc:
        raise ToolError(f"Cannot read {rel}: {exc.strerror or exc}.") from None


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


def _render(text: TextIO, params: ReadParams, rel: str, size: int) -> str:
    start = max(params.offset, 1)
    out: list[str] = []
    out_chars = 0
    number = 0
    more = stopped_for_size = False
    while (item := _read_line(text)) is not None:
        number += 1
        if number < start:
            continue
        if number >= start + params.limit:
            more = True
            break
        line, cut = item
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
            f"offset {start} is past the end of {rel}, which has {_lines(number)}. "
            f"Use an offset between 1 and {number}."
        )
    if not more:
        return "\n".join(out)
    last_shown = start + len(out) - 1
    total = _count_lines(text, size)
    reason = (
        f"Output stopped at {MAX_OUTPUT_CHARS // 1000}k characters; showing lines {start}-{last_shown}."
        if stopped_for_size
        else f"Showing lines {start}-{last_shown}."
    )
    if total is None:
        extent = f"The file ({human_size(size)}) has more lines; they were not counted because it is so large."
    else:
        extent = f"The file has {_lines(total)} in total."
    out.append(f"\n({reason} {extent} Use offset={last_shown + 1} to read more.)")
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
