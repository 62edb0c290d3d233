"""An in-process core for tests that drive the runtime without a transport."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from cowork.config import load_config
from cowork.core import Core
from cowork.protocol import (
    OperationStatus,
    OperationStatusChanged,
    SessionCreateParams,
    SessionEvent,
    TurnStartParams,
)
from cowork.tools import ToolRegistry

from .server import provider_env
from .transcripts import Entry, P, payloads, transcript

__all__ = ["TEST_TOOLS_PLUGIN", "CoreHarness", "marks"]

TEST_TOOLS_PLUGIN = "cowork.testing.tools:register"


class CoreHarness:
    """Builds cores against the mock LLM, records every event per session, and shuts them down at the end."""

    def __init__(
        self,
        home: Path,
        workspace: Path,
        *,
        openai_base_url: str,
        anthropic_base_url: str,
        google_base_url: str | None = None,
    ) -> None:
        self.home = home
        self.workspace = workspace
        self.openai_base_url = openai_base_url
        self.anthropic_base_url = anthropic_base_url
        self.google_base_url = google_base_url
        self.cores: list[Core] = []
        self.events: dict[str, list[SessionEvent]] = {}
        self._changed = asyncio.Event()

    async def core(
        self,
        kind: str = "openai",
        *,
        env: dict[str, str] | None = None,
        tools: ToolRegistry | None = None,
        test_tools: bool = True,
        clock: Callable[[], datetime] | None = None,
    ) -> Core:
        """A started core whose provider is the mock in wire format `kind` (openai, responses, anthropic, google;
        "" for none). Retries are off unless `env` turns them on."""
        environment = {"COWORK_HOME": str(self.home), "COWORK_AGENT__PROVIDER_MAX_RETRIES": "0"}
        if url := os.environ.get("COWORK_DATABASE_URL"):
            environment["COWORK_DATABASE_URL"] = url  # the suite's PostgreSQL half (tests/conftest.py)
        if kind:
            bases = {
                "openai": self.openai_base_url,
                "responses": self.openai_base_url,
                "anthropic": self.anthropic_base_url,
                "google": self.google_base_url or "",
            }
            environment |= provider_env(kind, bases[kind])
        if test_tools:
            environment["COWORK_TOOLS__PLUGINS"] = json.dumps([TEST_TOOLS_PLUGIN])
        environment |= env or {}
        core = Core(load_config(self.workspace, env=environment), env=environment, tools=tools, clock=clock)
        await core.start()
        self.cores.append(core)
        return core

    async def session(self, core: Core) -> str:
        """A new session whose events are recorded (`events`, `until`, `status`, `transcript`)."""
        session = await core.sessions.create(SessionCreateParams())
        self.watch(core, session.id)
        return session.id

    def watch(self, core: Core, session_id: str) -> None:
        """Record a session's events from now on, afresh (e.g. an existing session in a restarted core)."""
        events = self.events[session_id] = []

        def record(event: SessionEvent) -> None:
            events.append(event)
            self._changed.set()

        core.bus.subscribe(session_id, record)

    async def start(self, core: Core, session_id: str, text: str, cmid: str | None = None) -> str:
        started = await core.runtime.start_turn(
            TurnStartParams(
                session_id=session_id, text=text, client_message_id=cmid or f"c{len(self.events[session_id])}"
            )
        )
        return started.operation_id

    async def until(self, session_id: str, predicate: Callable[[list[SessionEvent]], bool], within: float = 20) -> None:
        async def wait() -> None:
            while not predicate(self.events[session_id]):
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), within)

    async def status(
        self, session_id: str, operation_id: str, *statuses: OperationStatus, within: float = 20
    ) -> OperationStatusChanged:
        """Wait for the operation to reach one of `statuses`; returns that status event."""

        def reached(events: list[SessionEvent]) -> bool:
            return self._status_event(events, operation_id, statuses) is not None

        await self.until(session_id, reached, within)
        found = self._status_event(self.events[session_id], operation_id, statuses)
        assert found is not None
        return found

    @staticmethod
    def _status_event(
        events: list[SessionEvent], operation_id: str, statuses: tuple[OperationStatus, ...]
    ) -> OperationStatusChanged | None:
        for event in reversed(events):
            payload = event.payload
            if isinstance(payload, OperationStatusChanged) and payload.operation_id == operation_id:
                return payload if payload.status in statuses else None
        return None

    def payloads(self, session_id: str, kind: type[P]) -> list[P]:
        """The session's payloads of one type, typed (`harness.payloads(sid, ToolCall)`)."""
        return payloads(self.events[session_id], kind)

    def transcript(self, session_id: str, *, skip: tuple[str, ...] = ()) -> list[Entry]:
        """The session's whole event sequence as `(type, key fields)`; see `cowork.testing.transcripts`."""
        return transcript(self.events[session_id], skip=skip)

    def types(self, session_id: str) -> list[str]:
        return [e.type for e in self.events[session_id]]

    async def close(self) -> None:
        for core in self.cores:
            await core.stop()
        self.cores.clear()


def marks(path: Path) -> list[str]:
    """The lines the test tools wrote (see `cowork.testing.tools`)."""
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []
