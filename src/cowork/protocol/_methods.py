"""Every JSON-RPC method: its params model, its result model, and what it does.

Over 500 lines on purpose: the method table reads as the protocol's reference, each params and result model beside
its `MethodSpec` (the MCP, provider, usage and value models already live in their own modules).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from ._automations import (
    AutomationChanged,
    AutomationCreateParams,
    AutomationDeleteResult,
    AutomationIdParams,
    AutomationInfo,
    AutomationListResult,
    AutomationRespondParams,
    AutomationRunIdParams,
    AutomationRunInfo,
    AutomationRunParams,
    AutomationRunsParams,
    AutomationRunsResult,
    AutomationUpdateParams,
    NotificationInfo,
    NotificationListParams,
    NotificationListResult,
    NotificationRespondParams,
)
from ._base import Count, OsText, Params, WireModel
from ._capture import (
    CaptureConfigureParams,
    CaptureStatus,
    ContextDeleteParams,
    ContextDeleteResult,
    ContextQueryParams,
    ContextQueryResult,
)
from ._commands import SlashCommand
from ._documents import DocumentContent, DocumentPreview, DocumentRef
from ._events import SessionEvent
from ._health import HealthResult
from ._mcp import (
    McpAddParams,
    McpListResult,
    McpNameParams,
    McpRemoveResult,
    McpServerInfo,
    McpTrustParams,
    McpTrustResult,
    McpUpdateParams,
    McpValidateParams,
    McpValidateResult,
)
from ._mcp_install import (
    InstallInfo,
    McpAuthStartParams,
    McpAuthStartResult,
    McpInstallContinueParams,
    McpInstallListParams,
    McpInstallListResult,
    McpInstallRef,
    McpInstallStartParams,
)
from ._memories import (
    MemoryContent,
    MemoryDeleteResult,
    MemoryFileInfo,
    MemoryListParams,
    MemoryListResult,
    MemoryRef,
    MemoryUpdateParams,
    ObservationDeleteParams,
    ObservationListResult,
    ObserveParams,
    ProfileDeleteParams,
    ProfileInfo,
    ProfileSetParams,
)
from ._providers import (
    ModelListParams,
    ModelListResult,
    ModelSetParams,
    ProviderConnectParams,
    ProviderDisconnectParams,
    ProviderDisconnectResult,
    ProviderStatusInfo,
    ProviderStatusParams,
    ProviderStatusResult,
    ReasoningEffort,
    TurnRetryParams,
    TurnRetryResult,
)
from ._retrieval import (
    IngestAddParams,
    IngestJobInfo,
    IngestJobRef,
    IngestStatusParams,
    IngestStatusResult,
    MemorySearchParams,
    MemorySearchResult,
    PassageInfo,
    PassageParams,
    PinListResult,
    PinParams,
    PinsParams,
)
from ._traces import TraceGetParams, TraceGetResult, TraceListParams, TraceListResult
from ._usage import (
    BudgetSetParams,
    BudgetSetResult,
    SessionUsageParams,
    SessionUsageResult,
    UsageSummaryParams,
    UsageSummaryResult,
)
from ._values import OperationInfo, OperationStatus, PendingRequests, Todo

__all__ = [
    "METHODS",
    "NOTIFICATIONS",
    "PROTOCOL_VERSION",
    "AgentCancelResult",
    "AgentListParams",
    "AgentListResult",
    "AgentWaitParams",
    "ApprovalRespondParams",
    "AskRespondParams",
    "Capabilities",
    "CheckpointInfo",
    "CheckpointListResult",
    "ClientInfo",
    "EmptyParams",
    "EventsReplayParams",
    "EventsReplayResult",
    "FileChange",
    "InitializeParams",
    "InitializeResult",
    "MessageInfo",
    "MethodSpec",
    "OperationRef",
    "OperationResumeResult",
    "PingResult",
    "PublicConfig",
    "RespondResult",
    "SearchHit",
    "ServerInfo",
    "SessionCompactParams",
    "SessionCreateParams",
    "SessionDeleteResult",
    "SessionDiffResult",
    "SessionExportParams",
    "SessionExportResult",
    "SessionForkParams",
    "SessionForkResult",
    "SessionGetParams",
    "SessionGetResult",
    "SessionImportParams",
    "SessionImportResult",
    "SessionInfo",
    "SessionListParams",
    "SessionListResult",
    "SessionRef",
    "SessionRestoreResult",
    "SessionRewindParams",
    "SessionSearchParams",
    "SessionSearchResult",
    "SessionUndoParams",
    "SessionUpdateParams",
    "SubscribeParams",
    "SubscribeResult",
    "ToolInfo",
    "ToolListResult",
    "ToolSetPolicyParams",
    "TurnCancelParams",
    "TurnCancelResult",
    "TurnStartParams",
    "TurnStartResult",
    "TurnSteerParams",
    "TurnSteerResult",
    "UnsubscribeResult",
]

PROTOCOL_VERSION = 12
"""Bumped on every change to the protocol. Changes are additive: old clients keep working."""

_ID = Field(min_length=1, max_length=200)


class EmptyParams(Params):
    """No parameters."""


class ClientInfo(WireModel):
    """Who is connecting (shown in logs)."""

    name: str = Field(max_length=200)
    version: str = Field(default="", max_length=100)


class InitializeParams(Params):
    client_info: ClientInfo | None = None
    protocol_version: int | None = Field(default=None, description="The newest protocol version the client knows.")


class ServerInfo(WireModel):
    """Which server answered."""

    name: str
    version: str
    pid: int | None = Field(default=None, description="The server's process id.")
    started_at: datetime | None = Field(default=None, description="When the server process started.")
    url: str | None = Field(default=None, description="Where the server listens.")
    environment: str | None = Field(
        default=None,
        description="A fingerprint (hash) of the provider settings the server was started with (API key and base "
        "URL variables, their values hashed). A client started with a different one knows the server will not "
        "see its environment.",
    )


class Capabilities(WireModel):
    """What this server offers; clients show only what is listed."""

    methods: list[str]
    event_types: list[str]
    tools: list[str]
    max_frame_bytes: int
    max_inflight_requests: int
    sandbox: bool = Field(default=False, description="Shell commands run sandboxed (bubblewrap found and enabled).")
    sandbox_note: str | None = Field(default=None, description="Why there is no sandbox, when there is none.")


class PublicConfig(WireModel):
    """Configuration a client may see (never secrets)."""

    workspace: str
    provider: str | None = None
    model: str | None = None
    home: str
    base_url: str | None = Field(default=None, description="The current provider's base URL, when one is set.")
    warnings: list[str] = Field(
        default_factory=list,
        description="What the user should be told about the configuration, e.g. workspace settings ignored because "
        "they could lower security and the workspace is not trusted.",
    )


class InitializeResult(WireModel):
    protocol_version: int
    server_info: ServerInfo
    capabilities: Capabilities
    config: PublicConfig
    commands: list[SlashCommand] = Field(
        default_factory=list, description="The slash commands clients offer (one table for every client)."
    )


class PingResult(WireModel):
    pong: Literal[True] = True
    time: datetime


class SessionInfo(WireModel):
    """A session: one conversation with the agent in one workspace."""

    id: str
    title: str
    workspace: str
    provider: str | None = None
    model: str | None = None
    created_at: datetime
    updated_at: datetime
    last_seq: int = Field(description="Sequence number of the newest event in the session's log (0 when empty).")
    active_operation_id: str | None = Field(default=None, description="The turn running now, if any.")
    network: bool = Field(default=False, description="Shell commands may reach the network.")
    yolo: bool = Field(default=False, description="Approvals and the sandbox are off.")
    reasoning_effort: ReasoningEffort | None = Field(default=None, description="null: the configured default.")
    auto_model: bool = Field(default=False, description="The router picks the model for each turn.")
    allowances: list[str] = Field(
        default_factory=list,
        description="What the user allowed for this session without asking again, in words (`edit`, `commands "
        "starting with git status`).",
    )
    plan_mode: bool = Field(default=False, description="Only tools that change nothing run (see `session/update`).")


class MessageInfo(WireModel):
    """A user or assistant message of a session, as people read it."""

    id: str
    role: Literal["user", "assistant"]
    text: str
    operation_id: str
    created_at: datetime
    ask_id: str | None = Field(default=None, description="Answers to the same request (try harder) share it.")
    superseded: bool = Field(default=False, description="A retry replaced this answer in the model's history.")
    excluded_from_context: bool = Field(
        default=False,
        description="Never sent to the model again: a grounded refusal (`memory.grounded`) and the question it refused.",
    )


class SessionCreateParams(Params):
    title: str | None = Field(default=None, max_length=500)
    workspace: OsText | None = Field(
        default=None, max_length=4096, description="Folder the agent works in; defaults to the server's workspace."
    )
    provider: str | None = Field(default=None, max_length=100)
    model: str | None = Field(default=None, max_length=200)
    network: bool | None = Field(default=None, description="Default: the configuration's tools.sandbox.network.")
    yolo: bool = Field(default=False, description="Approvals and the sandbox off for this session.")


class SessionListParams(Params):
    limit: int = Field(default=50, ge=1, le=500)
    offset: Count = 0
    query: str | None = Field(default=None, max_length=500, description="Only sessions whose title contains this.")
    workspace: OsText | None = Field(
        default=None, max_length=4096, description="Only sessions in this folder (compared after resolving it)."
    )
    include_empty: bool = Field(
        default=True, description="Also sessions without a single message (false: hide sessions nobody wrote in)."
    )


class SessionListResult(WireModel):
    sessions: list[SessionInfo]


class SessionGetParams(Params):
    session_id: str = _ID


class SessionRef(Params):
    session_id: str = _ID


class SessionUpdateParams(Params):
    session_id: str = _ID
    title: str | None = Field(default=None, min_length=1, max_length=500)
    network: bool | None = Field(default=None, description="Let shell commands reach the network.")
    yolo: bool | None = Field(default=None, description="Turn approvals and the sandbox off (on: true). Loud.")
    reasoning_effort: ReasoningEffort | Literal["default"] | None = Field(
        default=None, description="Reasoning effort for this session's turns; `default` goes back to the config's."
    )
    clear_allowances: bool | None = Field(
        default=None, description="true: forget what was allowed for the session; every call asks again."
    )
    plan_mode: bool | None = Field(
        default=None,
        description="Plan mode: only tools that change nothing run, so the agent plans (todos) first; false approves "
        "the plan and lets it act.",
    )


class ToolInfo(WireModel):
    """A tool the agent can call, and how its calls are approved."""

    name: str
    summary: str = Field(description="The first line of its description.")
    side_effects: bool
    policy: Literal["always", "never", "inherit"] = Field(
        description="always: ask before every call; never: never ask (security checks still apply); inherit."
    )


class ToolListResult(WireModel):
    tools: list[ToolInfo]


class ToolSetPolicyParams(Params):
    name: str = Field(min_length=1, max_length=300)
    policy: Literal["always", "never", "inherit"]


class SessionGetResult(WireModel):
    session: SessionInfo
    messages: list[MessageInfo]
    pending: PendingRequests = Field(default_factory=PendingRequests)
    todos: list[Todo] = Field(default_factory=list)


class SubscribeParams(Params):
    session_id: str = _ID
    after_seq: Count | None = Field(
        default=None,
        description="Also send every event after this seq before live ones (no gap, no duplicate). "
        "Omit to receive live events only.",
    )


class SubscribeResult(WireModel):
    last_seq: int
    pending: PendingRequests = Field(
        default_factory=PendingRequests,
        description="Approvals and questions the session is waiting on now, however long ago they were asked.",
    )


class UnsubscribeResult(WireModel):
    unsubscribed: bool


class TurnStartParams(Params):
    session_id: str = _ID
    text: str = Field(min_length=1, max_length=1_000_000)
    client_message_id: str = Field(
        min_length=1,
        max_length=200,
        description="Chosen by the client; sending the same id again returns the first turn instead of starting another.",
    )


class TurnStartResult(WireModel):
    operation_id: str
    status: OperationStatus
    duplicate: bool = Field(description="True when this clientMessageId had already started a turn.")


class SessionSearchParams(Params):
    query: str = Field(min_length=1, max_length=500, description="Words to find (all of them), as typed.")
    workspace: OsText | None = Field(default=None, max_length=4096, description="Only this folder's sessions.")
    limit: int = Field(default=20, ge=1, le=100)


class SearchHit(WireModel):
    """One place a session says the words: a message, or what a tool returned."""

    session_id: str
    title: str
    workspace: str
    updated_at: datetime
    kind: Literal["user", "assistant", "tool"]
    snippet: str = Field(description="The text around the match, cut with `…`.")
    matches: list[tuple[int, int]] = Field(description="Where the words are in `snippet`: [start, end) offsets.")


class SessionSearchResult(WireModel):
    hits: list[SearchHit]


class SessionDeleteResult(WireModel):
    session_id: str
    deleted: bool


class SessionExportParams(Params):
    session_id: str = _ID
    format: Literal["markdown", "json"] = Field(
        default="markdown", description="`markdown` for people; `json`: the session and its whole event log."
    )


class SessionForkParams(Params):
    session_id: str = _ID
    before_message: int | None = Field(
        default=None,
        ge=1,
        description="Fork before the user's message with this number (1: the first message that started a turn): the "
        "new session holds the conversation up to there. Omitted: all of it (a turn still under way is left out).",
    )


class SessionForkResult(WireModel):
    session: SessionInfo = Field(description="The new session (same folder, model and settings).")
    message: str | None = Field(
        default=None,
        description="The text of the message it was forked before, to send again or change (none for a whole fork).",
    )
    messages: int = Field(description="How many of the user's messages the new session holds.")


class CheckpointInfo(WireModel):
    """The folder's state kept before one tool call changed it."""

    id: int
    operation_id: str = Field(description="The turn (or sub-agent) whose call made the change.")
    tool_call_id: str
    tool: str
    message: int | None = Field(
        default=None, description="The number of the user's message whose turn made it (1: the first)."
    )
    files: list[str] = Field(description="What the call changed, relative to the folder (empty: nothing).")
    created_at: datetime
    undone: bool = Field(description="Reverted by `session/undo` or `session/rewind`.")


