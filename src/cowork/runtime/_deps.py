"""What every operation's runner shares (`RunnerDeps`) and asks of the runtime (`RunnerHooks`).

Apart from the runners themselves, so the runtime's registry and facade are built without loading the executors
(and pydantic-ai's model layer with them): those load with the first operation that runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cowork.capture import CaptureService
from cowork.config import CoworkConfig
from cowork.memory import ConversationRecall, WorkingMemory
from cowork.models import ModelCache
from cowork.observability import Tracing
from cowork.policy import ToolOverride
from cowork.retrieval import Retrieval
from cowork.sessions import Checkpoints, Journal, SessionFlags
from cowork.store import Database
from cowork.usage import UsageService

from ._state import LedgerEntry, OperationState

__all__ = ["RunnerDeps", "RunnerHooks"]


@dataclass(frozen=True)
class RunnerDeps:
    """What every operation's runner shares."""

    db: Database
    journal: Journal
    models: ModelCache
    config: CoworkConfig
    home: Path
    usage: UsageService
    bwrap: str | None = None
    """bubblewrap, when shell commands can run sandboxed."""
    checkpoints: Checkpoints | None = None
    """Keeps the folder's state before each call that changes it (none: not kept)."""
    tracing: Tracing | None = None
    """Spans for each operation (none: not traced)."""
    retrieval: Retrieval | None = None
    """The folders' document indexes `searchDocuments` reads (none: the tool says search is unavailable)."""
    working_memory: WorkingMemory | None = None
    """The user's profile, in every main agent's prompt (none: no profile, and the `profile` tool says so)."""
    recall: ConversationRecall | None = None
    """Past conversations, told of every turn that ends well (none: no recall, and the `recall` tool says so)."""
    capture: CaptureService | None = None
    """What the user works on, for the `activity` tool (none: the tool says capture is not available)."""


@dataclass
class RunnerHooks:
    """What a runner asks of the runtime: sub-agents, todos, being told its status changed."""

    spawn_agent: Callable[[OperationState, LedgerEntry, str, str, str | None], Awaitable[str]] | None = None
    set_todos: Callable[[OperationState, list[dict[str, str]]], Awaitable[None]] | None = None
    on_status: Callable[[OperationState], None] = field(default=lambda _state: None)
    session_flags: Callable[[str], SessionFlags] = field(default=lambda _sid: SessionFlags())
    """The session's live switches (network, yolo): read at every decision, so a toggle applies at once."""
    overrides: Callable[[], Mapping[str, ToolOverride]] = field(default=lambda: {})
