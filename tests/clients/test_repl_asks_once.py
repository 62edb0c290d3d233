"""A request the REPL sees twice — in `session/get`'s pending list as the turn starts, then as its event — is asked
once (seen on a fresh clone: the same write's approval shown again after it was answered, eating the next line)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cowork.clients.cli.repl import Repl, ReplOptions
from cowork.protocol import PendingApproval

pytestmark = pytest.mark.anyio


class Calls:
    def __init__(self) -> None:
        self.made: list[tuple[str, Any]] = []

    async def call(self, method: str, params: Any = None) -> dict[str, Any]:
        self.made.append((method, params))
        return {}


class Paused:
    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        yield


async def test_an_approval_seen_twice_is_asked_once(tmp_path: Path) -> None:
    repl = Repl(ReplOptions(workspace=tmp_path))
    calls = Calls()
    repl.client = calls  # type: ignore[assignment]
    asked: list[str] = []

    async def ask_line(prompt: str) -> str:
        asked.append(prompt)
        return "y"

    repl.ask_line = ask_line  # type: ignore[method-assign]
    request = PendingApproval(
        request_id="req_1", session_id="s", operation_id="o", tool_call_id="t", name="write",
        arguments={"filePath": "hello.txt"}, created_at=datetime.now(UTC),
    )  # fmt: skip
    await repl._approve(request, Paused(), Paused())  # type: ignore[arg-type]
    await repl._approve(request, Paused(), Paused())  # type: ignore[arg-type]
    assert len(asked) == 1 and [m for m, _ in calls.made] == ["approval/respond"]
    await repl._answer("q_1", "Which?", ["a", "b"], "question", Paused(), Paused())  # type: ignore[arg-type]
    await repl._answer("q_1", "Which?", ["a", "b"], "question", Paused(), Paused())  # type: ignore[arg-type]
    assert len(asked) == 2 and [m for m, _ in calls.made] == ["approval/respond", "ask/respond"]