class CheckpointListResult(WireModel):
    checkpoints: list[CheckpointInfo] = Field(description="Newest first.")


class SessionUndoParams(Params):
    session_id: str = _ID
    apply: bool = Field(
        default=False, description="False: only say what would change (the preview, nothing is touched). True: do it."
    )
    overwrite: list[str] = Field(
        default_factory=list,
        max_length=10_000,
        description="Files changed since Cowork last changed them (outside Cowork) that may be overwritten: the "
        "`conflicts` the preview showed. Any other conflict refuses the restore (`files_changed`), so a file changed "
        "after the preview is never overwritten unseen.",
    )
    force: bool = Field(
        default=False, description="Overwrite every file changed outside Cowork, listed in `overwrite` or not."
    )


class SessionRewindParams(SessionUndoParams):
    before_message: int = Field(
        ge=1, description="Go back to before the user's message with this number (1: the first that started a turn)."
    )
    restore: Literal["files", "conversation", "both"] = Field(
        default="both",
        description="`files`: the folder as it was then; `conversation`: a new session holding the conversation "
        "before that message (like `session/fork`; this one stays as it is, so nothing is lost); `both`.",
    )


class SessionRestoreResult(WireModel):
    applied: bool = Field(description="False for a preview.")
    files: list[FileChange] = Field(
        description="What the restore changes (would change), each file from what it holds now to what it held."
    )
    conflicts: list[str] = Field(
        default_factory=list,
        description="Files changed since Cowork last changed them (outside Cowork): restoring overwrites that.",
    )
    skipped: list[str] = Field(
        default_factory=list, description="Files that cannot be restored, each with why (`path: reason`)."
    )
    checkpoints: list[CheckpointInfo] = Field(description="The changes taken back, newest first.")
    fork: SessionForkResult | None = Field(
        default=None, description="With `conversation` or `both`: the new session to go on in."
    )


