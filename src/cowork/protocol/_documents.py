"""Documents on the wire: previews of the files a session made (`document/preview`) and their bytes (`document/content`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import Params, WireModel

__all__ = [
    "DocumentContent",
    "DocumentKindName",
    "DocumentPreview",
    "DocumentRef",
    "PagePreviewInfo",
    "SheetPreviewInfo",
    "SlidePreviewInfo",
]

DocumentKindName = Literal["pdf", "docx", "xlsx", "pptx", "csv"]


class DocumentRef(Params):
    session_id: str = Field(min_length=1, max_length=200)
    path: str = Field(
        min_length=1,
        max_length=4096,
        description="The file, relative to the session's folder (as a `tool_result`'s `files` names it). Anything "
        "that resolves outside the folder (`..`, an absolute path elsewhere, a symbolic link out) is refused.",
    )


class SheetPreviewInfo(WireModel):
    name: str
    range: str = Field(description="The cells the sheet uses, e.g. `A1:D40`; `empty` when it has none.")
    rows: list[list[str]] = Field(description="Cell text from A1, row by row (at most 200 rows of 30 columns).")
    truncated: bool = Field(description="The sheet has more rows or columns than `rows` holds.")


class PagePreviewInfo(WireModel):
    number: int = Field(description="1-based page (or slide) number.")
    image: str = Field(description="The page drawn as a PNG, 800 pixels wide: a `data:image/png;base64,` URL.")


class SlidePreviewInfo(WireModel):
    number: int
    title: str | None = None
    text: str = Field(description="The slide's text as markdown-ish lines (tables as markdown tables).")
    notes: str = Field(default="", description="The speaker notes.")


class DocumentPreview(WireModel):
    """What a client shows of one document; which of `sheets`, `markdown`, `pages`, `slides` is set follows `kind`."""

    path: str = Field(description="The path as asked for.")
    kind: DocumentKindName
    size_bytes: int
    summary: str = Field(description="One line: `2 sheets: Sales (A1:D40), Notes (B2:D4)`, `12 slides`, `4 pages`.")
    sheets: list[SheetPreviewInfo] | None = Field(default=None, description="xlsx and csv.")
    markdown: str | None = Field(default=None, description="docx: its text as markdown (render with raw HTML off).")
    pages: list[PagePreviewInfo] | None = Field(
        default=None, description="pdf: the first 10 pages drawn; pptx: the slides drawn, when LibreOffice is there."
    )
    slides: list[SlidePreviewInfo] | None = Field(default=None, description="pptx: each slide's outline.")
    note: str | None = Field(default=None, description="What was left out and why.")


class DocumentContent(WireModel):
    path: str
    name: str = Field(description="The file's name, for saving it.")
    mime_type: str
    size_bytes: int
    data: str = Field(description="The file's bytes, base64 (files up to 20 MB).")
