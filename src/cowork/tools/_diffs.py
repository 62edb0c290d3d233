"""Unified diffs of what a file tool would change (the approval's preview) and did change (the result's diff).

The path goes through the same policy the tool applies (`ToolContext.write_path`), so a preview never reads what the
tool could not write. Anything that cannot be shown as text (refused, missing parent, binary, too large, an edit whose
text is not found once) has no preview: the approval then shows the arguments only, and the tool reports the error
when it runs.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from cowork.protocol import FileChange
from cowork.tools._base import ToolContext, ToolError
from cowork.tools._fsutil import SNIFF_BYTES, looks_binary

__all__ = [
    "DIFF_TOOLS",
    "MAX_DIFF_CHARS",
    "change_diff",
    "changes_since",
    "file_text",
    "preview_change",
    "snapshot",
    "unified_diff",
]

MAX_DIFF_CHARS = 64 * 1024
MAX_DIFF_SOURCE_BYTES = 2 * 1024 * 1024
DIFF_TOOLS = frozenset({"edit", "write"})
"""Tools whose calls show a diff: before they run (approval) and after (result)."""


class _NoText(Exception):
    """The file cannot be shown as text."""


def file_text(path: Path) -> str | None:
    """The file's text (None when it does not exist).

    Raises:
        _NoText: a directory, binary, too large or unreadable.
    """
    try:
        if not path.exists():
            return None
        if not path.is_file() or path.stat().st_size > MAX_DIFF_SOURCE_BYTES:
            raise _NoText
        data = path.read_bytes()
    except OSError:
        raise _NoText from None
    if looks_binary(data[:SNIFF_BYTES]):
        raise _NoText
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n")


def unified_diff(before: str | None, after: str | None, shown: str) -> str:
    """`before` → `after` as a unified diff (`None`: the file does not exist), cut at `MAX_DIFF_CHARS`."""
    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    lines = difflib.unified_diff(
        old,
        new,
        fromfile="/dev/null" if before is None else f"a/{shown}",
        tofile="/dev/null" if after is None else f"b/{shown}",
        n=3,
    )
    out: list[str] = []
    size = 0
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        if size + len(line) > MAX_DIFF_CHARS:
            out.append(f"… (diff cut at {MAX_DIFF_CHARS // 1024} KB)\n")
            break
        out.append(line)
        size += len(line)
    return "".join(out)


def _shown(path: Path, ctx: ToolContext) -> str:
    root = ctx.workspace.resolve()
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def _after_edit(text: str, arguments: dict[str, Any]) -> str | None:
    old, new = arguments.get("oldString"), arguments.get("newString")
    if not isinstance(old, str) or not isinstance(new, str) or not old:
        return None
    old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    count = text.count(old)
    if count == 0 or (count > 1 and not arguments.get("replaceAll")):
        return None
    return text.replace(old, new)


def preview_change(tool: str, arguments: dict[str, Any], ctx: ToolContext) -> tuple[Path, str] | None:
    """The file a call would change and the diff it would make; None when there is nothing to show.

    Blocking (reads the file): call it off the event loop, or only for small files.
    """
    taken = snapshot(tool, arguments, ctx)
    if taken is None:
        return None
    path, before = taken
    if tool == "write":
        content = arguments.get("content")
        after = content.replace("\r\n", "\n") if isinstance(content, str) else None
    else:
        after = _after_edit(before, arguments) if before is not None else None
    if after is None:
        return None
    return path, unified_diff(before, after, _shown(path, ctx))


def snapshot(tool: str, arguments: dict[str, Any], ctx: ToolContext) -> tuple[Path, str | None] | None:
    """The file a call may change and its text now (before the call), for `change_diff` afterwards."""
    raw = arguments.get("filePath")
    if tool not in DIFF_TOOLS or not isinstance(raw, str) or not raw:
        return None
    try:
        path = ctx.write_path(raw)
        return path, file_text(path)
    except (ToolError, _NoText):
        return None


def change_diff(before: tuple[Path, str | None], ctx: ToolContext) -> str | None:
    """What changed in the file since `snapshot`; None when nothing did or it cannot be shown."""
    path, old = before
    try:
        new = file_text(path)
    except _NoText:
        return None
    if new == old:
        return None
    return unified_diff(old, new, _shown(path, ctx))


def changes_since(baselines: list[tuple[str, str | None]], workspace: Path) -> tuple[list[FileChange], bool]:
    """What changed in each file since its baseline: added, modified or deleted, with its diff; files back to
    their baseline are left out. Returns the changes and whether some diff was cut or could not be read.

    Blocking (reads every file): call it off the event loop.
    """
    root = workspace.resolve()
    changes: list[FileChange] = []
    cut = False
    for raw, before in baselines:
        path = Path(raw)
        shown = str(path.relative_to(root)) if path.is_relative_to(root) else raw
        try:
            after = file_text(path)
        except _NoText:
            changes.append(FileChange(path=shown, status="modified", diff="(not text, or too large to show)\n"))
            cut = True
            continue
        if after == before:
            continue
        diff = unified_diff(before, after, shown)
        cut = cut or diff.endswith("KB)\n")
        lines = diff.splitlines()
        changes.append(
            FileChange(
                path=shown,
                status="added" if before is None else "deleted" if after is None else "modified",
                diff=diff,
                additions=sum(1 for line in lines if line.startswith("+") and not line.startswith("+++")),
                deletions=sum(1 for line in lines if line.startswith("-") and not line.startswith("---")),
            )
        )
    return changes, cut
