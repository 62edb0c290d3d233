"""Row mapping shared by the repositories."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ["PG_WORDS", "escape_like", "from_row", "to_values"]

R = TypeVar("R")


def from_row(cls: type[R], row: Any) -> R:
    """Build a row dataclass from a result row with the same column names."""
    mapping = row._mapping
    return cls(**{f.name: mapping[f.name] for f in dataclasses.fields(cls) if f.name in mapping})  # type: ignore[arg-type]


def to_values(row: Any) -> dict[str, Any]:
    return {f.name: getattr(row, f.name) for f in dataclasses.fields(row)}


def escape_like(text: str) -> str:
    """`text` as a literal inside a LIKE pattern (with `escape="\\"`)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


PG_WORDS = "regexp_replace({}, '[^[:alnum:]]+', ' ', 'g')"
"""A text as PostgreSQL's full-text search is given it (SQL, `{}` the text): only letters and digits make words,
anything else parts them (`notes.txt` is `notes txt`), as in FTS5's unicode61 tokenizer. Migration 0018 indexes
exactly this expression."""
