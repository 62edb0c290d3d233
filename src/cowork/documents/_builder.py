"""Assembling a `Document` part by part, within the text budget every converter shares."""

from __future__ import annotations

from dataclasses import replace

from ._limits import MAX_TEXT_CHARS
from ._model import Document, DocumentKind, DocumentMeta, Part, PartKind

__all__ = ["DocumentBuilder"]


class DocumentBuilder:
    """Collects parts in order, numbers their lines, and stops taking them once the text budget is spent.

    Parts are separated by one blank line; document-level notes (what was left out) follow the last part.
    """

    def __init__(self, kind: DocumentKind, *, budget: int = MAX_TEXT_CHARS) -> None:
        self.kind: DocumentKind = kind
        self._budget = budget
        self._parts: list[Part] = []
        self._chars = 0
        self._next_line = 1
        self._counts: dict[PartKind, int] = {}
        self._notes: list[str] = []
        self.full = False
        """The budget is spent: converters stop adding parts (`add` refuses them anyway)."""

    def add(self, kind: PartKind, title: str | None, text: str) -> bool:
        """Append a part; False (and nothing appended) once the budget is spent.

        A part that does not fit whole is cut at a line boundary, marked, and is the last one taken.
        """
        if self.full:
            return False
        text = text.rstrip("\n")
        room = self._budget - self._chars
        if len(text) > room:
            cut = text.rfind("\n", 0, max(room, 0))
            text = text[: cut if cut > 0 else max(room, 0)]
            text += f"\n[... the rest of this {kind} was left out: the converted text reached its cap]"
            self.full = True
            self.note(
                f"Conversion stopped at {self._budget:,} characters of text; later {kind}s were left out. "
                "Work on a copy split into smaller files to read the rest."
            )
        number = self._counts.get(kind, 0) + 1
        self._counts[kind] = number
        self._parts.append(Part(kind=kind, number=number, title=title, text=text, line=self._next_line))
        self._chars += len(text) + 2
        self._next_line += text.count("\n") + 2  # its lines, then the blank line before the next part
        return not self.full

    def note(self, message: str) -> None:
        """Record what was left out; it ends the text and is listed in `DocumentMeta.omitted`."""
        self._notes.append(message)

    def build(self, meta: DocumentMeta) -> Document:
        """The document, with the notes recorded so far added to `meta.omitted`."""
        chunks = [part.text for part in self._parts]
        chunks += [f"(Note: {note})" for note in self._notes]
        omitted = (*meta.omitted, *self._notes)
        return Document(
            kind=self.kind,
            text="\n\n".join(chunks),
            parts=tuple(self._parts),
            meta=replace(meta, omitted=omitted),
        )
