"""The `memory` tool: the agent's persistent memory, a short hot cache (AGENT.md) and a deep store of notes."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cowork.tools._base import Tool, ToolContext, ToolError
from cowork.tools._fsutil import human_size, run_blocking
from cowork.tools._write import count_lines, write_atomically

__all__ = ["MemoryFile", "MemoryFiles", "MemoryNotFound", "MemoryParams", "MemoryTool"]

HOT_CACHE = "AGENT.md"
HOT_CACHE_MAX_LINES = 100
MAX_RESULTS = 50
MAX_READ_CHARS = 100_000
MAX_SEARCH_BYTES = 4 * 1024 * 1024
Scope = Literal["project", "user"]


class MemoryParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["read", "write", "search", "list"] = Field(description="What to do.")
    key: str | None = Field(
        default=None,
        description=(
            'Which memory: omitted or "AGENT.md" for the hot cache; otherwise a path in the deep store such as '
            '"glossary", "people/sarah", "projects/apollo" (".md" is added). Used by read and write.'
        ),
    )
    content: str | None = Field(default=None, description="write: the complete new content of that memory file.")
    query: str | None = Field(default=None, description="search: text to look for (case-insensitive).")
    scope: Scope | None = Field(
        default=None,
        description=(
            '"project" (this workspace; the default for read and write) or "user" (follows the user across '
            "projects). search and list cover both unless a scope is given."
        ),
    )


class MemoryTool(Tool[MemoryParams]):
    """Read, write, search and list the agent's persistent memory."""

    name = "memory"
    description = f"""Your persistent memory: what you learn about the user, their people, projects and vocabulary
survives across conversations here.

Two tiers, in two scopes ("project" = this workspace, the default; "user" = the user everywhere):
1. The hot cache, AGENT.md (key omitted): a short page loaded into every conversation. Keep it under
   {HOT_CACHE_MAX_LINES} lines: key people (name, role, nickname), acronyms in constant use, active projects,
   standing preferences.
2. The deep store: one markdown file per topic, e.g. key "glossary" (terms and acronyms), "people/sarah",
   "projects/apollo", "preferences", "context/team". Everything detailed goes here.

Lookup flow for unfamiliar shorthand, names or acronyms: the hot cache (shown in your instructions when
it exists) → search, or read "glossary" → the category file it points to → still unknown: ask the user,
then write the answer down so you never ask twice.
- "read": one memory file (the hot cache without key). "list": every memory file with its size.
  "search": case-insensitive text search over all memory files, answering `file:line: text`.
- "write" REPLACES the whole file with `content`: read it first and send the full updated text. Save
  durable facts you will need again; never secrets (passwords, keys), one-off task details, or what the
  workspace files already say. Files the user asked for are not memory: create those with write.
- Details go in the deep store, with a one-line pointer in the hot cache only when needed often. Use the
  user scope for what is true across projects (preferences, colleagues), the project scope otherwise.
- Keys are relative paths inside the store, without ".." or a leading "/". A missing key is an error
  listing what exists; use list or search to find the right one.
"""
    params = MemoryParams

    def side_effects_of(self, arguments: dict[str, Any]) -> bool:
        return arguments.get("action") == "write"

    async def run(self, params: MemoryParams, ctx: ToolContext) -> str:
        return await run_blocking(lambda: _run(params, ctx))


@dataclass(frozen=True)
class _Store:
    scope: Scope
    hot: Path
    deep: Path


def _store(ctx: ToolContext, scope: Scope) -> _Store:
    if scope == "user":
        if ctx.home is None:
            raise ToolError('User-scope memory is not available here (no Cowork home); use scope "project".')
        return _Store("user", ctx.home.resolve() / HOT_CACHE, ctx.home.resolve() / "memory")
    root = ctx.workspace.resolve()
    return _Store("project", root / HOT_CACHE, root / ".cowork" / "memory")


def _target(store: _Store, key: str | None) -> tuple[Path, str]:
    """The file a key names and its display name; refuses keys that would leave the store."""
    raw = (key or "").strip()
    if raw in ("", HOT_CACHE, "AGENT", "hot"):
        return store.hot, HOT_CACHE
    if "\\" in raw or "\x00" in raw:
        raise ToolError(f"Invalid memory key {key!r}: use '/' between parts, e.g. 'people/sarah'.")
    pure = PurePosixPath(raw.removeprefix("memory/"))
    if pure.is_absolute() or raw.startswith("~") or ".." in pure.parts or not pure.parts:
        raise ToolError(
            f"Invalid memory key {key!r}: keys are paths inside the memory store like 'glossary' or "
            "'people/sarah', without '..' or a leading '/'."
        )
    name = pure.as_posix()
    if not name.endswith(".md"):
        name += ".md"
    path = store.deep / name
    if not _inside(path, store.deep):
        raise ToolError(f"Invalid memory key {key!r}: it resolves outside the memory store.")
    return path, name


