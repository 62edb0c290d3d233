"""What a conversion returns: a `Document` of `Part`s with its `DocumentMeta`, or a `DocumentError`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Document", "DocumentError", "DocumentKind", "DocumentMeta", "Part", "PartKind"]

DocumentKind = Literal["pdf", "docx", "xlsx", "pptx"]
PartKind = Literal["page", "slide", "sheet", "section"]


class DocumentError(Exception):
    """A file that cannot be converted: corrupt, encrypted, too large once unpacked, or not what its name says.

    The message names the format and says what went wrong in words a model or a person can act on; it never
    carries a traceback.
    """


@dataclass(frozen=True, slots=True)
class Part:
    """One page, slide, sheet or (for Word documents) heading section, in document order."""

    kind: PartKind
    number: int
    """1-based position among the document's parts of this kind."""
    title: str | None
    """The slide title, the sheet name or the section's heading; None when there is none (PDF pages)."""
    text: str
    """The part's text as it appears in `Document.text`, its header line (`--- page 3 ---`, `## Slide 2: …`) included."""
    line: int
    """The 1-based line of `Document.text` this part starts at, for paging to it."""

    @property
    def label(self) -> str:
        """How the part is named to people: `page 3`, `slide 2: Plan`, `sheet "Budget"`, `section 4: Scope`."""
        if self.kind == "sheet":
            return f'sheet "{self.title}"'
        if self.title:
            return f"{self.kind} {self.number}: {self.title}"
        return f"{self.kind} {self.number}"


@dataclass(frozen=True, slots=True)
class DocumentMeta:
    """Counts and properties of the file itself (not only of what was converted)."""

    pages: int | None = None
    """PDF pages in the file."""
    slides: int | None = None
    sheets: int | None = None
    words: int | None = None
    """Words of a Word document's converted text (it has no pages until a program lays it out)."""
    title: str | None = None
    author: str | None = None
    omitted: tuple[str, ...] = ()
    """What was left out and why (pages past the cap, rows past a sheet's cap…); each is also a note in `text`."""


@dataclass(frozen=True, slots=True)
class Document:
    """A converted file: markdown-ish text, the same text cut into parts, and what the file says about itself."""

    kind: DocumentKind
    text: str
    parts: tuple[Part, ...]
    meta: DocumentMeta

    @property
    def line_count(self) -> int:
        """Lines in `text` (0 for an empty document)."""
        return len(self.text.splitlines())