class SessionImportParams(Params):
    content: str | None = Field(default=None, description="The export's text (what `session/export` made as `json`).")
    path: str | None = Field(
        default=None, max_length=4096, description="Or a file on the server's machine holding it (up to 64 MB)."
    )
    workspace: str | None = Field(
        default=None, description="The folder the new session works in (default: the server's)."
    )

    @model_validator(mode="after")
    def _one_source(self) -> SessionImportParams:
        if (self.content is None) == (self.path is None):
            raise ValueError("give the export as `content` or as `path`, one of them")
        return self


class SessionImportResult(WireModel):
    session: SessionInfo = Field(description="The new session: the conversation, with this machine's settings.")
    events: int = Field(description="Events brought in.")
    messages: int = Field(description="The user's messages that started a turn, among them.")
    skipped: int = Field(
        description="Events left out: approvals, questions, operation states, usage and streamed pieces (see docs)."
    )


class SessionExportResult(WireModel):
    filename: str = Field(description="A file name to save it under: the title made safe, with the extension.")
    media_type: str
    content: str
    events: int = Field(description="How many events of the log it was written from.")


class SessionCompactParams(Params):
    session_id: str = _ID
    instructions: str | None = Field(
        default=None, max_length=2000, description="What the summary should keep in particular (the user's words)."
    )