def _inside(path: Path, root: Path) -> bool:
    """Whether `path`, links and all, is inside `root` (False for a link loop or an unreadable link)."""
    try:
        return root.resolve() in path.resolve().parents
    except (OSError, RuntimeError):
        return False


def _run(params: MemoryParams, ctx: ToolContext) -> str:
    if params.action in ("read", "write"):
        store = _store(ctx, params.scope or "project")
        path, name = _target(store, params.key)
        if params.action == "read":
            return _read(ctx, store, path, name)
        return _write(ctx, store, path, name, params.content)
    stores = [_store(ctx, params.scope)] if params.scope else [_store(ctx, "project")]
    if params.scope is None and ctx.home is not None:
        stores.append(_store(ctx, "user"))
    if params.action == "list":
        return _list(ctx, stores)
    query = (params.query or "").strip()
    if not query:
        raise ToolError("search needs a non-empty `query`.")
    return _search(ctx, stores, query, tagged=len(stores) > 1)


def _read(ctx: ToolContext, store: _Store, path: Path, name: str) -> str:
    ctx.read_path(str(path))
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        if name == HOT_CACHE:
            return (
                f"There is no {store.scope} hot cache ({HOT_CACHE}) yet. Write one with action 'write' (key "
                "omitted) once you learn something worth remembering in every conversation."
            )
        known = [n for n, _ in _files(ctx, store) if n != HOT_CACHE]
        folder = name.removesuffix(".md") + "/"
        inside = [n for n in known if n.startswith(folder)]
        if inside:
            listing = ", ".join(inside[:30])
            raise ToolError(f"{folder} is a category folder; read one of its files: {listing}.") from None
        listing = ", ".join(known[:30]) or "none yet"
        raise ToolError(f"No {store.scope} memory named {name!r}. Existing memory files: {listing}.") from None
    except IsADirectoryError:
        raise ToolError(f"{name} is a folder, not a memory file; use list to see the files in it.") from None
    except OSError as exc:
        raise ToolError(f"Cannot read memory {name!r}: {exc.strerror or exc}.") from None
    if len(text) > MAX_READ_CHARS:
        text = text[:MAX_READ_CHARS] + f"\n\n(Cut at {MAX_READ_CHARS} characters; the file is longer.)"
    return text or f"(The memory file {name} is empty.)"


