"""Structure-aware chunking: markdown-ish text cut at headings and paragraphs, each chunk knowing where it sits.

A chunk never spans two top-level sections; inside a section, paragraphs are packed up to `target` characters and a
paragraph longer than `limit` is cut at sentence (then line, then word) boundaries. Fenced code stays whole up to
`limit`. A section too small to stand alone is carried into the next one of the same parent, so a page of short
entries does not become a pile of fragments. Every chunk keeps the heading path it sits under
(`Directory and files operations › Copying`), and what is embedded is the document's title and that path before the
text: "Titles prefixed to chunks raise the first-hit rate" (the memory issue), and a chunk about "it" still says
what "it" is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Chunk", "chunk_text", "embedding_text"]

TARGET_CHARS = 900
LIMIT_CHARS = 1400
SMALL_CHARS = 250

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+")
_LINE = re.compile(r"\n")
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Chunk:
    ordinal: int
    heading: str
    """The headings above the chunk, outermost first, joined by " › " ("" before the first heading)."""
    text: str


@dataclass
class _Section:
    path: tuple[str, ...]
    blocks: list[str]


def _clean_heading(text: str) -> str:
    return text.replace("¶", "").replace("`", "").strip()


def _sections(text: str) -> Iterator[_Section]:
    """Sections in order: the heading path and its blocks (paragraphs, lists, fenced code) as text."""
    path: list[tuple[int, str]] = []
    blocks: list[str] = []
    lines: list[str] = []
    in_fence = False

    def flush_block() -> None:
        if lines:
            block = "\n".join(lines).strip()
            if block:
                blocks.append(block)
            lines.clear()

    for raw in text.replace("¶", "").splitlines():
        if _FENCE.match(raw):
            if not in_fence:
                flush_block()
            lines.append(raw)
            in_fence = not in_fence
            if not in_fence:
                flush_block()
            continue
        if in_fence:
            lines.append(raw)
            continue
        heading = _HEADING.match(raw)
        if heading:
            flush_block()
            if blocks:
                yield _Section(tuple(title for _, title in path), blocks)
                blocks = []
            level = len(heading.group(1))
            while path and path[-1][0] >= level:
                path.pop()
            title = _clean_heading(heading.group(2))
            if title:
                path.append((level, title))
            continue
        if not raw.strip():
            flush_block()
        else:
            lines.append(raw.rstrip())
    flush_block()
    if blocks:
        yield _Section(tuple(title for _, title in path), blocks)


def _split_long(block: str, limit: int, *, code: bool | None = None) -> Iterator[str]:
    """A block cut into pieces of at most `limit` characters at the gentlest boundary available: sentences, then
    lines, then words for prose; lines, then words for fenced code (whose lines stay whole and keep their breaks)."""
    if code is None:
        code = block.lstrip().startswith(("```", "~~~"))
    if len(block) <= limit:
        yield block
        return
    splitters = (
        ((_LINE, "\n"), (_WHITESPACE, " ")) if code else ((_SENTENCE_END, " "), (_LINE, "\n"), (_WHITESPACE, " "))
    )
    for splitter, joiner in splitters:
        pieces = [p for p in splitter.split(block) if p.strip()]
        if len(pieces) > 1:
            current = ""
            for piece in pieces:
                if current and len(current) + len(joiner) + len(piece) > limit:
                    yield from _split_long(current, limit, code=code)
                    current = piece
                else:
                    current = f"{current}{joiner}{piece}" if current else piece
            if current:
                yield from _split_long(current, limit, code=code)
            return
    for start in range(0, len(block), limit):
        yield block[start : start + limit]


def _join(path: tuple[str, ...]) -> str:
    return " › ".join(path)


def chunk_text(text: str, *, target: int = TARGET_CHARS, limit: int = LIMIT_CHARS) -> list[Chunk]:
    """`text` (markdown-ish) as chunks of about `target` characters, none longer than `limit`."""
    chunks: list[Chunk] = []
    buffer: list[str] = []
    buffer_path: tuple[str, ...] | None = None
    size = 0

    def emit() -> None:
        nonlocal buffer, size, buffer_path
        body = "\n\n".join(buffer).strip()
        if body:
            chunks.append(Chunk(len(chunks), _join(buffer_path or ()), body))
        buffer, size, buffer_path = [], 0, None

    for section in _sections(text):
        if buffer_path is not None and buffer_path != section.path:
            shares_parent = buffer_path[:1] == section.path[:1]
            if size >= SMALL_CHARS or not shares_parent:
                emit()
            else:  # a small section: carried into the next, its heading kept as a line of text
                sub = section.path[len(_common(buffer_path, section.path)) :]
                if sub:
                    buffer.append(" › ".join(sub))
                    size += len(buffer[-1])
        if buffer_path is None:
            buffer_path = section.path
        elif buffer_path != section.path:
            buffer_path = _common(buffer_path, section.path)
        for block in section.blocks:
            for piece in _split_long(block, limit):
                if buffer and size + len(piece) > target:
                    path = buffer_path
                    emit()
                    buffer_path = path
                buffer.append(piece)
                size += len(piece) + 2
    emit()
    return chunks


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    common: list[str] = []
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common.append(x)
    return tuple(common)


def embedding_text(title: str, chunk: Chunk) -> str:
    """What is embedded for a chunk: the document's title, the heading path, then the text."""
    if not chunk.heading or chunk.heading == title:
        head = title
    elif chunk.heading.startswith(f"{title} › "):  # the document's first heading is its title
        head = chunk.heading
    else:
        head = f"{title} › {chunk.heading}"
    return f"{head}\n\n{chunk.text}" if head else chunk.text
