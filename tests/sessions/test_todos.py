"""A session's todo list: stored with the `todos` event that announces it, read back as written."""

from __future__ import annotations

import pytest

from cowork.protocol import ErrorCode, ProtocolError, Todo, Todos
from cowork.testing.core import CoreHarness

pytestmark = pytest.mark.anyio


async def test_todos_are_stored_announced_and_replaced(harness: CoreHarness) -> None:
    core = await harness.core()
    sid = await harness.session(core)
    assert await core.todos.get(sid) == []
    await core.todos.set(sid, "op_1", [{"content": "Read", "status": "in_progress", "activeForm": "Reading"}])
    await core.todos.set(sid, "op_1", [{"content": "Read", "status": "completed"}])
    first = Todo(content="Read", status="in_progress", active_form="Reading")
    second = Todo(content="Read", status="completed", active_form="")
    assert harness.payloads(sid, Todos) == [
        Todos(operation_id="op_1", todos=[first]),
        Todos(operation_id="op_1", todos=[second]),
    ]
    assert await core.todos.get(sid) == [second]


async def test_an_unknown_session_has_no_todos(harness: CoreHarness) -> None:
    core = await harness.core()
    with pytest.raises(ProtocolError) as info:
        await core.todos.get("ses_nope")
    assert info.value.code == ErrorCode.SESSION_NOT_FOUND
