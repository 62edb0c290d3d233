"""The `write` tool: create or overwrite a text file, atomically, keeping the old file's permission bits."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from cowork.tools._base import Tool, ToolContext, ToolError
from cowork.tools._fsutil import run_blocking

__all__ = ["WriteParams", "WriteTool", "count_lines", "shown_path", "write_atomically"]


class WriteParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    filePath: str = Field(
        min_length=1,
        description=(
            "The file to create or overwrite: absolute, or relative to the workspace root. Missing parent "
            "directories are created."
        ),
    )
    content: str = Field(description="The complete new content of the file, written as UTF-8 exactly as given.")


class WriteTool(Tool[WriteParams]):
    """Create or overwrite a text file."""

    name = "write"
    description = """Create a new text file, or replace an existing file's entire content.

Use it to create a file that does not exist yet (a script, a report, a config file, a CSV you generate), or
to rewrite a small file completely when nearly every line changes.
- To change part of an existing file, use edit instead: it sends only the changed text and cannot
  accidentally drop the rest of the file. Prefer edit for every modification of an existing file.
- Before overwriting an existing file, read it first, so you know what you are replacing.
- Do not create files the task does not need (no unrequested README, notes or backup copies). Never write
  documentation files unless the user asked for them.
- `content` is the whole file, written as UTF-8 exactly as given: include the final newline if the file
  should end with one. Never include the line numbers that read shows.
- Parent directories are created as needed. The write is atomic (a temporary file is renamed over the
  target), and an existing file keeps its permission bits.
- Paths outside the workspace (and the other folders you may write) and credential stores are refused.
- Returns whether the file was created or overwritten, with its line count.
- On failure (a directory at that path, a read-only file, a refused path) the error says what is wrong;
  fix the path rather than retrying the same call.
"""
    params = WriteParams
    path_params = ("filePath",)
    side_effects = True
    changes_named_files = True

    async def run(self, params: WriteParams, ctx: ToolContext) -> str:
        return await run_blocking(lambda: _write(params, ctx))


def _write(params: WriteParams, ctx: ToolContext) -> str:
    path = ctx.write_path(params.filePath)
    shown = shown_path(path, ctx)
    try:
        info: os.stat_result | None = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        info = None  # a file in the way of a parent directory is reported when the folders are made
    except OSError as exc:
        raise ToolError(f"Cannot write {shown}: {exc.strerror or exc}.") from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise ToolError(f"{shown} is a directory; give the path of a file inside it instead.")
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{shown} is not a regular file (a device, socket or pipe); it cannot be written.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ToolError(f"Cannot create the folder for {shown}: a file is in the way on that path.") from None
    except OSError as exc:
        raise ToolError(f"Cannot create the folder for {shown}: {exc.strerror or exc}.") from None
    data = params.content.encode("utf-8", errors="replace")
    write_atomically(path, data, shown)
    lines = count_lines(params.content)
    verb = "Overwrote" if info is not None else "Created"
    return f"{verb} {shown} ({lines} line{'s' if lines != 1 else ''}, {len(data)} bytes)."


def shown_path(path: Path, ctx: ToolContext) -> str:
    """How a resolved path is named in results: relative to the workspace when inside it, else absolute."""
    root = ctx.workspace.resolve()
    if path == root or root in path.parents:
        return path.relative_to(root).as_posix() or "."
    return str(path)


def count_lines(text: str) -> int:
    """Lines as an editor counts them: a final line without a newline still counts."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def write_atomically(path: Path, data: bytes, shown: str) -> None:
    """Replace `path` with `data` through a temporary file in the same directory and a rename.

    Readers see the old content or the new, never half a file. An existing file keeps its permission bits;
    a new one gets the usual mode (0666 less the umask).

    Raises:
        ToolError: the file is read-only or the write failed; the message says why.
    """
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise ToolError(f"Cannot write {shown}: {exc.strerror or exc}.") from None
    if mode is not None and not os.access(path, os.W_OK):
        # The rename would succeed in a writable folder, silently defeating the file's read-only bit.
        raise ToolError(f"Cannot write {shown}: the file is read-only. Ask the user before changing its permissions.")
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        # 0o666 through os.open applies the process umask, as creating the file directly would.
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(temp, mode)
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
    except PermissionError:
        raise ToolError(f"Cannot write {shown}: permission denied.") from None
    except OSError as exc:
        raise ToolError(f"Cannot write {shown}: {exc.strerror or exc}.") from None
