"""A running ingestion job's counts, and the errors of its failed items, as they go into the job's row."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cowork.store import IngestJobRow

if TYPE_CHECKING:
    from ._index import IndexOutcome

__all__ = ["ITEM_ERRORS", "Progress"]

ITEM_ERRORS = 4000
"""Characters of the failed items' errors kept in a job's `error` (the first failures; `failed` counts them all)."""


class Progress:
    """A running job's counts, and the errors of its failed items (kept in the job's `error`)."""

    def __init__(self, job: IngestJobRow) -> None:
        self.done, self.failed, self.chunks = job.done, job.failed, job.chunks
        self.errors = job.error or ""  # a resumed job keeps the failures it recorded before it stopped
        self.published = 0.0

    def count(self, outcome: IndexOutcome, *, embedded: bool = True) -> None:
        self.done += 1
        if embedded:
            self.chunks += outcome.embedded
        if outcome.status != "failed":
            return
        self.failed += 1
        line = f"{outcome.uri}: {outcome.error or 'failed'}"
        if len(self.errors) + len(line) < ITEM_ERRORS:
            self.errors = f"{self.errors}\n{line}" if self.errors else line

    def values(self) -> dict[str, object]:
        return {"done": self.done, "failed": self.failed, "chunks": self.chunks, "error": self.errors or None}
