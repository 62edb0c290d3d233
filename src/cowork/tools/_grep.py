"""The `grep` tool: search file contents with a regular expression, through ripgrep.

The `ripgrep` package is a dependency with wheels for every platform Cowork runs on, so the binary is always
there; there is no second search engine to keep in step with it (a missing binary is a clear error).
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import shutil
import signal
import sys
import sysconfig
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from cowork.tools._base import Tool, ToolContext, ToolError
from cowork.tools._fsutil import (
    GlobError,
    GlobMatcher,
    display_path,
    expand_braces,
    relative_to_workspace,
    run_blocking,
)

__all__ = ["GrepParams", "GrepTool", "find_rg"]

OutputMode = Literal["content", "files_with_matches", "count"]

DEFAULT_HEAD_LIMIT = 200
MAX_HEAD_LIMIT = 1000
MAX_CONTEXT_LINES = 10
MAX_LINE_CHARS = 500
DEFAULT_TIMEOUT = 30.0

_MAX_RECORD_BYTES = 64 * 1024
"""Longest output record kept from rg; a line is shown cut to MAX_LINE_CHARS anyway."""
_STDERR_KEEP = 4096
_BINARY_NOTE = "binary file matches (content not shown; it is not a text file)"


class GrepParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        min_length=1,
        description=(
            r'Regular expression to search for (ripgrep/Rust syntax, e.g. "def \w+_handler", "TODO|FIXME", '
            r'"import .*requests"). Escape regex characters for a literal search: "foo\(bar\)", "\.env".'
        ),
    )
    path: str | None = Field(
        default=None,
        description=(
            "File or directory to search, absolute or relative to the workspace; defaults to the workspace root."
        ),
    )
    glob: str | None = Field(
        default=None,
        description=(
            'Only search files matching this glob, e.g. "*.py", "*.{ts,tsx}", "src/**/*.go"; prefix with "!" to '
            "exclude instead. Without a '/', it matches file names at any depth; with one, paths relative to "
            "`path`. Ignored when `path` is a file."
        ),
    )
    outputMode: OutputMode = Field(
        default="files_with_matches",
        description=(
            '"files_with_matches" (default): paths of matching files, newest first. "content": the matching '
            'lines as "path:line:text" (context lines as "path-line-text"). "count": "path:count" with the '
            "number of matching lines per file."
        ),
    )
    caseInsensitive: bool = Field(default=False, description="Match letters regardless of case.")
    contextLines: int = Field(
        default=0,
        ge=0,
        le=MAX_CONTEXT_LINES,
        description=f'Lines of context to show before and after each match (0-{MAX_CONTEXT_LINES}); "content" mode only.',
    )
    headLimit: int = Field(
        default=DEFAULT_HEAD_LIMIT,
        ge=1,
        le=MAX_HEAD_LIMIT,
        description=(
            f"Maximum number of output lines (content) or entries (files, counts); default {DEFAULT_HEAD_LIMIT}, "
            f"at most {MAX_HEAD_LIMIT}."
        ),
    )


@functools.cache
def find_rg() -> str | None:
    """Locate the ripgrep binary: the one the `ripgrep` package put next to the interpreter, else PATH."""
    name = "rg.exe" if os.name == "nt" else "rg"
    for directory in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        candidate = directory / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


class _GlobFilter:
    """The `glob` parameter: ripgrep-style, a name glob without '/', a path glob (relative to `path`) with one."""

    def __init__(self, pattern: str) -> None:
        self.negate = pattern.startswith("!")
        body = pattern[1:] if self.negate else pattern
        body = body.removeprefix("/").removeprefix("./")
        self.by_name = "/" not in body
        self.matcher = GlobMatcher(body)
        self.body = body

    def accepts(self, sub: str) -> bool:
        target = sub.rsplit("/", 1)[-1] if self.by_name else sub
        return self.matcher.matches(target) != self.negate

    def rg_name_globs(self) -> list[str] | None:
        """Name globs that let rg skip files early (the exact filter runs on its output); None if none apply."""
        names = [alt.rsplit("/", 1)[-1] for alt in expand_braces(self.body)]
        # rg reads commas in a type definition as separators between globs.
        if any("**" in name or "," in name for name in names):
            return None
        return names


@dataclass(frozen=True)
class _Search:
    """One grep request, resolved and validated, for either engine."""

    root: Path
    target: Path
    target_rel: str
    target_is_file: bool
    pattern: str
    case_insensitive: bool
    mode: OutputMode
    context: int
    head_limit: int
    glob: _GlobFilter | None
    check: Callable[[str], object] = field(default=lambda _rel: None, compare=False)  # ctx.read_path: raises ToolError
    refused: dict[str, bool] = field(default_factory=dict, compare=False)  # per file rg reported: did `check` refuse it

    def wanted(self, rel: str) -> bool:
        if not self.permitted(rel):
            return False
        if self.glob is None or self.target_is_file:
            return True
        sub = rel if self.target_rel == "." else rel[len(self.target_rel) + 1 :]
        return self.glob.accepts(sub)

    def permitted(self, rel: str) -> bool:
        if rel not in self.refused:
            try:
                self.check(rel)
                self.refused[rel] = False
            except ToolError:  # a hard link to a file elsewhere, or a place no tool may read
                self.refused[rel] = True
        return not self.refused[rel]


@dataclass(frozen=True, slots=True)
class _Line:
    rel: str
    number: int
    """1-based; 0 for a "binary file matches" note."""
    is_match: bool
    text: str


@dataclass
class _Result:
    lines: list[_Line] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    counts: list[tuple[str, int]] = field(default_factory=list)
    truncated: bool = False

    def at_limit(self, search: _Search) -> bool:
        """Whether one more entry would exceed headLimit, noting the truncation (files mode keeps all: it sorts first)."""
        size = len(self.lines) if search.mode == "content" else len(self.counts)
        if search.mode != "files_with_matches" and size >= search.head_limit:
            self.truncated = True
        return self.truncated


class GrepTool(Tool[GrepParams]):
    """Search file contents with a regular expression."""

    name = "grep"
    description = f"""Search file contents for a regular expression (ripgrep), honouring .gitignore.

