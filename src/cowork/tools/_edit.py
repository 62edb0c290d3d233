"""The `edit` tool: exact string replacement that keeps a file's encoding and line endings."""

from __future__ import annotations

import codecs
import re
import stat
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from cowork.tools._base import Tool, ToolContext, ToolError
from cowork.tools._fsutil import SNIFF_BYTES, describe_kind, human_size, looks_binary, run_blocking
from cowork.tools._write import shown_path, write_atomically

__all__ = ["EditParams", "EditTool"]

MAX_EDIT_BYTES = 16 * 1024 * 1024
CONTEXT_LINES = 3
MAX_SNIPPET_LINES = 40
MAX_LISTED = 10
_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+\t", re.MULTILINE)


class EditParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    filePath: str = Field(min_length=1, description="The file to edit: absolute, or relative to the workspace root.")
    oldString: str = Field(
        description="The exact text to replace, including whitespace and indentation, without read's line numbers."
    )
    newString: str = Field(description="The text to put in its place (must differ from oldString).")
    replaceAll: bool = Field(
        default=False, description="Replace every occurrence of oldString instead of requiring exactly one."
    )


class EditTool(Tool[EditParams]):
    """Replace an exact string in a file."""

    name = "edit"
    description = f"""Change part of an existing file by replacing an exact string with a new one.

Use it for every modification of an existing file: fixing a line, renaming a symbol (with replaceAll),
adding a paragraph after a heading. Read the file first so oldString matches it exactly.
- Do not use edit to create a file (use write) or to rewrite a file entirely (use write after reading it).
  For Jupyter notebooks use notebookEdit.
- oldString must match the file exactly, whitespace and indentation included. Copy it from read's output
  without the line-number prefix ("<number><TAB>"), which is not part of the file.
- oldString must occur exactly once unless replaceAll is true. If it occurs several times, add a few
  surrounding lines to make it unique, or set replaceAll to change every occurrence.
- Write "\\n" for line breaks: a file with Windows (CRLF) line endings keeps them. The file's encoding
  (UTF-8, UTF-8 or UTF-16 with a BOM, latin-1) and its final newline (or lack of one) are kept.
- Binary files and files over {MAX_EDIT_BYTES // (1024 * 1024)} MiB are refused. The write is atomic and keeps the
  file's permission bits.
- Returns the number of replacements and the changed lines with their numbers; check them.
- On "not found", read the file again: the error points at near matches that differ only in whitespace.
  On "found N times", the error lists the lines; make oldString unique or use replaceAll.
"""
    params = EditParams
    path_params = ("filePath",)
    side_effects = True
    changes_named_files = True

    async def run(self, params: EditParams, ctx: ToolContext) -> str:
        return await run_blocking(lambda: _edit(params, ctx))


@dataclass(frozen=True)
class _Decoded:
    text: str
    encoding: str
    bom: bytes


def _decode(data: bytes, shown: str) -> _Decoded:
    """Decode the whole file in a way that writes back byte-for-byte where the text is unchanged."""
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if data.startswith(bom):
            try:
                return _Decoded(data[len(bom) :].decode(encoding), encoding, bom)
            except UnicodeDecodeError:
                raise ToolError(
                    f"{shown} starts with a {encoding} byte-order mark but is not valid {encoding}; "
                    "it cannot be edited safely."
                ) from None
    try:
        return _Decoded(data.decode("utf-8"), "utf-8", b"")
    except UnicodeDecodeError:
        return _Decoded(data.decode("latin-1"), "latin-1", b"")  # every byte maps to one character and back


