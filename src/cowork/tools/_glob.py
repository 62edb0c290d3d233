"""The `glob` tool: find files by name pattern, newest first."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
from pydantic import BaseModel, ConfigDict, Field

from cowork.tools._base import Tool, ToolContext, ToolError
from cowork.tools._fsutil import (
    GlobError,
    GlobMatcher,
    display_path,
    file_mtime,
    relative_to_workspace,
    run_blocking,
    walk_files,
)

__all__ = ["GlobParams", "GlobTool"]

MAX_RESULTS = 200
DEFAULT_TIMEOUT = 30.0


class GlobParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        min_length=1,
        description=(
            'Glob pattern relative to `path`, e.g. "**/*.py", "src/**/test_*.ts", "*.{json,yaml}". '
            '`**` matches any number of directories, `*` and `?` stay within one directory, "[abc]" '
            'matches one character, "{a,b}" matches either alternative. "*.py" matches only directly '
            'inside `path`; use "**/*.py" for every depth.'
        ),
    )
    path: str | None = Field(
        default=None,
        description=(
            "Directory to search in, absolute or relative to the workspace; defaults to the workspace root. "
            "Must be inside the workspace."
        ),
    )


class GlobTool(Tool[GlobParams]):
    """Find files whose path matches a glob pattern, honouring .gitignore."""

    name = "glob"
    description = f"""Find files by name: list the files whose path matches a glob pattern, newest first.

Use it to locate files when you know (part of) a name or an extension: "**/*.py", "src/**/test_*.ts",
"**/{{README,CHANGELOG}}.md", "docs/*.md". Then read the files you need with read.
- Do not use glob to search file contents: use grep. Do not use it to read a file: use read. Do not run
  find, ls or fd through bash for this.
- The pattern is matched against the whole path relative to `path` (default: the workspace root).
  "*.py" matches only files directly in that directory; "**/*.py" matches at any depth.
- Supports `**`, `*`, `?`, `[abc]`, `[!abc]` and `{{a,b}}` alternatives. Matching is case-sensitive.
- Returns file paths (not directories) relative to the workspace, one per line, most recently modified
  first. At most {MAX_RESULTS} paths are shown; if there are more, a final line says how many were
  omitted: use a more specific pattern or `path`.
- Files ignored by .gitignore (root and nested) and everything under .git/ are skipped; hidden files are
  included. Symlinked directories are not followed; nothing outside the workspace is ever listed.
- "No files match" is a normal answer, not a failure: try a broader pattern (e.g. "**/*name*") or
  another directory before concluding the file does not exist.
- Errors (invalid pattern, `path` missing, not a directory or outside the workspace) explain what to fix.
"""
    params = GlobParams
    path_params = ("path",)

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout

    async def run(self, params: GlobParams, ctx: ToolContext) -> str:
        try:
            with anyio.fail_after(self.timeout):
                return await run_blocking(lambda: _glob(params, ctx))
        except TimeoutError:
            raise ToolError(
                f"glob took longer than {self.timeout:g} s and was stopped. Narrow it: search a subdirectory "
                "with `path`, or use a pattern with a fixed leading directory."
            ) from None


def _glob(params: GlobParams, ctx: ToolContext) -> str:
    root = ctx.workspace.resolve()
    directory = ctx.resolve(params.path or ".")
    shown_dir = display_path(relative_to_workspace(directory, root))
    if not directory.exists():
        raise ToolError(f"Directory not found: {params.path}. Use glob from the workspace root to find it.")
    if not directory.is_dir():
        raise ToolError(
            f"`path` must be a directory, but {shown_dir} is a file. To read it use read; to search it use grep."
        )
    pattern = _normalise_pattern(params.pattern, directory)
    try:
        matcher = GlobMatcher(pattern)
    except GlobError as exc:
        raise ToolError(f"Invalid glob pattern: {exc}.") from None

    found: list[tuple[float, str]] = []
    for walked in walk_files(root, directory, descend=matcher.may_contain, include_file_links=True):
        if matcher.matches(walked.sub):
            found.append((file_mtime(walked), walked.rel))
    if not found:
        return _no_match_message(params.pattern, pattern, shown_dir)
    found.sort(key=lambda item: (-item[0], item[1]))
    lines = [rel for _, rel in found[:MAX_RESULTS]]
    if len(found) > MAX_RESULTS:
        omitted = len(found) - MAX_RESULTS
        lines.append(
            f"({omitted} more matching files omitted; showing the {MAX_RESULTS} most recently modified of "
            f"{len(found)}. Use a more specific pattern or a narrower `path`.)"
        )
    return "\n".join(lines)


def _normalise_pattern(pattern: str, directory: Path) -> str:
    """Make the pattern relative to the search directory, refusing ones that could reach outside it."""
    if os.path.isabs(pattern):
        prefix = str(directory).rstrip("/") + "/"
        if not pattern.startswith(prefix):
            raise ToolError(
                f"Absolute pattern {pattern!r} is not under the search directory {directory}. Give a relative "
                "pattern and choose the directory with `path`."
            )
        pattern = pattern[len(prefix) :]
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if ".." in pattern.split("/"):
        raise ToolError(
            f"Pattern {pattern!r} contains '..'. Patterns match below `path`; set `path` to search elsewhere."
        )
    if not pattern:
        raise ToolError("The pattern is empty. Use e.g. '**/*' to list every file.")
    return pattern


def _no_match_message(original: str, pattern: str, shown_dir: str) -> str:
    message = f"No files match {original!r} in {shown_dir}."
    if "/" not in pattern:
        message += (
            f" Note that {pattern!r} only matches files directly in that directory; "
            f"use '**/{pattern}' to search subdirectories too."
        )
    return message + " (Files ignored by .gitignore are not listed.)"
