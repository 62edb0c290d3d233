"""An answer's sources in the terminal clients: the passages its `citations` events named, numbered as every client
numbers them (each passage once, in the order they arrived across the operation), and the one dim `Sources:` line
the CLI and the TUI show under the answer.

Paths and headings are file content: cleaned of control characters before they reach a terminal.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from rich.text import Text

from cowork.protocol import Citation, Citations, ReceivedPayload, UserMessage

from .format import clean, shorten

__all__ = ["Source", "Sources", "operation_sources", "source_label", "sources_line"]

HEADING_WIDTH = 40
"""A heading longer than this is cut (its innermost part kept): the line lists several sources."""


@dataclass(frozen=True)
class Source:
    """A cited passage and the number it is shown with."""

    number: int
    citation: Citation


class Sources:
    """One operation's cited passages, numbered from 1 in arrival order; a passage cited again keeps its number."""

    def __init__(self) -> None:
        self._by_chunk: dict[int, Source] = {}

    def add(self, event: Citations) -> list[Source]:
        """Number the event's passages not seen before; returns those."""
        added = []
        for citation in event.citations:
            if citation.chunk_id not in self._by_chunk:
                source = Source(len(self._by_chunk) + 1, citation)
                self._by_chunk[citation.chunk_id] = source
                added.append(source)
        return added

    def get(self, number: int) -> Source | None:
        """The source shown as `[number]`, if there is one."""
        sources = list(self._by_chunk.values())
        return sources[number - 1] if 1 <= number <= len(sources) else None

    def __len__(self) -> int:
        return len(self._by_chunk)

    def __iter__(self) -> Iterator[Source]:
        return iter(self._by_chunk.values())


def _heading(heading: str, width: int) -> str:
    # Headings are paths ("Handbook › Leave › Holiday policy"): the innermost parts say most, so the outer ones go.
    heading = " ".join(heading.split())
    if len(heading) <= width:
        return heading
    parts = heading.split(" › ")
    kept = parts[-1]
    for part in reversed(parts[:-1]):
        if len(f"… › {part} › {kept}") > width:
            break
        kept = f"{part} › {kept}"
    return shorten(f"… › {kept}" if len(parts) > 1 else kept, width)


def source_label(path: str, heading: str, heading_width: int = HEADING_WIDTH) -> str:
    """`path › heading` on one line (the heading cut to `heading_width`), or the path alone before any heading."""
    heading = _heading(clean(heading), heading_width)
    path = " ".join(clean(path).split())
    return f"{path} › {heading}" if heading else path


def sources_line(sources: Iterable[Source]) -> Text:
    """`Sources: [1] docs/leave.md › Holiday policy · [2] …`, dim."""
    return Text(
        "Sources: " + " · ".join(f"[{s.number}] {source_label(s.citation.path, s.citation.heading)}" for s in sources),
        style="dim",
    )


def operation_sources(payloads: Iterable[ReceivedPayload], operation_id: str | None = None) -> Sources:
    """An operation's sources, from its session's event log (a resumed turn's `citations` events too); by default
    the latest turn's: the operation of the last message that started a turn (not a steer)."""
    latest: str | None = operation_id
    by_operation: dict[str, Sources] = {}
    for payload in payloads:
        if operation_id is None and isinstance(payload, UserMessage) and not payload.steer:
            latest = payload.operation_id
        elif isinstance(payload, Citations):
            by_operation.setdefault(payload.operation_id, Sources()).add(payload)
    return by_operation.get(latest, Sources()) if latest is not None else Sources()