class TurnCancelParams(Params):
    session_id: str = _ID
    operation_id: str | None = Field(default=None, description="The turn to cancel; defaults to the running one.")


class TurnCancelResult(WireModel):
    cancelled: bool = Field(description="False when nothing was running.")


class TurnSteerParams(Params):
    session_id: str = _ID
    text: str = Field(min_length=1, max_length=1_000_000)
    client_message_id: str = Field(
        min_length=1, max_length=200, description="Sending the same id twice queues it once."
    )


class TurnSteerResult(WireModel):
    operation_id: str
    duplicate: bool


class ApprovalRespondParams(Params):
    request_id: str = _ID
    approved: bool
    message: str | None = Field(default=None, max_length=10_000, description="Told to the model with a rejection.")
    scope: Literal["once", "session"] = Field(
        default="once",
        description="`session` (with approved): allow this kind of call for the rest of the session without asking "
        "— the tool, or for shell commands the command prefix (see `sessionAllow`). Refused for dangerous calls.",
    )


class AskRespondParams(Params):
    request_id: str = _ID
    answer: str = Field(max_length=100_000)


class RespondResult(WireModel):
    request_id: str
    duplicate: bool = Field(description="True when this same answer had already been given (nothing changed).")


class OperationRef(Params):
    operation_id: str = _ID


class OperationResumeResult(WireModel):
    operation_id: str
    status: OperationStatus


class AgentListParams(Params):
    session_id: str | None = Field(default=None, max_length=200)
    operation_id: str | None = Field(default=None, max_length=200, description="Only this operation's sub-agents.")


class AgentListResult(WireModel):
    agents: list[OperationInfo]


class AgentWaitParams(Params):
    operation_id: str = _ID
    timeout_seconds: float = Field(default=300, gt=0, le=86_400)


class AgentCancelResult(WireModel):
    cancelled: bool


class FileChange(WireModel):
    """A file the session changed, against its content before the session's first change to it."""

    path: str = Field(description="Relative to the session's workspace.")
    status: Literal["added", "modified", "deleted"]
    diff: str = Field(description="Unified diff, cut at 64 KB.")
    additions: int = 0
    deletions: int = 0


class SessionDiffResult(WireModel):
    files: list[FileChange]
    truncated: bool = Field(default=False, description="Some diffs were cut, or more files changed than listed.")


class EventsReplayParams(Params):
    session_id: str = _ID
    after_seq: Count = 0
    limit: int = Field(default=1000, ge=1, le=10_000)


class EventsReplayResult(WireModel):
    events: list[SessionEvent]
    last_seq: int
    has_more: bool


@dataclass(frozen=True)
class MethodSpec:
    """A method's contract."""

    name: str
    params: type[Params]
    result: type[WireModel]
    summary: str
    errors: tuple[str, ...] = ()


def _spec(name: str, params: type[Params], result: type[WireModel], summary: str, *errors: str) -> MethodSpec:
    return MethodSpec(name, params, result, summary, errors)