Use it to find where something is defined, used, configured or logged: a function or class name, an
error message, an import, a setting. Then read the relevant file around the hit.
- Do not use grep to find files by name (use glob) or to read a file (use read). Do not run grep, rg,
  find or cat through bash for searching.
- `pattern` is a regular expression in ripgrep (Rust) syntax: escape regex characters for literal text
  ("foo\\(", "\\.env"); no look-around or backreferences. Matches are per line (no multi-line matches).
- Narrow the search with `path` (a directory or a single file) and `glob` ("*.py", "*.{{ts,tsx}}",
  "!*.min.js"). Set caseInsensitive for case-insensitive matching.
- outputMode "files_with_matches" (default) lists matching files, newest first: start here, then switch
  to "content" (matching lines as path:line:text, with contextLines of context) or "count" (matching
  lines per file) once the search is narrow. Line numbers work as read's offset.
- Searches files under the workspace that git would not ignore (.gitignore files are honoured, .git/ is
  skipped, hidden files are searched, binary files are skipped). Lines longer than {MAX_LINE_CHARS} characters are cut.
- Output is capped at headLimit lines or entries (default {DEFAULT_HEAD_LIMIT}, max {MAX_HEAD_LIMIT}); a final note says
  when results were cut: narrow the search rather than raising the limit.
- "No matches" is an answer, not an error: try a simpler pattern, caseInsensitive, or a wider path.
  Errors (invalid regex or glob, missing path, a search over {DEFAULT_TIMEOUT:g} s) say what to change.