def _edit(params: EditParams, ctx: ToolContext) -> str:
    path = ctx.write_path(params.filePath)
    shown = shown_path(path, ctx)
    if params.oldString == "":
        raise ToolError("oldString is empty. To create a file use write; to add text, anchor it on existing text.")
    if params.oldString == params.newString:
        raise ToolError("oldString and newString are identical, so the edit would change nothing.")
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{shown} is a directory, not a file; use glob to find the file to edit.")
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{shown} is not a regular file, so it cannot be edited.")
        if info.st_size > MAX_EDIT_BYTES:
            raise ToolError(f"{shown} is {human_size(info.st_size)}, too large to edit with this tool.")
        data = path.read_bytes()
    except FileNotFoundError:
        raise ToolError(
            f"File not found: {params.filePath}. Check the path with glob; to create a new file use write."
        ) from None
    except OSError as exc:
        raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}.") from None
    if looks_binary(data[:SNIFF_BYTES]):
        kind = describe_kind(path, data[:SNIFF_BYTES])
        raise ToolError(f"{shown} is a binary file ({kind}); edit only changes text files.")

    decoded = _decode(data, shown)
    text = decoded.text
    crlf = text.count("\r\n")
    newline = "\r\n" if crlf > text.count("\n") - crlf else "\n"
    old = _with_newlines(params.oldString, newline)
    new = _with_newlines(params.newString, newline)
    if old == new:
        raise ToolError("oldString and newString differ only in line endings, so the edit would change nothing.")

    positions = _find_all(text, old)
    if not positions and newline == "\r\n" and "\n" in params.oldString:
        # A mostly-CRLF file can still hold LF-only stretches (pasted in by another tool): try those too.
        old, new = params.oldString.replace("\r\n", "\n"), params.newString.replace("\r\n", "\n")
        positions = _find_all(text, old)
    if not positions:
        raise ToolError(_not_found(text, old, params.oldString, shown))
    if len(positions) > 1 and not params.replaceAll:
        lines = [text.count("\n", 0, p) + 1 for p in positions]
        listed = ", ".join(map(str, lines[:MAX_LISTED])) + (", ..." if len(lines) > MAX_LISTED else "")
        raise ToolError(
            f"oldString occurs {len(positions)} times in {shown} (at lines {listed}). Include more surrounding "
            "lines to make it unique, or set replaceAll to true to replace every occurrence."
        )
    updated = text.replace(old, new) if params.replaceAll else text.replace(old, new, 1)
    try:
        encoded = decoded.bom + updated.encode(decoded.encoding)
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise ToolError(
            f"{shown} is {decoded.encoding}-encoded and cannot hold {bad!r} from newString. Use characters the "
            "file's encoding supports (or ask the user whether to convert the file to UTF-8 with write)."
        ) from None
    write_atomically(path, encoded, shown)

    count = len(positions)
    what = "1 replacement" if count == 1 else f"{count} replacements"
    where = " (showing the first)" if count > 1 else ""
    return f"Edited {shown}: {what}{where}.\n" + _snippet(updated, positions[0], new)


def _with_newlines(value: str, newline: str) -> str:
    value = value.replace("\r\n", "\n")
    return value.replace("\n", newline) if newline != "\n" else value


def _find_all(text: str, needle: str) -> list[int]:
    positions: list[int] = []
    start = text.find(needle)
    while start != -1:
        positions.append(start)
        start = text.find(needle, start + len(needle))
    return positions


def _squash(line: str) -> str:
    return " ".join(line.split())


def _not_found(text: str, old: str, raw_old: str, shown: str) -> str:
    message = f"oldString was not found in {shown}."
    if _LINE_NUMBER_PREFIX.search(raw_old):
        message += " It seems to contain line numbers copied from read's output; remove the '<number><TAB>' prefixes."
    near = _whitespace_matches(text, old)
    if near:
        spans = ", ".join(f"line {a}" if a == b else f"lines {a}-{b}" for a, b in near[:MAX_LISTED])
        return (
            f"{message} Text matching it except for whitespace or indentation is at {spans}: read those lines "
            "and copy them exactly (tabs vs spaces, trailing spaces, blank lines)."
        )
    lowered = text.lower().find(old.lower())
    if lowered != -1:
        line = text.count("\n", 0, lowered) + 1
        return f"{message} A match that differs only in upper/lower case is at line {line}; copy it exactly."
    return f"{message} Read the file again and copy the text exactly, including whitespace and indentation."


def _whitespace_matches(text: str, old: str) -> list[tuple[int, int]]:
    """Line spans (1-based, inclusive) whose text equals `old` once runs of whitespace are squashed."""
    wanted = [_squash(line) for line in old.replace("\r\n", "\n").strip("\n").split("\n")]
    if not any(wanted):
        return []
    lines = [_squash(line) for line in text.replace("\r\n", "\n").split("\n")]
    size = len(wanted)
    found: list[tuple[int, int]] = []
    for i in range(len(lines) - size + 1):
        window = lines[i : i + size]
        if size == 1:
            hit = wanted[0] in window[0]
        else:
            hit = window[0].endswith(wanted[0]) and window[-1].startswith(wanted[-1]) and window[1:-1] == wanted[1:-1]
        if hit:
            found.append((i + 1, i + size))
    return found


def _snippet(updated: str, start: int, new: str) -> str:
    """The replaced region with a few lines of context, numbered like `cat -n`."""
    lines = updated.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    first = updated.count("\n", 0, start)
    last = first + max(new.count("\n") - new.endswith("\n"), 0)
    begin = max(first - CONTEXT_LINES, 0)
    end = min(last + CONTEXT_LINES + 1, len(lines))
    numbers = list(range(begin, end))
    if len(numbers) > MAX_SNIPPET_LINES:
        half = MAX_SNIPPET_LINES // 2
        numbers = [*numbers[:half], -1, *numbers[-half:]]
    out = [("   ...\t..." if n < 0 else f"{n + 1:>6}\t{lines[n][:300]}") for n in numbers]
    return "\n".join(out) if out else "(The file is now empty.)"