METHODS: dict[str, MethodSpec] = {
    spec.name: spec
    for spec in (
        _spec(
            "initialize",
            InitializeParams,
            InitializeResult,
            "First call of a connection: protocol version, server info, capabilities and the public config.",
        ),
        _spec("ping", EmptyParams, PingResult, "Liveness check."),
        _spec(
            "health",
            EmptyParams,
            HealthResult,
            "Each subsystem (store, providers, MCP, sandbox, checkpoints, …) ready, degraded or disabled, and why; "
            "read live on each call, without network requests. `/healthz` gives the statuses without the reasons.",
        ),
        _spec(
            "trace/list",
            TraceListParams,
            TraceListResult,
            "Stored traces, newest first, each summed over its spans (duration, cost, tokens, failed or not); filter "
            "by session, time, duration (slow), failure or cost.",
        ),
        _spec(
            "trace/get",
            TraceGetParams,
            TraceGetResult,
            "One trace's spans (by trace id, by operation, or a session's latest): the turn, its steps, model calls "
            "with GenAI attributes (tokens, cost, time to first token), tool calls, approval waits and MCP calls.",
            "trace_not_found",
        ),
        _spec(
            "document/preview",
            DocumentRef,
            DocumentPreview,
            "A preview of a document in the session's folder (one a `tool_result`'s `files` names): a PDF's first "
            "pages as images, a workbook's or CSV file's sheets as cell grids, a Word document as markdown, a "
            "presentation's slides (as images when LibreOffice is installed, else their outline), and a one-line "
            "summary. Files over 50 MB are refused (`limit_exceeded`).",
            "session_not_found",
            "document_not_found",
            "path_denied",
            "document_unreadable",
            "invalid_params",
            "limit_exceeded",
        ),
        _spec(
            "document/content",
            DocumentRef,
            DocumentContent,
            "A document's bytes (base64), for a client to save: PDF, Word, Excel, PowerPoint and CSV files in the "
            "session's folder, up to 20 MB.",
            "session_not_found",
            "document_not_found",
            "path_denied",
            "invalid_params",
            "limit_exceeded",
        ),
        _spec("session/create", SessionCreateParams, SessionInfo, "Create a session.", "workspace_not_found"),
        _spec(
            "session/list",
            SessionListParams,
            SessionListResult,
            "List sessions, newest first (only one folder's with `workspace`; without empty ones with "
            "`includeEmpty: false`).",
        ),
        _spec(
            "session/diff",
            SessionRef,
            SessionDiffResult,
            "What the session changed in its folder (edits, writes and shell commands, from its checkpoints): each "
            "file against what it held before the session's first change to it.",
            "session_not_found",
        ),
        _spec(
            "session/search",
            SessionSearchParams,
            SessionSearchResult,
            "Full-text search across sessions (every folder's, or one's with `workspace`): what the user and the "
            "agent said and what tools returned. All the words must match; best matches first.",
        ),
        _spec(
            "session/delete",
            SessionRef,
            SessionDeleteResult,
            "Delete a session for good: its log, messages, tool calls and the outputs kept for it (its usage records "
            "stay, as spend). A turn waiting for an answer or interrupted is cancelled first; a running one is refused "
            "(`busy`): cancel it first.",
            "session_not_found",
            "busy",
        ),
        _spec(
            "session/fork",
            SessionForkParams,
            SessionForkResult,
            "A new session holding this one's conversation up to a point (before one of the user's messages, or all of "
            "it): its events, the model's history, and its settings. The two go on apart from then on; files are "
            "not copied (the folder is the same).",
            "session_not_found",
            "invalid_params",
        ),
        _spec(
            "checkpoint/list",
            SessionRef,
            CheckpointListResult,
            "The checkpoints of a session: before each tool call that changed its folder (writes, edits, shell "
            "commands not known to be read-only), what that call changed.",
            "session_not_found",
        ),
        _spec(
            "session/undo",
            SessionUndoParams,
            SessionRestoreResult,
            "Take back the session's last change to its folder not taken back yet: a preview (the diff) unless "
            "`apply`. Files changed outside Cowork since refuse it unless `force`.",
            "session_not_found",
            "busy",
            "nothing_to_undo",
            "files_changed",
        ),
        _spec(
            "session/rewind",
            SessionRewindParams,
            SessionRestoreResult,
            "Go back to before one of the user's messages: the folder's files as they were (every change since taken "
            "back), the conversation (a new session, like `session/fork`; this one stays), or both. A preview unless "
            "`apply`; files changed outside Cowork since refuse it unless `force`.",
            "session_not_found",
            "busy",
            "invalid_params",
            "files_changed",
        ),
        _spec(
            "session/import",
            SessionImportParams,
            SessionImportResult,
            "A new session made from a JSON export (`content`, or a file `path` on the server's machine): the "
            "conversation and the model's memory of it. The file is untrusted: every event must validate or nothing "
            "is imported; settings, approvals, questions, operation states and usage are not taken from it.",
            "invalid_params",
            "workspace_not_found",
        ),
        _spec(
            "session/export",
            SessionExportParams,
            SessionExportResult,
            "The session written out: Markdown for people (messages, tool calls with shortened results, diffs), or "
            "JSON (the session and its whole event log, as `events/replay` returns it).",
            "session_not_found",
        ),
        _spec(
            "session/compact",
            SessionCompactParams,
            TurnStartResult,
            "Compress the session's history now: the model summarises all but the latest exchange, and later turns "
            "see the summary instead (`context_compressed`). Runs as an operation of its own (origin `compact`, "
            "it ends `done` with what it did as its summary). On a WebSocket the connection is subscribed to the "
            "session.",
            "session_not_found",
            "busy",
            "nothing_to_compact",
            "no_provider",
        ),
        _spec(
            "session/update",
            SessionUpdateParams,
            SessionInfo,
            "Change a session's title or switches: `network` (shell commands may reach the network) and `yolo` "
            "(approvals and the sandbox off).",
            "session_not_found",
        ),
        _spec("tool/list", EmptyParams, ToolListResult, "The tools the agent can call, with their approval policy."),
        _spec(
            "tool/setPolicy",
            ToolSetPolicyParams,
            ToolInfo,
            "Set a tool's approval override: always ask, never ask, or inherit the default.",
            "tool_not_found",
        ),
        _spec("session/get", SessionGetParams, SessionGetResult, "A session and its messages.", "session_not_found"),
        _spec(
            "session/subscribe",
            SubscribeParams,
            SubscribeResult,
            "Receive the session's events as `session/event` notifications on this connection "
            "(WebSocket only), optionally replaying those after `afterSeq` first.",
            "session_not_found",
        ),
        _spec(
            "session/unsubscribe",
            SessionRef,
            UnsubscribeResult,
            "Stop receiving a session's events on this connection.",
        ),
        _spec(
            "turn/start",
            TurnStartParams,
            TurnStartResult,
            "Send user input and start the agent. Idempotent by `clientMessageId`. "
            "On a WebSocket the connection is subscribed to the session.",
            "session_not_found",
            "busy",
            "no_provider",
        ),
        _spec(
            "turn/cancel",
            TurnCancelParams,
            TurnCancelResult,
            "Cancel the running turn: the model stream and running tools are aborted.",
            "session_not_found",
            "operation_not_found",
        ),
        _spec(
            "events/replay",
            EventsReplayParams,
            EventsReplayResult,
            "The session's events after `afterSeq`, oldest first, at most `limit`.",
            "session_not_found",
        ),
        _spec(
            "turn/steer",
            TurnSteerParams,
            TurnSteerResult,
            "Add user input to the running turn; it reaches the model at the next step boundary, in order.",
            "session_not_found",
            "not_running",
        ),
        _spec(
            "approval/respond",
            ApprovalRespondParams,
            RespondResult,
            "Approve or reject a tool call waiting for approval. The same answer again is a no-op; "
            "a different answer to a resolved request is `already_resolved`.",
            "request_not_found",
            "already_resolved",
        ),
        _spec(
            "ask/respond",
            AskRespondParams,
            RespondResult,
            "Answer a question the agent asked (or a guardrail's `continue`/`stop`).",
            "request_not_found",
            "already_resolved",
        ),
        _spec(
            "operation/get",
            OperationRef,
            OperationInfo,
            "An operation's status, spend and tool-call ledger.",
            "operation_not_found",
        ),
        _spec(
            "operation/resume",
            OperationRef,
            OperationResumeResult,
            "Continue an interrupted (or guardrail-paused) operation from its last persisted step. Finished tool "
            "calls are not re-run; an unfinished call with side effects is asked about again.",
            "operation_not_found",
            "not_resumable",
            "busy",
        ),
        _spec(
            "agent/list",
            AgentListParams,
            AgentListResult,
            "Sub-agents of a session or of one operation.",
        ),
        _spec(
            "agent/wait",
            AgentWaitParams,
            OperationInfo,
            "Wait until a sub-agent ends (or the timeout passes) and return its state and report.",
            "operation_not_found",
        ),
        _spec(
            "agent/cancel",
            OperationRef,
            AgentCancelResult,
            "Cancel a running sub-agent; its parent gets the cancellation as the tool's result.",
            "operation_not_found",
        ),
        _spec(
            "model/list",
            ModelListParams,
            ModelListResult,
            "Providers and models (the catalog plus what running local servers report), which are current, and "
            "the router's tiers.",
        ),
        _spec(
            "model/set",
            ModelSetParams,
            SessionInfo,
            "Switch a session's provider and model (or `auto`: the router picks per turn); history is kept and "
            "applies to the next turn.",
            "session_not_found",
            "unknown_provider",
            "busy",
        ),
        _spec(
            "provider/connect",
            ProviderConnectParams,
            ProviderStatusInfo,
            "Save a provider's API key to the credential store (never to config) and/or its base URL, after "
            "checking them unless `verify` is false. Nothing is saved when the check fails.",
            "unknown_provider",
            "auth_failed",
            "provider_unavailable",
            "invalid_params",
        ),
        _spec(
            "provider/disconnect",
            ProviderDisconnectParams,
            ProviderDisconnectResult,
            "Forget a provider's saved key and base URL (environment variables are not touched).",
            "unknown_provider",
        ),
        _spec(
            "provider/status",
            ProviderStatusParams,
            ProviderStatusResult,
            "Each provider's state: connected, missing key, unreachable or auth failed (local servers are probed; "
            "for Ollama, whether each model fits in memory).",
            "unknown_provider",
        ),
        _spec(
            "session/usage",
            SessionUsageParams,
            SessionUsageResult,
            "Tokens and cost of a session: totals, per model, per request, per retry group.",
            "session_not_found",
        ),
        _spec(
            "usage/summary",
            UsageSummaryParams,
            UsageSummaryResult,
            "Spend today, this week and this month, per day and per model, and every budget's state.",
        ),
        _spec(
            "budget/set",
            BudgetSetParams,
            BudgetSetResult,
            "Change budget caps (per interaction, daily, weekly, monthly) or the warning share; kept across "
            "restarts. A turn paused by `budget_exceeded` continues with `operation/resume` once the cap allows.",
        ),
        _spec(
            "turn/retry",
            TurnRetryParams,
            TurnRetryResult,
            "Try harder: estimate (confirm false) or run (confirm true) a session's latest turn again on the next "
            "stronger tier. The answers share one `askId`; the retried answer replaces the original in the history "
            "the model sees.",
            "session_not_found",
            "operation_not_found",
            "not_resumable",
            "busy",
            "no_provider",
        ),
        _spec("mcp/list", EmptyParams, McpListResult, "Every configured MCP server with its live status and tools."),
        _spec(
            "mcp/add",
            McpAddParams,
            McpServerInfo,
            "Add an MCP server (kept in the database; it wins over config files). Starts it when enabled and "
            "autoStart; its tools become `mcp__<name>__<tool>`.",
            "invalid_params",
            "mcp_server_exists",
        ),
        _spec(
            "mcp/update",
            McpUpdateParams,
            McpServerInfo,
            "Change fields of an MCP server (a server from a config file becomes a database entry); a running "
            "server restarts when its connection settings changed.",
            "invalid_params",
            "mcp_server_not_found",
        ),
        _spec(
            "mcp/remove",
            McpNameParams,
            McpRemoveResult,
            "Stop an MCP server and forget it (a config-file server comes back at the next start unless removed "
            "from the file).",
            "mcp_server_not_found",
        ),
        _spec(
            "mcp/enable",
            McpNameParams,
            McpServerInfo,
            "Enable an MCP server (starts it if autoStart).",
            "mcp_server_not_found",
        ),
        _spec(
            "mcp/disable",
            McpNameParams,
            McpServerInfo,
            "Stop an MCP server and keep it stopped (`disabled`).",
            "mcp_server_not_found",
        ),
        _spec(
            "mcp/restart",
            McpNameParams,
            McpServerInfo,
            "Stop and start an MCP server again, resetting retries.",
            "mcp_server_not_found",
        ),
        _spec(
            "mcp/validate",
            McpValidateParams,
            McpValidateResult,
            "Start a server configuration (or a configured server, by name) on the side, list its tools, stop it. "
            "Saves nothing.",
            "invalid_params",
            "mcp_server_not_found",
        ),
        _spec(
            "mcp/trust",
            McpTrustParams,
            McpTrustResult,
            "Trust a workspace, so the stdio MCP servers its `.cowork/mcp-servers.json` defines may start.",
            "workspace_not_found",
        ),
    )
}

