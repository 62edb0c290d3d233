"""Sessions: create, list, read, replay their event log, export it, change their settings."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, cast

import anyio.to_thread

from cowork.policy import describe_allowance, load_allowances
from cowork.protocol import (
    ErrorCode,
    ErrorSource,
    EventsReplayResult,
    MessageInfo,
    ProtocolError,
    SearchHit,
    SessionCreateParams,
    SessionEvent,
    SessionExportParams,
    SessionExportResult,
    SessionInfo,
    SessionListParams,
    SessionSearchParams,
    SessionSearchResult,
    SessionUpdated,
)
from cowork.store import Connection, Database, EventRow, MessageRow, SessionRow, repos

from ._export import export_filename, export_json, export_markdown
from ._journal import Journal

__all__ = ["AUTO_MODEL", "SessionService", "event_from_row", "new_id", "session_not_found"]

AUTO_MODEL = "auto"
"""A session's model when the complexity router picks one for each turn."""


def new_id(prefix: str) -> str:
    """A sortable-enough, unguessable id with a readable prefix (`ses_…`, `op_…`, `msg_…`)."""
    return f"{prefix}_{uuid.uuid4().hex[:20]}"


def event_from_row(row: EventRow) -> SessionEvent:
    return SessionEvent.model_validate(
        {
            "sessionId": row.session_id,
            "seq": row.seq,
            "ts": row.created_at,
            "type": row.type,
            "payload": json.loads(row.payload),
        }
    )


def session_not_found(session_id: str) -> ProtocolError:
    return ProtocolError(ErrorCode.SESSION_NOT_FOUND, f"No session with id {session_id!r}.", source=ErrorSource.SESSION)


