"""Shared helpers for the read-only file tools: bounded worker threads, .gitignore-aware walking, globs, sniffing."""

from __future__ import annotations

import mimetypes
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from pathspec import GitIgnoreSpec

from cowork.policy import BraceError, class_end
from cowork.policy import expand_braces as _expand_braces

__all__ = [
    "FILE_TOOLS_LIMITER",
    "SNIFF_BYTES",
    "GlobError",
    "GlobMatcher",
    "WalkedFile",
    "describe_kind",
    "display_path",
    "expand_braces",
    "file_mtime",
    "human_size",
    "looks_binary",
    "relative_to_workspace",
    "run_blocking",
    "thread_checkpoint",
    "walk_files",
]

T = TypeVar("T")

FILE_TOOLS_LIMITER = anyio.CapacityLimiter(8)
"""One bounded pool for every file tool, so a burst of tool calls cannot exhaust anyio's default thread pool."""

SNIFF_BYTES = 8192
"""How much of a file's head decides whether it is binary."""

_MAX_BRACE_EXPANSIONS = 256
_CHECKPOINT_EVERY = 128


async def run_blocking(func: Callable[[], T]) -> T:
    """Run blocking file-system work in the shared bounded worker pool."""
    return await anyio.to_thread.run_sync(func, limiter=FILE_TOOLS_LIMITER)


def thread_checkpoint() -> None:
    """Raise the host task's cancellation inside a worker thread; a no-op when not in one."""
    try:
        anyio.from_thread.check_cancelled()
    except RuntimeError:
        # Called outside an anyio worker thread (plain sync use): nothing can cancel us.
        return


def relative_to_workspace(path: Path, root: Path) -> str:
    """`path` relative to the resolved workspace `root`, POSIX style, "." for the root itself."""
    if path == root:
        return "."
    return path.relative_to(root).as_posix()


def display_path(rel: str) -> str:
    """How a workspace-relative path is named in messages."""
    return "the workspace root" if rel == "." else rel


def human_size(size: int) -> str:
    """Format a byte count for people (and models)."""
    value = float(size)
    unit = "bytes"
    for larger in ("KiB", "MiB", "GiB", "TiB"):
        if value < 1024:
            break
        value /= 1024
        unit = larger
    return f"{size} bytes" if unit == "bytes" else f"{value:.1f} {unit}"


# Signatures of common binary formats: a better guess than the extension when the name lies or has none.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive (or a format built on it: docx, xlsx, jar, wheel)"),
    (b"\x1f\x8b", "gzip archive"),
    (b"\x7fELF", "ELF executable or library"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"\x00asm", "WebAssembly module"),
)