NOTIFICATIONS: dict[str, tuple[type[WireModel], str]] = {
    "session/event": (SessionEvent, "An event of a session this connection subscribes to (server → client)."),
    "mcp/status": (McpServerInfo, "An MCP server's status or tools changed (server → every connection)."),
}

# MCP install and OAuth sign-in (see docs/mcp-install.md).
METHODS.update(
    {
        spec.name: spec
        for spec in (
            _spec(
                "mcp/install/start",
                McpInstallStartParams,
                InstallInfo,
                "Install an MCP server from a manifest (inline or a file): check its dependencies, ask for its "
                "configuration, start it and list its tools, save it. Pauses at `DEPENDENCIES_REQUIRED` and "
                "`CONFIGURATION_REQUIRED`; progress goes out as `mcp/install`.",
                "invalid_params",
                "busy",
            ),
            _spec(
                "mcp/install/continue",
                McpInstallContinueParams,
                InstallInfo,
                "Resume a paused install (after installing dependencies, or with the configuration form's "
                "`values`), or retry one in `ERROR`. Values that do not fit the form change nothing.",
                "mcp_install_not_found",
                "invalid_params",
                "busy",
                "not_resumable",
            ),
            _spec(
                "mcp/install/cancel",
                McpInstallRef,
                InstallInfo,
                "Cancel an install at any step: its server process is stopped, its secrets and any saved config "
                "deleted.",
                "mcp_install_not_found",
                "not_resumable",
            ),
            _spec("mcp/install/get", McpInstallRef, InstallInfo, "One install's state.", "mcp_install_not_found"),
            _spec("mcp/install/list", McpInstallListParams, McpInstallListResult, "Every install, newest first."),
            _spec(
                "mcp/auth/start",
                McpAuthStartParams,
                McpAuthStartResult,
                "Sign in to an HTTP MCP server with OAuth (PKCE): returns the authorization URL to open; the server "
                "receives the code on a loopback callback, stores the tokens in the credential store and "
                "reconnects.",
                "mcp_server_not_found",
                "invalid_params",
            ),
        )
    }
)
NOTIFICATIONS["mcp/install"] = (InstallInfo, "An MCP install changed state or progress (server → every connection).")