class SessionService:
    """The session side of the core; knows nothing about transports."""

    def __init__(
        self,
        db: Database,
        journal: Journal,
        *,
        default_workspace: Path,
        default_network: bool = False,
        active_operation: Callable[[str], str | None] = lambda _sid: None,
    ) -> None:
        self._db = db
        self._journal = journal
        self._default_workspace = default_workspace
        self._default_network = default_network
        self._active_operation = active_operation

    def set_active_operation_lookup(self, lookup: Callable[[str], str | None]) -> None:
        self._active_operation = lookup

    def info(self, row: SessionRow) -> SessionInfo:
        return SessionInfo(
            id=row.id,
            title=row.title,
            workspace=row.workspace,
            provider=row.provider,
            model=row.model,
            created_at=row.created_at,
            updated_at=row.updated_at,
            last_seq=row.last_seq,
            active_operation_id=self._active_operation(row.id),
            network=row.network,
            yolo=row.yolo,
            reasoning_effort=row.reasoning_effort,  # validated when set
            auto_model=row.model == AUTO_MODEL,
            allowances=[describe_allowance(key) for key in load_allowances(row.allowances)],
            plan_mode=row.plan_mode,
        )

    async def create(self, params: SessionCreateParams) -> SessionInfo:
        """Create a session.

        Raises:
            ProtocolError: `workspace_not_found` when the folder does not exist.
        """
        workspace = await anyio.to_thread.run_sync(self._resolve_workspace, params.workspace)
        now = datetime.now(UTC)
        row = SessionRow(
            id=new_id("ses"),
            title=params.title or "New session",
            workspace=str(workspace),
            provider=params.provider,
            model=params.model,
            created_at=now,
            updated_at=now,
            network=self._default_network if params.network is None else params.network,
            yolo=params.yolo,
        )
        await self._db.write(lambda conn: repos.sessions.insert(conn, row))
        return self.info(row)

    def _resolve_workspace(self, raw: str | None) -> Path:
        workspace = Path(raw).expanduser() if raw else self._default_workspace
        if not workspace.is_absolute():
            workspace = self._default_workspace / workspace
        if not workspace.is_dir():
            raise ProtocolError(
                ErrorCode.WORKSPACE_NOT_FOUND,
                f"Workspace {str(workspace)!r} is not an existing folder.",
                source=ErrorSource.SESSION,
            )
        return workspace.resolve()

    async def get_row(self, session_id: str) -> SessionRow:
        """Raises: ProtocolError `session_not_found`."""
        row = await self._db.read(lambda conn: repos.sessions.get(conn, session_id))
        if row is None:
            raise session_not_found(session_id)
        return row

    async def get(self, session_id: str) -> SessionInfo:
        return self.info(await self.get_row(session_id))

    async def list_sessions(self, params: SessionListParams) -> list[SessionInfo]:
        """Newest first; `workspace` compares resolved paths, as sessions store them; without `include_empty`, only
        sessions with a message (a client that opened and closed leaves no row behind)."""
        workspace = None
        if params.workspace is not None:
            workspace = str(await anyio.to_thread.run_sync(_resolved, params.workspace, self._default_workspace))

        def read(conn: Connection) -> list[SessionRow]:
            return repos.sessions.list_recent(
                conn,
                limit=params.limit,
                offset=params.offset,
                query=params.query,
                workspace=workspace,
                include_empty=params.include_empty,
            )

        return [self.info(r) for r in await self._db.read(read)]

    async def search(self, params: SessionSearchParams) -> SessionSearchResult:
        """Full-text search across sessions (see `repos.search`); `workspace` compares resolved paths."""
        workspace = None
        if params.workspace is not None:
            workspace = str(await anyio.to_thread.run_sync(_resolved, params.workspace, self._default_workspace))
        rows = await self._db.read(
            lambda conn: repos.search.search(conn, params.query, workspace=workspace, limit=params.limit)
        )
        return SessionSearchResult(
            hits=[
                SearchHit(
                    session_id=r.session_id,
                    title=r.title,
                    workspace=r.workspace,
                    updated_at=r.updated_at,
                    kind=cast(Literal["user", "assistant", "tool"], r.kind),
                    snippet=r.snippet,
                    matches=r.matches,
                )
                for r in rows
            ]
        )

    async def messages(self, session_id: str) -> list[MessageInfo]:
        def read(conn: Connection) -> tuple[list[MessageRow], dict[str, str | None]]:
            rows = repos.messages.for_session(conn, session_id, only_with_text=True)
            asks = {op.id: op.ask_id for op in repos.operations.for_session(conn, session_id)}
            return rows, asks

        rows, asks = await self._db.read(read)
        return [
            MessageInfo(
                id=r.id,
                role="user" if r.kind == "request" else "assistant",
                text=r.text,
                operation_id=r.operation_id,
                created_at=r.created_at,
                ask_id=asks.get(r.operation_id),
                superseded=r.superseded,
                excluded_from_context=r.excluded,
            )
            for r in rows
        ]

    async def replay(self, session_id: str, after_seq: int, limit: int) -> EventsReplayResult:
        """Events after `after_seq`, oldest first.

        Raises:
            ProtocolError: `session_not_found`.
        """

        def read(conn: Connection) -> tuple[SessionRow | None, list[EventRow]]:
            return repos.sessions.get(conn, session_id), repos.events.after(conn, session_id, after_seq, limit + 1)

        session, rows = await self._db.read(read)
        if session is None:
            raise session_not_found(session_id)
        has_more = len(rows) > limit
        events = [event_from_row(r) for r in rows[:limit]]
        return EventsReplayResult(events=events, last_seq=session.last_seq, has_more=has_more)

    async def export(self, params: SessionExportParams) -> SessionExportResult:
        """The session as Markdown or JSON (see `_export`), with a file name to save it under.

        Raises:
            ProtocolError: `session_not_found`.
        """
        sid = params.session_id

        def read(conn: Connection) -> tuple[SessionRow | None, list[EventRow]]:
            session = repos.sessions.get(conn, sid)
            return session, repos.events.after(conn, sid, 0, session.last_seq) if session else []

        row, rows = await self._db.read(read)
        if row is None:
            raise session_not_found(sid)
        session, now = self.info(row), datetime.now(UTC)

        def render() -> SessionExportResult:
            events = [event_from_row(r) for r in rows]
            if params.format == "json":
                content, extension, media = export_json(session, events, now), "json", "application/json"
            else:
                content, extension, media = export_markdown(session, events, now), "md", "text/markdown"
            return SessionExportResult(
                filename=export_filename(session, extension), media_type=media, content=content, events=len(events)
            )

        return await anyio.to_thread.run_sync(render)  # a long session's log takes a while to parse and write

    async def update_settings(self, session_id: str, **changes: str | bool | None) -> SessionInfo:
        """Change settings and announce them with a `session_updated` event in the same transaction.

        Each keyword given is set, `None` included (`provider=None` clears the session's provider). Settings:
        `title`, `provider`, `model` (`auto`: the router picks), `network`, `yolo`, `reasoning_effort`.

        Raises:
            ProtocolError: `session_not_found`.
        """
        await self.get_row(session_id)
        now = datetime.now(UTC)
        announced: dict[str, object] = {k: v for k, v in changes.items() if v is not None}
        if "reasoning_effort" in changes and changes["reasoning_effort"] is None:
            announced["reasoning_effort"] = "default"
        if "model" in changes:
            announced["auto_model"] = changes["model"] == AUTO_MODEL
        if isinstance(allowances := changes.get("allowances"), str):
            announced["allowances"] = [describe_allowance(k) for k in load_allowances(allowances)]
        await self._journal.append(
            session_id,
            SessionUpdated.model_validate(announced),
            mutate=lambda conn: repos.sessions.update(conn, session_id, now=now, **changes),
        )
        return await self.get(session_id)


def _resolved(raw: str, base: Path) -> Path:
    path = Path(raw).expanduser()
    return (path if path.is_absolute() else base / path).resolve()
