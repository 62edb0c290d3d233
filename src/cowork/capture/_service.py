"""The capture service: runs the source, turns samples into spans, writes and indexes them, answers queries.

The source runs in a thread of its own (`cowork-capture`): an X11 connection blocks, and waiting on it for window
changes must not hold the event loop or a worker of the bounded pool for ever. The thread only samples and posts;
everything else happens on the loop: the tracker (`_tracker`), a bounded buffer of spans that flushes when it holds
`BUFFER_SLOTS` spans or every `capture.flush_seconds` (the open span is written each time, so a crash loses at most
one interval), the `activity` index (hours of activity, in quiet moments, with the local embedder only), retention,
and the status every client shows as its indicator (`capture/status`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final

from cowork.config import CaptureConfig
from cowork.protocol import (
    ActivityHitInfo,
    ActivityNow,
    CaptureConfigureParams,
    CaptureStatus,
    CaptureStreamInfo,
    ContextQueryParams,
    ContextQueryResult,
)
from cowork.store import Connection, Database, repos
from cowork.store.repos import activity as repo
from cowork.store.repos import retrieval as rag

from ._context import app_totals, clip, focus_sessions, hour_of, hour_text, span_info
from ._privacy import BUILTIN_APPS, BUILTIN_TITLES, Exclusions
from ._registry import pick_source
from ._sampler import SamplerThread
from ._settings import KEY, STREAMS, CaptureSettings, apply_change
from ._source import Source, Window
from ._tracker import Observation, Tracker

if TYPE_CHECKING:
    from cowork.retrieval import Retrieval

__all__ = ["BUFFER_SLOTS", "KIND", "SCOPE", "CaptureService"]

log = logging.getLogger(__name__)

BUFFER_SLOTS: Final = 5
"""Spans held before a flush is forced (the seed's bounded 5-slot activity buffer): rapid switching never grows
memory, and never waits a whole flush interval to reach the disk."""
KIND: Final = "activity"
SCOPE: Final = "user"
"""Activity is the user's, not a folder's: one index scope for all of it."""
INDEX_EVERY_S: Final = 300.0
RETRY_SOURCE_S: Final = 60.0
RETENTION_EVERY_S: Final = 3600.0

Sampler = Callable[[Mapping[str, str]], tuple[Source | None, str | None]]


class CaptureService:
    def __init__(
        self,
        db: Database,
        config: CaptureConfig,
        *,
        env: Mapping[str, str],
        publish: Callable[[CaptureStatus], None] = lambda _status: None,
        retrieval: Retrieval | None = None,
        local_embedder: bool = True,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        sources: Sampler = pick_source,
    ) -> None:
        self._db = db
        self.config = config
        self._env = dict(env)
        self._publish = publish
        self._retrieval = retrieval if config.index and local_embedder else None
        self._clock = clock
        self._sources = sources
        self.settings = CaptureSettings()
        self._tracker = self._new_tracker()
        self._buffer: dict[str, repo.ActivitySpanRow] = {}
        self._dirty: set[datetime] = set()
        self._source_name: str | None = None
        self._reason: str | None = None
        self.failed = False
        """A source that ran went away (the display died): `health` says degraded until one runs again."""
        self._thread: SamplerThread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._flushing: asyncio.Task[None] | None = None
        self._resume: asyncio.Task[None] | None = None
        self._retry: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._last_status: CaptureStatus | None = None

    def _new_tracker(self) -> Tracker:
        config, settings = self.config, self.settings
        return Tracker(
            idle_seconds=config.idle_seconds,
            focus_seconds=config.focus_minutes * 60,
            min_span_seconds=config.min_span_seconds,
            exclusions=Exclusions.of(
                [*config.exclude_apps, *settings.exclude_apps], [*config.exclude_titles, *settings.exclude_titles]
            ),
            focus=settings.enabled("focus"),
        )

    # ---- life ----------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        stored = await self._db.read(lambda c: repos.settings.get(c, KEY))
        self.settings = CaptureSettings.from_json(stored)
        self._tracker = self._new_tracker()
        self._tasks = [
            self._loop.create_task(self._flush_loop(), name="cowork-capture-flush"),
            self._loop.create_task(self._retention_loop(), name="cowork-capture-retention"),
        ]
        if self._retrieval is not None:
            self._tasks.append(self._loop.create_task(self._index_loop(), name="cowork-capture-index"))
        await self._apply()

    async def stop(self) -> None:
        await self._stop_source()
        for task in [*self._tasks, self._resume, self._retry]:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._tasks = []
        if self._flushing is not None:
            await self._flushing  # a flush under way finishes (its spans left the buffer), then the last one runs
        try:
            await self.flush()
        except Exception:
            log.warning("writing the last captured activity failed", exc_info=True)

    def _should_run(self) -> str | None:
        """None when capture should run now, else why not."""
        if not self.config.enabled:
            return "Capture is turned off in the configuration (capture.enabled = false)."
        if self.settings.paused:
            return "Paused by the user."
        if not self.settings.enabled("window"):
            return "No stream that records anything has consent (turn on the window stream to capture)."
        return None

    async def _apply(self) -> None:
        """Start or stop the source to match the configuration and the user's settings; tell the clients."""
        self._schedule_resume()
        if self._should_run() is None:
            if self._thread is None:
                await self._start_source()
        else:
            await self._stop_source()
        self._announce(force=True)

    async def _start_source(self) -> None:
        source, reason = self._sources(self._env)
        if source is None:
            self._source_name, self._reason = None, reason
            return
        self._source_name, self._reason, self.failed = source.name, None, False
        assert self._loop is not None
        self._thread = SamplerThread(source, self._loop, self._sample, self._source_failed, self.config.poll_seconds)
        self._thread.start()

    async def _stop_source(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            await asyncio.to_thread(thread.stop)
        self._take(self._tracker.close(self._clock()))

    # ---- samples (on the loop) -----------------------------------------------------------------------------------

    def _sample(self, thread: SamplerThread, window: Window | None, idle: float | None) -> None:
        if thread is not self._thread:
            return  # a sample posted by a thread stopped meanwhile
        self._take(self._tracker.observe(self._clock(), window, idle))

    def _take(self, observation: Observation) -> None:
        for span in observation.spans:
            self._buffer[span.id] = span
        if len(self._buffer) >= BUFFER_SLOTS and (self._flushing is None or self._flushing.done()):
            self._flushing = asyncio.get_running_loop().create_task(
                self._flush_logged(), name="cowork-capture-flush-now"
            )
        if observation.changed:
            self._announce()

    def _source_failed(self, thread: SamplerThread, reason: str) -> None:
        if thread is not self._thread:
            return
        log.warning("activity capture stopped: %s", reason)
        self._thread = None
        self.failed = True
        self._reason = reason
        self._take(self._tracker.close(self._clock()))
        self._announce(force=True)
        if self._retry is None or self._retry.done():
            self._retry = asyncio.get_running_loop().create_task(self._retry_later(), name="cowork-capture-retry")

    async def _retry_later(self) -> None:
        await asyncio.sleep(RETRY_SOURCE_S)
        if self._thread is None and self._should_run() is None:
            await self._start_source()
            self._announce(force=True)

    # ---- writing -------------------------------------------------------------------------------------------------

    async def flush(self) -> int:
        """Write the buffered spans and the open one; how many rows were written."""
        snapshot = self._tracker.snapshot(self._clock()) if self._thread is not None else None
        if snapshot is not None:
            self._buffer[snapshot.id] = snapshot
        if not self._buffer:
            return 0
        spans, self._buffer = list(self._buffer.values()), {}
        try:
            await self._db.write(lambda c: repo.put_many(c, spans))
        except Exception:
            for span in spans:  # kept for the next flush, newest first, within a bound
                self._buffer.setdefault(span.id, span)
            raise
        for span in spans:
            self._mark(span.started_at, span.ended_at)
        return len(spans)

    def _mark(self, start: datetime, end: datetime) -> None:
        if self._retrieval is None:
            return
        hour = hour_of(start)
        while hour < end:
            self._dirty.add(hour)
            hour = hour_of(hour + timedelta(hours=1, minutes=1))

    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.flush_seconds)
            await self._flush_logged()

    async def _flush_logged(self) -> None:
        try:
            await self.flush()
        except Exception:
            log.warning("writing captured activity failed; the next flush tries again", exc_info=True)

    # ---- the activity index --------------------------------------------------------------------------------------

    async def index_dirty(self, *, current: bool = True) -> int:
        """Index the hours whose activity changed since they were last indexed; how many were embedded.

        Without `current`, the hour under way waits until it is over (or a search needs it): it changes with every
        flush, and embedding it every few minutes cost 5-50 times capture itself (bench/capture.py)."""
        if self._retrieval is None:
            return 0
        async with self._lock:
            now = self._clock()
            due = {h for h in self._dirty if current or h + timedelta(hours=1) <= now}
            hours, self._dirty = sorted(due), self._dirty - due
            done = 0
            for hour in hours:
                done += await self._index_hour(hour)
            return done

    async def _index_hour(self, hour: datetime) -> int:
        assert self._retrieval is not None
        end = hour + timedelta(hours=1)
        spans, _ = await self._db.read(lambda c: repo.in_range(c, hour, end))
        uri = f"{hour:%Y-%m-%dT%H:%MZ}"
        index = self._retrieval.index
        if not spans:
            if await asyncio.to_thread(index.forget, kind=KIND, scope=SCOPE, uri=uri):
                return 1
            return 0
        title, text = hour_text(hour, spans)
        digest = hashlib.sha256(text.encode()).hexdigest()
        known = await self._db.read(lambda c: rag.get_source(c, KIND, SCOPE, uri))
        if known is not None and known.content_hash == digest and known.embedder == index.embedder.id:
            return 0
        await asyncio.to_thread(
            index.index_text, text, kind=KIND, scope=SCOPE, uri=uri, title=title, content_hash=digest
        )
        return 1

    async def _index_loop(self) -> None:
        while True:
            await asyncio.sleep(INDEX_EVERY_S)
            try:
                await self.index_dirty(current=False)
            except Exception:
                log.warning("indexing captured activity failed; it is tried again later", exc_info=True)

    # ---- retention -----------------------------------------------------------------------------------------------

    async def prune(self) -> int:
        """Delete activity older than the retention, and its hours in the index; how many spans."""
        cutoff = self._clock() - timedelta(days=self.settings.retention_days)

        def delete(conn: Connection) -> tuple[int, int]:
            spans = repo.delete_before(conn, cutoff)
            oldest = f"{hour_of(cutoff):%Y-%m-%dT%H:%MZ}"
            old = [s for s in rag.sources(conn, KIND, SCOPE) if s.uri < oldest]
            for source in old:
                rag.delete_source(conn, source.id)
            return spans, len(old)

        spans, hours = await self._db.write(delete)
        if hours and self._retrieval is not None:
            self._retrieval.invalidate(KIND)
        return spans

    async def _retention_loop(self) -> None:
        while True:
            try:
                await self.prune()
            except Exception:
                log.warning("deleting old captured activity failed", exc_info=True)
            await asyncio.sleep(RETENTION_EVERY_S)

    # ---- the protocol's view -------------------------------------------------------------------------------------

    def status(self) -> CaptureStatus:
        now = self._clock()
        settings, tracker = self.settings, self._tracker
        reason = self._should_run()
        if reason is not None:
            state = "paused" if settings.paused and self.config.enabled else "off"
        elif self._thread is None:
            state, reason = "unavailable", self._reason
        else:
            state = "capturing"
        streams = [
            CaptureStreamInfo(
                stream=name,
                enabled=settings.streams.get(name, False),
                available=spec.not_built is None,  # consent can be given (a source may come later)
                description=spec.description,
                note=spec.not_built or (self._reason if state == "unavailable" else None),
            )
            for name, spec in STREAMS.items()
        ]
        current = tracker.current if state == "capturing" else None
        deep = state == "capturing" and tracker.deep_work(now)
        return CaptureStatus(
            state=state,
            capturing=state == "capturing",
            source=self._source_name if state == "capturing" else None,
            reason=reason,
            paused_until=settings.paused_until if settings.paused else None,
            streams=streams,
            exclude_apps=list(settings.exclude_apps),
            exclude_titles=list(settings.exclude_titles),
            builtin_exclusions=[*BUILTIN_APPS, *BUILTIN_TITLES],
            retention_days=settings.retention_days,
            current=ActivityNow(app=current.app, title=current.title, since=current.started_at) if current else None,
            deep_work=deep,
            focus_app=tracker.focus_app if deep else None,
            focus_since=tracker.focus_since if deep else None,
        )

    @property
    def deep_work(self) -> bool:
        """The user is in a focus session now (what the notification gates read)."""
        return self._thread is not None and self._tracker.deep_work(self._clock())

    def _announce(self, *, force: bool = False) -> None:
        status = self.status()
        if force or status != self._last_status:
            self._last_status = status
            self._publish(status)

    async def configure(self, change: CaptureConfigureParams) -> CaptureStatus:
        """Apply a change from a client (ConsentError: refused, nothing changed); kept across restarts."""
        settings = apply_change(self.settings, change, self._clock())
        await self._db.write(lambda c: repos.settings.put(c, KEY, settings.to_json(), now=self._clock()))
        focus_before = self.settings.enabled("focus")
        self.settings = settings
        tracker = self._tracker
        tracker.exclusions = self._new_tracker().exclusions
        tracker.focus = settings.enabled("focus")
        if not tracker.focus and focus_before:
            tracker.focus_app = tracker.focus_since = None
        if change.retention_days is not None:
            await self.prune()
        await self._apply()
        return self.status()

    def _schedule_resume(self) -> None:
        if self._resume is not None and not self._resume.done():
            if self._resume is not asyncio.current_task():
                self._resume.cancel()
        until = self.settings.paused_until if self.settings.paused else None
        if until is not None:
            self._resume = asyncio.get_running_loop().create_task(self._resume_at(until), name="cowork-capture-resume")

    async def _resume_at(self, until: datetime) -> None:
        while (left := (until - self._clock()).total_seconds()) > 0:  # noqa: ASYNC110 (a clock, not an event)
            await asyncio.sleep(min(left, 1.0))  # the clock is read again: a suspended laptop wakes past it
        await self.configure(CaptureConfigureParams(paused=False))

    async def lookup(self, params: ContextQueryParams) -> tuple[ContextQueryResult, str | None]:
        """The `activity` tool's answer: what was captured, and why capture is not running now when it is not."""
        result = await self.query(
            params.since, params.until, app=params.app, title=params.title, query=params.query, limit=params.limit
        )
        status = self.status()
        note = None if status.capturing else f"Capture is {status.state} now: {status.reason or 'not running'}"
        return result, note

    async def query(
        self,
        since: datetime | None = None,
        until: datetime | None = None,
        *,
        app: str | None = None,
        title: str | None = None,
        query: str | None = None,
        limit: int = 500,
    ) -> ContextQueryResult:
        """What was captured in [since, until) (default: the last 24 hours), newest `limit` spans."""
        end = until or self._clock()
        start = since or end - timedelta(hours=24)
        await self.flush()
        rows, truncated = await self._db.read(lambda c: repo.in_range(c, start, end, app=app, title=title, limit=limit))
        spans = clip(rows, start, end)
        focus = []
        if self.settings.enabled("focus"):
            everything = rows if not (app or title) else clip((await self._db.read(
                lambda c: repo.in_range(c, start, end, limit=limit)))[0], start, end)  # fmt: skip
            focus = focus_sessions(everything, timedelta(minutes=self.config.focus_minutes))
        hits: list[ActivityHitInfo] = []
        if query and self._retrieval is not None:
            hits = await self._search(query, start, end)
        return ContextQueryResult(
            since=start,
            until=end,
            spans=[span_info(s) for s in spans],
            apps=app_totals(spans),
            focus=focus,
            hits=hits,
            truncated=truncated,
        )

    async def _search(self, query: str, start: datetime, end: datetime) -> list[ActivityHitInfo]:
        assert self._retrieval is not None
        await self.index_dirty()
        index = self._retrieval.index
        found = await asyncio.to_thread(index.search, query, kind=KIND, scope=SCOPE, limit=20)
        hits = []
        for hit in found:
            try:
                hour = datetime.strptime(hit.uri, "%Y-%m-%dT%H:%MZ").replace(tzinfo=UTC)
            except ValueError:
                continue
            if start - timedelta(hours=1) < hour < end:
                hits.append(ActivityHitInfo(hour=hour, title=hit.title, text=hit.text, score=round(hit.score, 4)))
        return hits[:8]

    async def delete(self, since: datetime, until: datetime) -> int:
        """Delete what was captured in [since, until) and its hours in the index; how many spans were touched."""
        await self.flush()
        touched = await self._db.write(lambda c: repo.delete_range(c, since, until))
        current = self._tracker.current
        if current is not None and current.started_at < until:
            self._tracker.restart(self._clock())  # its past lies in the range: it goes on as a new span
        self._mark(since, until)
        if self._retrieval is not None:
            await self.index_dirty()
        self._announce(force=True)  # every client's view of what was captured is stale now
        return touched