"""
    params = GrepParams
    path_params = ("path",)

    def __init__(self, *, rg_path: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self._rg_path = rg_path
        self.timeout = timeout

    def _rg(self) -> str | None:
        return self._rg_path or find_rg()

    async def run(self, params: GrepParams, ctx: ToolContext) -> str:
        search, rg = await run_blocking(lambda: (_prepare(params, ctx), self._rg()))
        try:
            with anyio.fail_after(self.timeout):
                result = await _run_rg(rg, search) if rg is not None else None
                if result is None:
                    raise ToolError(
                        "The search engine (ripgrep) could not be started, so grep is unavailable; reinstall Cowork "
                        "(uv sync) to restore it. Meanwhile use glob and read."
                    )
                found = result.files
                files = await run_blocking(lambda: _newest_first(search.root, found))
        except TimeoutError:
            raise ToolError(
                f"The search took longer than {self.timeout:g} s and was stopped. Narrow it: a subdirectory "
                "as `path`, a `glob` such as '*.py', or a more specific pattern."
            ) from None
        result.files = files
        return _format(search, result, params)


def _prepare(params: GrepParams, ctx: ToolContext) -> _Search:
    root = ctx.workspace.resolve()
    target = ctx.resolve(params.path or ".")
    if not target.exists():
        shown = display_path(relative_to_workspace(target, root))
        raise ToolError(f"Path not found: {shown}. Use glob to find the right file or directory.")
    is_file = target.is_file()
    if not is_file and not target.is_dir():
        raise ToolError(f"{params.path} is neither a regular file nor a directory, so it cannot be searched.")
    glob: _GlobFilter | None = None
    if params.glob:
        try:
            glob = _GlobFilter(params.glob)
        except GlobError as exc:
            raise ToolError(f"Invalid glob: {exc}.") from None
    return _Search(
        root=root,
        target=target,
        target_rel=relative_to_workspace(target, root),
        target_is_file=is_file,
        pattern=params.pattern,
        case_insensitive=params.caseInsensitive,
        mode=params.outputMode,
        context=params.contextLines if params.outputMode == "content" else 0,
        head_limit=params.headLimit,
        glob=glob,
        check=ctx.read_path,
    )


# --- ripgrep ----------------------------------------------------------------------------------------------


def _rg_args(rg: str, search: _Search) -> list[str]:
    args = [
        rg,
        "--no-config",
        # Same ignore rules as glob: .gitignore files (in a repository or not) and nothing else.
        "--no-require-git",
        "--no-ignore-dot",
        "--no-ignore-global",
        "--no-ignore-exclude",
        "--hidden",
        "--glob=!.git",
        "--no-messages",
        "--color=never",
        "--with-filename",
        "--null",
    ]
    if search.case_insensitive:
        args.append("--ignore-case")
    if search.mode == "files_with_matches":
        args.append("--files-with-matches")
    elif search.mode == "count":
        args += ["--count", "--sort=path"]
    else:
        args += ["--line-number", "--sort=path"]
        if search.context:
            args.append(f"--context={search.context}")
    if search.glob is not None and not search.target_is_file:
        names = search.glob.rg_name_globs()
        # Type globs only narrow the walk (the exact glob is applied to rg's output); unlike --glob they never
        # re-include gitignored files. A negated path glob cannot be narrowed by name, so it gets no type.
        if names is not None and (not search.glob.negate or search.glob.by_name):
            args += [f"--type-add=cowork:{name}" for name in names]
            args.append("--type-not=cowork" if search.glob.negate else "--type=cowork")
    args += ["--regexp", search.pattern, "--", search.target_rel]
    return args


async def _run_rg(rg: str, search: _Search) -> _Result | None:
    """Search with ripgrep; None when the binary cannot be started."""
    # Shielded: a cancellation in the middle of spawning would leave the process and its pipes unowned.
    with anyio.CancelScope(shield=True):
        try:
            proc = await asyncio.create_subprocess_exec(
                *_rg_args(rg, search),
                cwd=search.root,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError:
            return None
    assert proc.stdout is not None and proc.stderr is not None
    stderr = bytearray()
    # A plain asyncio task, not a task-group child: it must keep draining to EOF while a cancelled search cleans up.
    stderr_done = asyncio.ensure_future(_drain(proc.stderr, stderr))
    result = _Result()
    finished = False
    try:
        separator = b"\0" if search.mode == "files_with_matches" else b"\n"
        async with aclosing(_records(proc.stdout, separator)) as records:
            async for record in records:
                if _take_rg_record(record, search, result):
                    break
            else:
                finished = True
    finally:
        # Also on cancellation and timeout: never leave rg running (shielded, so the cleanup itself completes).
        with anyio.CancelScope(shield=True):
            await _reap(proc, kill=not finished)
            await stderr_done
    if proc.returncode == 2 and not (result.lines or result.files or result.counts):
        message = stderr.decode("utf-8", "replace").strip().removeprefix("rg: ")
        if "regex" in message:
            raise ToolError(f"Invalid regular expression {search.pattern!r}: {message}")
        raise ToolError(f"The search failed: {message or 'ripgrep exited with an error'}")
    return result


def _take_rg_record(record: bytes, search: _Search, result: _Result) -> bool:
    """Add one rg output record to `result`; True once headLimit is exceeded."""
    if search.mode == "files_with_matches":
        rel = _rg_rel(record)
        if search.wanted(rel):
            result.files.append(rel)
        return False
    raw_path, has_path, rest = record.partition(b"\0")
    if not has_path:
        if search.mode == "content" and record.endswith(b")") and b": binary file matches" in record:
            raw_rel = raw_path.split(b": binary file matches", 1)[0]
            if result.at_limit(search):
                return True
            result.lines.append(_Line(_rg_rel(raw_rel), 0, True, _BINARY_NOTE))
        return False  # "--" group separators: context groups are recomputed when formatting
    rel = _rg_rel(raw_path)
    if not search.wanted(rel):
        return False
    if result.at_limit(search):
        return True
    if search.mode == "count":
        result.counts.append((rel, int(rest)))
        return False
    match = re.match(rb"(\d+)([:-])", rest)
    if match is None:
        return False
    text = rest[match.end() :].decode("utf-8", "replace").removesuffix("\r")
    result.lines.append(_Line(rel, int(match[1]), match[2] == b":", text))
    return False


def _rg_rel(raw: bytes) -> str:
    return os.fsdecode(raw).removeprefix("./")


async def _records(stream: asyncio.StreamReader, separator: bytes) -> AsyncGenerator[bytes, None]:
    """Split a stream into records, keeping at most _MAX_RECORD_BYTES of each (memory stays bounded)."""
    pending = b""
    dropping = False
    while chunk := await stream.read(64 * 1024):
        pieces = chunk.split(separator)
        for piece in pieces[:-1]:
            if not dropping:
                yield (pending + piece)[:_MAX_RECORD_BYTES]
            pending = b""
            dropping = False
        if not dropping:
            pending += pieces[-1]
            if len(pending) > _MAX_RECORD_BYTES:
                yield pending[:_MAX_RECORD_BYTES]
                pending = b""
                dropping = True
    if pending and not dropping:
        yield pending


async def _drain(stream: asyncio.StreamReader, keep: bytearray) -> None:
    while chunk := await stream.read(4096):
        keep += chunk[: max(0, _STDERR_KEEP - len(keep))]


async def _reap(proc: asyncio.subprocess.Process, *, kill: bool) -> None:
    """Kill rg if asked and it still runs, then collect it and close its pipes."""
    if kill and proc.returncode is None:
        try:
            if os.name == "nt":
                proc.kill()
            else:
                # Not proc.kill(): its Popen.poll() can reap the child before asyncio's watcher does, which then
                # reports a bogus exit status 255.
                os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert proc.stdout is not None
    # Drain what is left in the pipe, so asyncio sees EOF and closes the transport.
    while await proc.stdout.read(64 * 1024):
        pass
    await proc.wait()


def _newest_first(root: Path, rels: list[str]) -> list[str]:
    def key(rel: str) -> tuple[float, str]:
        try:
            return -os.stat(root / rel).st_mtime, rel
        except OSError:
            return 0.0, rel

    return sorted(rels, key=key)


def _cut(text: str) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    return text[:MAX_LINE_CHARS] + " [... line truncated]"


def _format(search: _Search, result: _Result, params: GrepParams) -> str:
    limit = search.head_limit
    raise_hint = "" if limit >= MAX_HEAD_LIMIT else f" or raise headLimit (max {MAX_HEAD_LIMIT})"
    narrow = f"Narrow the search (`path`, `glob`, a more specific pattern){raise_hint}."
    out: list[str] = []
    if search.mode == "files_with_matches":
        out = result.files[:limit]
        if len(result.files) > limit:
            omitted = len(result.files) - limit
            out.append(f"({omitted} more matching files omitted; showing the {limit} most recently modified. {narrow})")
    elif search.mode == "count":
        out = [f"{rel}:{count}" for rel, count in result.counts]
        if result.truncated:
            out.append(f"(More files with matches were omitted after headLimit={limit}. {narrow})")
    else:
        previous: _Line | None = None
        for line in result.lines:
            if line.number == 0:
                out.append(f"{line.rel}: {line.text}")
            else:
                contiguous = previous is not None and previous.rel == line.rel and previous.number + 1 == line.number
                if search.context and previous is not None and not contiguous:
                    out.append("--")
                sep = ":" if line.is_match else "-"
                out.append(f"{line.rel}{sep}{line.number}{sep}{_cut(line.text)}")
            previous = line
        if result.truncated:
            out.append(f"(Output cut at headLimit={limit} lines. {narrow})")
    refused = sum(search.refused.values())
    if refused:
        out.append(
            f"({refused} matching file{'s were' if refused > 1 else ' was'} left out: hard-linked (a link may lead "
            "outside the workspace) or in a place no tool may read.)"
        )
    if out:
        return "\n".join(out)
    where = display_path(search.target_rel)
    with_glob = f" (files matching {params.glob!r})" if params.glob and not search.target_is_file else ""
    return (
        f"No matches for {search.pattern!r} in {where}{with_glob}. Files ignored by .gitignore and binary files "
        "are not searched; try a simpler pattern, caseInsensitive, or a wider path."
    )