# Indexing and search (see docs/memory.md).
METHODS.update(
    {
        spec.name: spec
        for spec in (
            _spec(
                "ingest/add",
                IngestAddParams,
                IngestJobInfo,
                "Index files or folders of a session's folder for search (pdf, docx, xlsx, pptx, html, markdown, "
                "text, code, notebooks), and web pages by URL into the same index: a background job, persisted and "
                "resumable; progress goes out as `ingest/progress`. Unchanged files (same bytes, same embedder) and "
                "pages (same text) are not embedded again. A bad URL is `invalid_params` and starts nothing.",
                "session_not_found",
                "workspace_not_found",
                "path_denied",
                "invalid_params",
            ),
            _spec(
                "ingest/status",
                IngestStatusParams,
                IngestStatusResult,
                "One indexing job, or the most recent ones.",
                "job_not_found",
            ),
            _spec("ingest/pause", IngestJobRef, IngestJobInfo, "Pause a running job after its current file.",
                  "job_not_found", "invalid_params"),
            _spec("ingest/resume", IngestJobRef, IngestJobInfo,
                  "Resume a paused or failed job after the last file it finished.", "job_not_found", "invalid_params"),
            _spec("ingest/cancel", IngestJobRef, IngestJobInfo,
                  "Cancel a job; what it indexed so far stays searchable.", "job_not_found", "invalid_params"),
            _spec(
                "memory/search",
                MemorySearchParams,
                MemorySearchResult,
                "Search a folder's index: BM25 and vector rankings fused (or one of them), best chunks first, with "
                "the file, heading path and text of each.",
                "session_not_found",
                "workspace_not_found",
                "embedder_error",
            ),
            _spec(
                "memory/passage",
                PassageParams,
                PassageInfo,
                "One indexed passage of the folder (a `citations` event's or a search hit's `chunkId`), to show "
                "the source of an answer. A passage is gone once its file is indexed again: `passage_not_found`.",
                "passage_not_found",
                "session_not_found",
                "workspace_not_found",
            ),
            _spec("memory/pins", PinsParams, PinListResult, "The folder's pinned files.", "session_not_found",
                  "workspace_not_found"),
            _spec("memory/pin", PinParams, PinListResult,
                  "Pin a file of the folder: every passage of it goes first into every turn's context there "
                  "(within `memory.context_tokens`), whether or not `memory.context` is on. A file not indexed yet "
                  "starts a job for it.", "path_denied", "invalid_params", "session_not_found",
                  "workspace_not_found"),
            _spec("memory/unpin", PinParams, PinListResult, "Unpin a file.", "memory_not_found",
                  "session_not_found", "workspace_not_found"),
        )
    }
)  # fmt: skip
# The written memories, for people to see, correct and forget (see docs/memory.md).
METHODS.update(
    {
        spec.name: spec
        for spec in (
            _spec(
                "memory/list",
                MemoryListParams,
                MemoryListResult,
                "The folder's and the user's written memories: the hot cache (`AGENT.md`, in every conversation) and "
                "the deep store's notes the `memory` tool keeps.",
                "session_not_found",
                "workspace_not_found",
            ),
            _spec("memory/get", MemoryRef, MemoryContent, "One memory's text.", "memory_not_found", "invalid_params",
                  "session_not_found", "workspace_not_found"),
            _spec("memory/update", MemoryUpdateParams, MemoryFileInfo,
                  "Replace (or create) one memory's text: what the agent will remember from now on.",
                  "invalid_params", "session_not_found", "workspace_not_found"),
            _spec("memory/delete", MemoryRef, MemoryDeleteResult, "Forget one memory (its file is deleted).",
                  "memory_not_found", "invalid_params", "session_not_found", "workspace_not_found"),
            _spec("memory/profile", EmptyParams, ProfileInfo,
                  "The user's profile (working memory): short entries about the user, in every conversation's "
                  "prompt, kept by the agent's `profile` tool and by people."),
            _spec("memory/profile/set", ProfileSetParams, ProfileInfo, "Add or correct one profile entry.",
                  "invalid_params"),
            _spec("memory/profile/delete", ProfileDeleteParams, ProfileInfo, "Forget one profile entry.",
                  "memory_not_found", "invalid_params"),
            _spec("memory/observations", MemoryListParams, ObservationListResult,
                  "The folder's observations (observational memory): dated notes the model made of resting "
                  "conversations, which `recall` searches.", "session_not_found", "workspace_not_found"),
            _spec("memory/observations/delete", ObservationDeleteParams, ObservationListResult,
                  "Forget one set of observations (it leaves the index; the conversation is not observed again).",
                  "memory_not_found", "session_not_found", "workspace_not_found"),
            _spec("memory/observe", ObserveParams, TurnStartResult,
                  "Observe a conversation now: an `observe` operation notes dated observations of its turns not "
                  "observed yet (one model request; budgets apply).", "session_not_found", "busy", "no_provider",
                  "unknown_provider"),
        )
    }
)  # fmt: skip
NOTIFICATIONS["ingest/progress"] = (
    IngestJobInfo,
    "An indexing job changed state or made progress (server → every connection; at most a few per second).",
)

