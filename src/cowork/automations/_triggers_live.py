"""The event triggers, live: files changing in the workspace, session events, MCP servers' notifications.

Each watches only while an enabled automation asks for it, and fires through `AutomationService.fire`, which runs
one run at a time per automation: a flow that writes a file its own trigger matches, or emits an event its own
trigger names, does not feed itself. Events of an automation's own session never fire anything.

Files are watched with `watchfiles` (Rust `notify` underneath: inotify on Linux, FSEvents, ReadDirectoryChangesW),
which batches bursts; its default filter leaves out `.git`, `__pycache__`, `node_modules` and the like, and Cowork's
own `.cowork` folder is left out here.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import logging
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from cowork.protocol import SessionEvent

from ._service import AutomationService
from ._triggers import FileTrigger, McpNotificationTrigger, SessionEventTrigger

__all__ = ["LiveTriggers", "matches"]

log = logging.getLogger(__name__)

_EVENTS = {1: "created", 2: "modified", 3: "deleted"}  # watchfiles.Change values


def matches(pattern: str, path: str) -> bool:
    """Whether a workspace-relative path matches a trigger's glob: `inbox/*.pdf`, `**/*.md`, or `*.csv` (any
    folder, as in .gitignore)."""
    if fnmatch.fnmatchcase(path, pattern):
        return True
    if "/" not in pattern:
        return fnmatch.fnmatchcase(PurePosixPath(path).name, pattern)
    if pattern.startswith("**/"):
        return matches(pattern[3:], path)
    return False


class LiveTriggers:
    """Starts and stops the watchers as automations come and go."""

    def __init__(
        self,
        service: AutomationService,
        workspace: Path,
        *,
        subscribe_events: Callable[[Callable[[SessionEvent], None]], Callable[[], None]] | None = None,
        subscribe_mcp: Callable[[Callable[[str, str, dict[str, Any]], None]], Callable[[], None]] | None = None,
        automation_sessions: Callable[[], set[str]] = set,
        leader: Callable[[], bool] = lambda: True,
    ) -> None:
        self._service = service
        self._leader = leader
        """Replicas: only one watches files and MCP notifications, so each change fires one run."""
        self._workspace = workspace.resolve()
        self._subscribe_events = subscribe_events
        self._subscribe_mcp = subscribe_mcp
        self._automation_sessions = automation_sessions
        self._unsubscribe: list[Callable[[], None]] = []
        self._watcher: asyncio.Task[None] | None = None
        self._stop_watching: asyncio.Event | None = None
        self._fired: set[asyncio.Task[Any]] = set()
        self._event_types: frozenset[str] = frozenset()
        """The session event types an enabled automation waits for: every event of every session passes here,
        streamed deltas included, so the rest return at once."""

    def start(self) -> None:
        if self._subscribe_events is not None:
            self._unsubscribe.append(self._subscribe_events(self._on_event))
        if self._subscribe_mcp is not None:
            self._unsubscribe.append(self._subscribe_mcp(self._on_mcp))
        self._service.on_change.append(self.refresh)
        self.refresh()

    async def stop(self) -> None:
        for unsubscribe in self._unsubscribe:
            with contextlib.suppress(ValueError):
                unsubscribe()
        self._unsubscribe.clear()
        with contextlib.suppress(ValueError):
            self._service.on_change.remove(self.refresh)
        await self._stop_watcher()
        if self._fired:
            await asyncio.wait(list(self._fired), timeout=5)

    def refresh(self) -> None:
        """Watch files when an enabled automation has a file trigger, stop when none has; note the event types
        automations wait for."""
        flows = self._service.enabled_flows()
        self._event_types = frozenset(
            flow.trigger.event_type for _, flow in flows if isinstance(flow.trigger, SessionEventTrigger)
        )
        wanted = any(isinstance(flow.trigger, FileTrigger) for _, flow in flows)
        if wanted and self._watcher is None:
            self._stop_watching = asyncio.Event()
            self._watcher = asyncio.get_running_loop().create_task(
                self._watch(self._stop_watching), name="file-triggers"
            )
        elif not wanted and self._watcher is not None:
            task = asyncio.get_running_loop().create_task(self._stop_watcher())
            self._fired.add(task)
            task.add_done_callback(self._fired.discard)

    async def _stop_watcher(self) -> None:
        watcher, stop = self._watcher, self._stop_watching
        self._watcher = self._stop_watching = None
        if watcher is None:
            return
        assert stop is not None
        stop.set()
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher

    async def _watch(self, stop: asyncio.Event) -> None:
        import watchfiles

        try:
            async for changes in watchfiles.awatch(self._workspace, stop_event=stop, recursive=True):
                self._on_files(changes)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("watching %s for file triggers failed; file triggers are off", self._workspace, exc_info=True)

    def _on_files(self, changes: set[tuple[Any, str]]) -> None:
        if not self._leader():
            return
        for change, raw in sorted(changes, key=lambda c: c[1]):
            try:
                relative = Path(raw).resolve().relative_to(self._workspace).as_posix()
            except ValueError:
                continue
            if relative == ".cowork" or relative.startswith(".cowork/"):
                continue
            event = _EVENTS.get(int(change))
            if event is None:
                continue
            for row, flow in self._service.enabled_flows():
                trigger = flow.trigger
                if isinstance(trigger, FileTrigger) and event in trigger.events:
                    if any(matches(pattern, relative) for pattern in trigger.patterns):
                        self._fire(row.id, {"type": "file", "path": relative, "event": event})

    def _on_event(self, event: SessionEvent) -> None:
        if event.type not in self._event_types or event.session_id in self._automation_sessions():
            return
        for row, flow in self._service.enabled_flows():
            trigger = flow.trigger
            if isinstance(trigger, SessionEventTrigger) and trigger.event_type == event.type:
                payload = event.payload.model_dump(mode="json", by_alias=True)
                self._fire(row.id, {"type": "sessionEvent", "sessionId": event.session_id, "eventType": event.type,
                                    "payload": payload})  # fmt: skip

    def _on_mcp(self, server: str, method: str, params: dict[str, Any]) -> None:
        if not self._leader():
            return
        for row, flow in self._service.enabled_flows():
            trigger = flow.trigger
            if isinstance(trigger, McpNotificationTrigger) and trigger.server == server and trigger.method == method:
                self._fire(row.id, {"type": "mcpNotification", "server": server, "method": method, "params": params})

    def _fire(self, automation_id: str, trigger: dict[str, Any]) -> None:
        task = asyncio.get_running_loop().create_task(self._service.fire(automation_id, trigger))
        self._fired.add(task)
        task.add_done_callback(self._fired.discard)
