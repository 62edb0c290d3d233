"""The line a client shows for a document a tool call made or changed: where it is and what is in it."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

from cowork.protocol import DocumentPreview

__all__ = ["document_files", "document_line"]

_SUFFIXES = (".pdf", ".docx", ".xlsx", ".xlsm", ".pptx", ".csv")


def document_files(files: Iterable[str]) -> list[str]:
    """The files a preview is made for (PDF, Word, Excel, PowerPoint, CSV)."""
    return [f for f in files if f.lower().endswith(_SUFFIXES)]


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{round(count / 1024)} KB"
    return f"{count / 1024 / 1024:.1f} MB"


def document_line(path: str, preview: DocumentPreview | None, error: str | None = None) -> Text:
    """`📄 out/report.xlsx — 2 sheets: Sales (A1:D40), Notes (A1:A3) · 12 KB`, or the file and why it has none."""
    if preview is None:
        return Text(f"  📄 {path} — {error or 'no preview'}", style="dim")
    return Text(f"  📄 {path} — {preview.summary} · {_size(preview.size_bytes)}", style="dim")