# Activity capture and context (see docs/capture.md).
METHODS.update(
    {
        spec.name: spec
        for spec in (
            _spec(
                "capture/status",
                EmptyParams,
                CaptureStatus,
                "What activity capture does now: its state, the source, consent per stream, the exclusions, the "
                "window being recorded and the deep-work signal. Changes go out as `capture/status`.",
            ),
            _spec(
                "capture/configure",
                CaptureConfigureParams,
                CaptureStatus,
                "Change consent per stream, pause or resume all capture, the user's exclusions and the retention. "
                "The change is kept across restarts; a stream this build cannot capture is `invalid_params`, and a "
                "refused change changes nothing.",
                "invalid_params",
            ),
            _spec(
                "context/query",
                ContextQueryParams,
                ContextQueryResult,
                "What was captured in a time range (default: the last 24 hours): spans of activity, time per "
                "application, focus sessions, and with `query` the hours that match it best.",
                "invalid_params",
                "embedder_error",
            ),
            _spec(
                "context/delete",
                ContextDeleteParams,
                ContextDeleteResult,
                "Delete what was captured in a time range, and its entries in the activity index.",
                "invalid_params",
            ),
        )
    }
)
NOTIFICATIONS["capture/status"] = (
    CaptureStatus,
    "Capture started, stopped, paused, changed window or consent, or entered or left deep work (server → every "
    "connection).",
)

# Automations and proactive notifications (see docs/automations.md).
_NOT_FOUND = "automation_not_found"
METHODS.update(
    {
        spec.name: spec
        for spec in (
            _spec("automation/list", EmptyParams, AutomationListResult,
                  "Every saved automation, with its next fire time and last run."),
            _spec("automation/get", AutomationIdParams, AutomationInfo,
                  "One automation (by id or name), with its definition as an object and as a YAML file.", _NOT_FOUND),
            _spec("automation/create", AutomationCreateParams, AutomationInfo,
                  "Save a new automation from a definition or a flow file's text (YAML or TOML). A flow that does "
                  "not validate is `invalid_params` with one line per problem, and nothing is saved.",
                  "invalid_params", "automation_exists"),
            _spec("automation/update", AutomationUpdateParams, AutomationInfo,
                  "Replace an automation's definition; its version goes up by one (runs keep the version they ran).",
                  "invalid_params", _NOT_FOUND, "automation_exists"),
            _spec("automation/delete", AutomationIdParams, AutomationDeleteResult,
                  "Delete an automation and its run history; a run in progress is cancelled first.", _NOT_FOUND),
            _spec("automation/enable", AutomationIdParams, AutomationInfo,
                  "Enable an automation: its trigger fires and the agent can call it as `flow_<name>`.", _NOT_FOUND),
            _spec("automation/disable", AutomationIdParams, AutomationInfo,
                  "Disable an automation: its trigger no longer fires and its tool is withdrawn.", _NOT_FOUND),
            _spec("automation/run", AutomationRunParams, AutomationRunInfo,
                  "Run an automation now with these inputs (enabled or not). Answers once the run is recorded; "
                  "progress goes out as `automation/run`.", "invalid_params", _NOT_FOUND),
            _spec("automation/runs", AutomationRunsParams, AutomationRunsResult,
                  "Recent runs, newest first, each with its steps' input, output, duration and status.",
                  _NOT_FOUND, "run_not_found"),
            _spec("automation/cancel", AutomationRunIdParams, AutomationRunInfo,
                  "Cancel a run that is running, waiting or interrupted (its agent step's operation too).",
                  "run_not_found", "not_running"),
            _spec("automation/resume", AutomationRunIdParams, AutomationRunInfo,
                  "Go on with an interrupted run from the step that was cut short (a step with side effects asks "
                  "for approval again); finished steps are never run again.", "run_not_found", "not_resumable"),
            _spec("automation/respond", AutomationRespondParams, AutomationRunInfo,
                  "Approve or reject the step a run waits on; approving runs it and goes on.",
                  "run_not_found", "not_resumable"),
            _spec("notification/list", NotificationListParams, NotificationListResult,
                  "Recent notifications, newest first, with how the user answered each."),
            _spec("notification/respond", NotificationRespondParams, NotificationInfo,
                  "Answer a notification: accept, dismiss (kinds dismissed again and again are shown less), snooze "
                  "(shown again later) or expand.", "notification_not_found"),
        )
    }
)  # fmt: skip
NOTIFICATIONS["automation/run"] = (
    AutomationRunInfo,
    "A run started, finished a step, waits for approval, or ended (server → every connection).",
)
NOTIFICATIONS["automation/changed"] = (
    AutomationChanged,
    "An automation was created, changed, enabled, disabled or deleted, by a client or the agent (server → every "
    "connection): lists refresh from it.",
)
NOTIFICATIONS["notification/delivered"] = (
    NotificationInfo,
    "The proactive engine tells the user something: it passed the six gates (server → every connection).",
)
