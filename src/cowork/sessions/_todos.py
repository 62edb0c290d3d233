"""A session's todo list: written by the `todoWrite` tool, announced with a `todos` event, read by clients."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from cowork.protocol import Todo, Todos
from cowork.store import repos

from ._journal import Journal
from ._service import SessionService

__all__ = ["TodoList"]


class TodoList:
    """Persists each session's todos together with the event that announces them."""

    def __init__(self, sessions: SessionService, journal: Journal) -> None:
        self._sessions = sessions
        self._journal = journal

    async def set(self, session_id: str, operation_id: str, todos: Sequence[Mapping[str, str]]) -> None:
        """Replace the session's todos (`content`, `status`, optional `activeForm` each) and announce them."""
        items = [Todo(content=t["content"], status=t["status"], active_form=t.get("activeForm", "")) for t in todos]
        as_json = json.dumps([t.wire() for t in items])
        await self._journal.append(
            session_id,
            Todos(operation_id=operation_id, todos=items),
            mutate=lambda conn: repos.sessions.set_todos(conn, session_id, as_json),
        )

    async def get(self, session_id: str) -> list[Todo]:
        """Raises: ProtocolError `session_not_found`."""
        row = await self._sessions.get_row(session_id)
        return [Todo.model_validate(t) for t in json.loads(row.todos)]
