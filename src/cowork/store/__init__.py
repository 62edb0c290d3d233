"""Persistence: the database engine, the schema and its migrations, and the repositories.

Only this package writes SQL. Callers run repository functions inside `Database.write` / `Database.read`.
"""

from sqlalchemy.engine import Connection

from . import repos
from ._engine import Database
from ._listen import Listener, notify
from ._rows import (
    CheckpointFileRow,
    CheckpointRow,
    ContextSummaryRow,
    EventRow,
    HumanRequestRow,
    IngestJobRow,
    MessageRow,
    OperationInputRow,
    OperationRow,
    RagChunkRow,
    RagSourceRow,
    SessionRow,
    SpanRow,
    ToolCallRow,
    TraceRow,
    UsageRow,
)

__all__ = [
    "CheckpointFileRow",
    "CheckpointRow",
    "Connection",
    "ContextSummaryRow",
    "Database",
    "EventRow",
    "HumanRequestRow",
    "IngestJobRow",
    "Listener",
    "MessageRow",
    "OperationInputRow",
    "OperationRow",
    "RagChunkRow",
    "RagSourceRow",
    "SessionRow",
    "SpanRow",
    "ToolCallRow",
    "TraceRow",
    "UsageRow",
    "notify",
    "repos",
]