def _write(ctx: ToolContext, store: _Store, path: Path, name: str, content: str | None) -> str:
    if content is None:
        raise ToolError("write needs `content`: the complete new text of the memory file.")
    ctx.write_path(str(path))
    if path.is_dir():
        raise ToolError(f"{name!r} is a category folder; write to a file inside it, e.g. '{name[:-3]}/topic'.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ToolError(f"Cannot create the memory folder for {name!r}: {exc.strerror or exc}.") from None
    existed = path.exists()
    write_atomically(path, content.encode("utf-8", errors="replace"), name)
    lines = count_lines(content)
    plural = "line" if lines == 1 else "lines"
    result = f"{'Updated' if existed else 'Created'} {store.scope} memory {name} ({lines} {plural})."
    if name == HOT_CACHE and lines > HOT_CACHE_MAX_LINES:
        result += (
            f" Warning: the hot cache is loaded into every conversation and now has {lines} lines; keep it "
            f"under {HOT_CACHE_MAX_LINES} by moving details into deep-store files (e.g. 'people/<name>')."
        )
    return result


def _files(ctx: ToolContext, store: _Store) -> list[tuple[str, Path]]:
    """(display name, path) of every memory file in a store: the hot cache first, then the deep store."""
    found: list[tuple[str, Path]] = []
    if _readable(ctx, store.hot) and store.hot.is_file():
        found.append((HOT_CACHE, store.hot))
    deep = store.deep.resolve()
    if not _readable(ctx, deep):
        return found
    notes: list[tuple[str, Path]] = []
    for directory, dirnames, filenames in os.walk(deep):
        dirnames.sort()
        for filename in filenames:
            path = Path(directory) / filename
            # A link inside the store may point anywhere; only files that really are in it count.
            if filename.endswith(".md") and _inside(path, deep) and path.is_file():
                notes.append((path.relative_to(deep).as_posix(), path))
    return found + sorted(notes)


def _readable(ctx: ToolContext, path: Path) -> bool:
    try:
        ctx.read_path(str(path))
    except ToolError:
        return False
    return True


def _size(path: Path) -> str:
    try:
        return human_size(path.stat().st_size)
    except OSError:
        return "unreadable"


def _list(ctx: ToolContext, stores: list[_Store]) -> str:
    out: list[str] = []
    for store in stores:
        files = _files(ctx, store)
        out.append(f"{store.scope.capitalize()} memory (hot cache {store.hot}, store {store.deep}/):")
        out += [f"- {name} ({_size(path)})" for name, path in files] or ["- (empty)"]
    return "\n".join(out)


def _search(ctx: ToolContext, stores: list[_Store], query: str, *, tagged: bool) -> str:
    needle = query.casefold()
    hits: list[str] = []
    total = 0
    for store in stores:
        prefix = f"[{store.scope}] " if tagged else ""
        for name, path in _files(ctx, store):
            try:
                if path.stat().st_size > MAX_SEARCH_BYTES:
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for number, line in enumerate(text.splitlines(), start=1):
                if needle in line.casefold():
                    total += 1
                    if len(hits) < MAX_RESULTS:
                        hits.append(f"{prefix}{name}:{number}: {line.strip()[:300]}")
    if not hits:
        where = " and ".join(s.scope for s in stores)
        return f"Nothing found for {query!r} in {where} memory. If it matters, ask the user and write it down."
    if total > len(hits):
        hits.append(f"({total - len(hits)} more matches not shown; search for something more specific.)")
    return "\n".join(hits)


# ---- the same files for people: `memory/list|get|update|delete` --------------------------------------------------


class MemoryNotFound(ToolError):
    """No memory file by that key in that scope."""


@dataclass(frozen=True, slots=True)
class MemoryFile:
    scope: Scope
    key: str
    """`AGENT.md` for the hot cache; the deep store's path without `.md` (`people/sarah`)."""
    path: Path
    size: int
    lines: int
    modified: float

    @property
    def hot(self) -> bool:
        """The hot cache: in every conversation's prompt."""
        return self.key == HOT_CACHE


class MemoryFiles:
    """The written memories of one folder (and of the user), as people see, correct and forget them.

    Keys and paths are checked exactly as the `memory` tool checks them (inside the store, no `..`, no link out,
    never a denied place). Blocking: call from a worker thread. Raises `ToolError` with a message for people.
    """

    def __init__(self, workspace: Path, home: Path | None) -> None:
        from cowork.policy import PathPolicy

        self._ctx = ToolContext(workspace=workspace, paths=PathPolicy.build(workspace, home=home), home=home)

    def _info(self, store: _Store, name: str, path: Path) -> MemoryFile:
        data = path.read_bytes()
        key = HOT_CACHE if name == HOT_CACHE else name.removesuffix(".md")
        return MemoryFile(
            store.scope, key, path, len(data), count_lines(data.decode("utf-8", "replace")), path.stat().st_mtime
        )

    def list(self) -> list[MemoryFile]:
        scopes: list[Scope] = ["project"]
        if self._ctx.home is not None:
            scopes.append("user")
        found: list[MemoryFile] = []
        for scope in scopes:
            store = _store(self._ctx, scope)
            for name, path in _files(self._ctx, store):
                try:
                    found.append(self._info(store, name, path))
                except OSError:
                    continue
        return found

    def _existing(self, scope: Scope, key: str) -> tuple[_Store, Path, str]:
        store = _store(self._ctx, scope)
        path, name = _target(store, key)
        self._ctx.read_path(str(path))
        if not path.is_file():
            raise MemoryNotFound(f"No {scope} memory named {name!r}.")
        return store, path, name

    def read(self, scope: Scope, key: str) -> tuple[MemoryFile, str]:
        store, path, name = self._existing(scope, key)
        try:
            return self._info(store, name, path), path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ToolError(f"Cannot read memory {name!r}: {exc.strerror or exc}.") from None

    def write(self, scope: Scope, key: str, content: str) -> MemoryFile:
        store = _store(self._ctx, scope)
        path, name = _target(store, key)
        _write(self._ctx, store, path, name, content)
        return self._info(store, name, path)

    def delete(self, scope: Scope, key: str) -> MemoryFile:
        store, path, name = self._existing(scope, key)
        self._ctx.write_path(str(path))
        gone = self._info(store, name, path)
        try:
            path.unlink()
        except OSError as exc:
            raise ToolError(f"Cannot delete memory {name!r}: {exc.strerror or exc}.") from None
        return gone
