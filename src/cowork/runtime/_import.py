"""`session/import`: a session made from a JSON export (`session/export` with `json`), here or on another machine.

The file is untrusted (it may have been written or changed by anyone): every event must validate against the
protocol, or nothing is imported. Only the conversation comes in: the user's messages, the assistant's answers
and reasoning, tool calls with their results, log lines, errors, todos. What would act or claim anything here is
left out: settings (model, network, YOLO, allowances, plan mode: the new session has this machine's defaults),
approvals and questions (nothing waits on them here), operation states (nothing is running), usage (spend stays
where it was spent). The model's memory of the conversation is rebuilt from the turns (`_history`), so the next
turn goes on from it.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio.to_thread
from pydantic import ValidationError

from cowork.lazy import HEAVY_IMPORTS
from cowork.protocol import (
    AssistantMessage,
    ErrorCode,
    ErrorSource,
    ProtocolError,
    SessionCreateParams,
    SessionEvent,
    SessionImportParams,
    SessionImportResult,
    ToolCall,
    ToolResult,
    UserMessage,
)
from cowork.sessions import EXPORT_FORMAT, SessionService, new_id
from cowork.store import Connection, EventRow, MessageRow, repos

from ._history import display_text, dump_message, user_request
from ._operations import Operations

__all__ = ["MAX_IMPORT_BYTES", "import_session"]

MAX_IMPORT_BYTES = 64 << 20
"""The largest export read (from `path`; `content` is bounded by the request frame)."""

_KEPT = frozenset(
    ("user_message", "reasoning", "assistant_message", "tool_call", "tool_result", "log", "error", "todos")
)
"""The event types that come in (see the module's docstring for what is left out, and why)."""


def _refuse(message: str) -> ProtocolError:
    return ProtocolError(ErrorCode.INVALID_PARAMS, message, source=ErrorSource.SESSION)


def _document(params: SessionImportParams) -> dict[str, Any]:
    """The export, read and parsed (blocking when reading `path`)."""
    if params.path is not None:
        path = Path(params.path).expanduser()
        try:
            # A FIFO or a device would block or never end: only a regular file is opened (and checked again once open).
            if not stat.S_ISREG(path.stat().st_mode):
                raise _refuse(f"{path} is not a regular file.")
            with path.open("rb") as file:
                if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                    raise _refuse(f"{path} is not a regular file.")
                data = file.read(MAX_IMPORT_BYTES + 1)
            if len(data) > MAX_IMPORT_BYTES:
                raise _refuse(f"{path} is larger than {MAX_IMPORT_BYTES:,} bytes, the most an import may be.")
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise _refuse(f"Cannot read {path}: {exc}.") from None
    else:
        assert params.content is not None
        text = params.content
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise _refuse(f"This is not JSON ({exc}); import takes what /export json saved.") from None
    if not isinstance(document, dict) or document.get("format") != EXPORT_FORMAT:
        raise _refuse(f"This is not a Cowork session export (its `format` is not {EXPORT_FORMAT!r}).")
    if document.get("version") != 1:
        raise _refuse(f"This export's version {document.get('version')!r} is not one this Cowork reads (1).")
    if not isinstance(document.get("events"), list) or not isinstance(document.get("session"), dict):
        raise _refuse("This export has no `session` object or no `events` list.")
    return document


def _events(raw: list[Any]) -> list[SessionEvent]:
    """The events to bring in, each validated (one that does not validate refuses the whole file)."""
    kept = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            raise _refuse(f"Event {index + 1} of the export is not an event object.")
        if item["type"] not in _KEPT:
            continue
        try:
            event = SessionEvent.model_validate({**item, "sessionId": "import", "seq": index + 1})
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"])
            raise _refuse(
                f"Event {index + 1} of the export ({item['type']}) is not valid: {where}: {problem['msg']}."
            ) from None
        kept.append(event)
    return kept


@dataclass
class _Step:
    text: str = ""
    calls: list[ToolCall] | None = None
    results: list[ToolResult] | None = None


def _messages(events: list[SessionEvent], session_id: str) -> list[MessageRow]:
    """The model's history rebuilt from the turns: each user message, then each step's answer and tool calls, then
    their results. Sub-agents' steps (operations no user message started) stay out, as in a live session."""
    with HEAVY_IMPORTS:  # (a first import, maybe while the warm-up imports pydantic-ai: see `cowork.lazy`)
        from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart

    turns = {e.payload.operation_id for e in events if isinstance(e.payload, UserMessage)}
    out: list[Any] = []  # (operation id, message) in order
    steps: dict[tuple[str, int], _Step] = {}
    order: list[tuple[str, int]] = []

    def flush() -> None:
        for key in order:
            step = steps[key]
            parts: list[Any] = [TextPart(step.text)] if step.text else []
            parts += [ToolCallPart(c.name, c.arguments, c.tool_call_id) for c in step.calls or []]
            if parts:
                out.append((key[0], ModelResponse(parts=parts)))
            if step.results:
                out.append(
                    (
                        key[0],
                        ModelRequest(parts=[ToolReturnPart(r.name, r.content, r.tool_call_id) for r in step.results]),
                    )
                )
        steps.clear()
        order.clear()

    for event in events:
        payload = event.payload
        if isinstance(payload, UserMessage):
            flush()
            out.append((payload.operation_id, user_request(payload.text)))
            continue
        if not isinstance(payload, AssistantMessage | ToolCall | ToolResult) or payload.operation_id not in turns:
            continue
        key = (payload.operation_id, payload.step)
        if key not in steps:
            steps[key] = _Step()
            order.append(key)
        step = steps[key]
        if isinstance(payload, AssistantMessage):
            step.text = payload.text
        elif isinstance(payload, ToolCall):
            step.calls = [*(step.calls or []), payload]
        else:
            step.results = [*(step.results or []), payload]
    flush()
    now = datetime.now(UTC)
    return [
        MessageRow(
            id=new_id("msg"),
            session_id=session_id,
            operation_id=operation_id,
            position=position,
            kind=message.kind,
            text=display_text(message),
            model_message=dump_message(message),
            created_at=now,
            thread_id=session_id,
        )
        for position, (operation_id, message) in enumerate(out)
    ]


async def import_session(ops: Operations, sessions: SessionService, params: SessionImportParams) -> SessionImportResult:
    """Create a session from an export (one write transaction for its log and history).

    Raises:
        ProtocolError: `invalid_params` (not an export, an event that does not validate, too large, unreadable);
            `workspace_not_found`.
    """

    def read() -> tuple[dict[str, Any], list[SessionEvent]]:
        document = _document(params)
        return document, _events(document["events"])

    document, events = await anyio.to_thread.run_sync(read)  # (a large file takes a while to read and check)
    raw_title = document["session"].get("title")
    title = " ".join(str(raw_title).split())[:200] if isinstance(raw_title, str) and raw_title.strip() else "Imported"
    created = await sessions.create(SessionCreateParams(workspace=params.workspace, title=title))
    try:
        messages = await anyio.to_thread.run_sync(_messages, events, created.id)
    except BaseException:
        await ops.deps.db.write(lambda conn: repos.sessions.delete(conn, created.id))
        raise
    rows = [
        EventRow(created.id, seq, e.type, e.payload.model_dump_json(by_alias=True, exclude_none=True), e.ts)
        for seq, e in enumerate(events, start=1)
    ]
    todos = next((e.payload for e in reversed(events) if e.type == "todos"), None)
    now = datetime.now(UTC)

    def write(conn: Connection) -> None:
        repos.events.insert_many(conn, rows)
        for message in messages:
            repos.messages.insert(conn, message)
        if rows:
            repos.sessions.allocate_seqs(conn, created.id, len(rows), now=now)
        if todos is not None:
            repos.sessions.set_todos(conn, created.id, json.dumps(todos.model_dump(mode="json")["todos"]))

    try:
        await ops.deps.db.write(write)
    except BaseException:
        await ops.deps.db.write(lambda conn: repos.sessions.delete(conn, created.id))
        raise
    session = await sessions.get(created.id)
    return SessionImportResult(
        session=session,
        events=len(rows),
        messages=sum(1 for e in events if isinstance(e.payload, UserMessage) and not e.payload.steer),
        skipped=len(document["events"]) - len(rows),
    )