def describe_kind(path: Path, head: bytes) -> str:
    """A short guess at what kind of file this is, from its signature or its name."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WebP image"
    guessed, _ = mimetypes.guess_type(path.name)
    if guessed:
        return guessed
    return "unknown binary type"


# Bytes that essentially never occur in text (C0 controls other than \t \n \v \f \r and ESC, plus DEL).
_CONTROL_BYTES = bytes(b for b in range(32) if b not in (8, 9, 10, 11, 12, 13, 27)) + b"\x7f"


def looks_binary(head: bytes) -> bool:
    """Whether a file whose first bytes are `head` should be treated as binary.

    A NUL byte decides it (as for git and ripgrep); so does a large share of control characters, which no
    text has. Text that is not UTF-8 is still text (it is read as latin-1).
    """
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False  # UTF-16 with a BOM: NULs are expected
    if b"\x00" in head:
        return True
    controls = sum(head.count(bytes([b])) for b in _CONTROL_BYTES)
    return controls > len(head) * 0.1


# --- Globs -------------------------------------------------------------------------------------------------


class GlobError(ValueError):
    """A glob pattern that cannot be compiled."""


def _class_end(pattern: str, start: int) -> int:
    try:
        return class_end(pattern, start)
    except BraceError as exc:
        raise GlobError(str(exc)) from None


def expand_braces(pattern: str) -> list[str]:
    """Expand `{a,b}` alternatives (nested allowed) into plain glob patterns (see `cowork.policy.expand_braces`)."""
    try:
        return _expand_braces(pattern, limit=_MAX_BRACE_EXPANSIONS)
    except BraceError as exc:
        raise GlobError(str(exc)) from None


def _translate_segment(segment: str) -> str:
    """Regex source for one path segment (no `/`, no braces); `*` and `?` never cross a `/`."""
    out: list[str] = []
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "\\" and i + 1 < len(segment):
            out.append(re.escape(segment[i + 1]))
            i += 2
        elif ch == "*":
            while i < len(segment) and segment[i] == "*":
                i += 1
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            end = _class_end(segment, i)
            body = segment[i + 1 : end - 1]
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            members = "".join("\\" + c if c in "\\^[]" else c for c in body)
            out.append(f"[^/{members}]" if negate else f"[{members}]")
            i = end
        else:
            out.append(re.escape(ch))
            i += 1
    return "".join(out)


def _compile_alternative(pattern: str) -> tuple[re.Pattern[str], list[re.Pattern[str] | None]]:
    """The full-path regex of a brace-free glob, and one regex per segment (None for `**`)."""
    segments = pattern.split("/")
    parts: list[str] = []
    compiled: list[re.Pattern[str] | None] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            compiled.append(None)
            parts.append(".*" if last else "(?:[^/]+/)*")
            continue
        source = _translate_segment(segment)
        compiled.append(re.compile(source))
        parts.append(source if last else source + "/")
    return re.compile("".join(parts)), compiled


class GlobMatcher:
    """Matches `/`-separated relative paths against a glob with `**`, `*`, `?`, `[...]` and `{a,b}`.

    `*` and `?` never match `/` but do match a leading dot (hidden files are ordinary files here).
    """

    def __init__(self, pattern: str) -> None:
        if not pattern:
            raise GlobError("the pattern is empty")
        self.pattern = pattern
        try:
            compiled = [_compile_alternative(alt) for alt in expand_braces(pattern)]
        except re.error as exc:
            raise GlobError(f"{pattern!r} is not a valid glob: {exc}") from None
        self._full = [full for full, _ in compiled]
        self._segments = [segments for _, segments in compiled]

    def matches(self, rel: str) -> bool:
        """Whether the file path `rel` (relative to the search root) matches."""
        return any(full.fullmatch(rel) for full in self._full)

    def may_contain(self, rel_dir: str) -> bool:
        """Whether some file under the directory `rel_dir` could match, so walking it is worthwhile."""
        parts = rel_dir.split("/")
        for segments in self._segments:
            for index, part in enumerate(parts):
                if index >= len(segments):
                    break
                segment = segments[index]
                if segment is None:
                    return True  # `**` matches anything below here
                if index == len(segments) - 1 or not segment.fullmatch(part):
                    break  # the last segment names files, not directories
            else:
                return True
        return False


# --- .gitignore-aware walking ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WalkedFile:
    """A regular file found by `walk_files`."""

    rel: str
    """Path relative to the workspace, `/`-separated."""
    sub: str
    """Path relative to the directory the walk started at."""
    path: str
    """Absolute path."""
    entry: os.DirEntry[str] | None
    """The directory entry, whose `stat()` is cached (None only for an explicitly named start file)."""


_Rules = tuple[tuple[str, GitIgnoreSpec], ...]
"""(directory with trailing slash, compiled .gitignore) pairs, outermost first."""


def _load_gitignore(directory: str) -> GitIgnoreSpec | None:
    try:
        with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except Exception:
        # One malformed line must not discard the whole file (git skips bad lines too).
        good: list[str] = []
        for line in lines:
            try:
                GitIgnoreSpec.from_lines([line])
            except Exception:
                continue
            good.append(line)
        spec = GitIgnoreSpec.from_lines(good)
    return spec if len(spec) else None


def _is_ignored(rules: _Rules, path: str, is_dir: bool) -> bool:
    # Deeper .gitignore files take precedence; within a file the last matching line wins (check_file does that).
    for base, spec in reversed(rules):
        rel = path[len(base) :]
        result = spec.check_file(rel + "/" if is_dir else rel)
        if result.include is not None:
            return result.include
    return False


def _ancestor_rules(start: str) -> _Rules:
    """The .gitignore files above `start`, as ripgrep applies them (it reads parents up to the root).

    A rule file that ignores `start` itself (or a directory between it and `start`) is skipped: naming an
    ignored directory explicitly means "search it", as it does for ripgrep.
    """
    ancestors: list[str] = []
    current = start
    while True:
        parent = os.path.dirname(current)
        if parent == current:
            break
        ancestors.append(parent)
        current = parent
    rules: list[tuple[str, GitIgnoreSpec]] = []
    for directory in reversed(ancestors):
        spec = _load_gitignore(directory)
        if spec is None:
            continue
        base = directory.rstrip("/") + "/"
        between = start[len(base) :].split("/")
        if any(spec.match_file("/".join(between[: i + 1]) + "/") for i in range(len(between))):
            continue
        rules.append((base, spec))
    return tuple(rules)


def walk_files(
    root: Path,
    start: Path,
    *,
    descend: Callable[[str], bool] | None = None,
    include_file_links: bool = False,
    checkpoint: Callable[[], None] = thread_checkpoint,
) -> Iterator[WalkedFile]:
    """Yield the files under `start` that git would not ignore, depth first, sorted by name in each directory.

    `root` is the resolved workspace and `start` a resolved directory inside it. `.git` is always skipped;
    hidden files are included. Symlinked directories are never followed, so the walk cannot leave the
    workspace; symlinked files are yielded only with `include_file_links` and only when their target is a
    regular file inside the workspace. `descend(sub_dir)` can prune directories (paths relative to `start`).
    The order matches `rg --sort path`.
    """
    root_str = str(root)
    root_prefix = root_str.rstrip("/") + "/"
    start_str = str(start)
    start_prefix = start_str.rstrip("/") + "/"
    rules = _ancestor_rules(start_str)
    stack: list[tuple[Iterator[os.DirEntry[str]], _Rules]] = []

    def open_dir(directory: str, inherited: _Rules) -> None:
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            return  # unreadable or vanished: skip it, as ripgrep does
        own = inherited
        if any(e.name == ".gitignore" for e in entries):
            spec = _load_gitignore(directory)
            if spec is not None:
                own = (*inherited, (directory.rstrip("/") + "/", spec))
        stack.append((iter(entries), own))

    open_dir(start_str, rules)
    seen = 0
    while stack:
        entries, current_rules = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        seen += 1
        if seen % _CHECKPOINT_EVERY == 0:
            checkpoint()
        kind = _kind(entry)
        if kind is None or _is_ignored(current_rules, entry.path, kind == "dir"):
            continue
        sub = entry.path[len(start_prefix) :]
        if kind == "dir":
            if descend is None or descend(sub):
                open_dir(entry.path, current_rules)
        elif kind == "file" or (include_file_links and _link_target_is_inside(entry.path, root_prefix)):
            yield WalkedFile(rel=entry.path[len(root_prefix) :], sub=sub, path=entry.path, entry=entry)


def _kind(entry: os.DirEntry[str]) -> Literal["dir", "file", "link"] | None:
    """What a directory entry is, without following symlinks; None for `.git` and for special files."""
    if entry.name == ".git":
        return None
    try:
        if entry.is_symlink():
            return "link"
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        if entry.is_file(follow_symlinks=False):
            return "file"
    except OSError:
        pass  # vanished or unreadable
    return None  # fifos, sockets, devices


def _link_target_is_inside(link: str, root_prefix: str) -> bool:
    target = os.path.realpath(link)
    if not target.startswith(root_prefix):
        return False
    try:
        return stat.S_ISREG(os.stat(target).st_mode)
    except OSError:
        return False


def file_mtime(found: WalkedFile) -> float:
    """Modification time of a walked file (its target's, for a symlink); 0 when it vanished."""
    try:
        if found.entry is not None:
            return found.entry.stat().st_mtime
        return os.stat(found.path).st_mtime
    except OSError:
        return 0.0
