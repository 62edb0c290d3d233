"""Activity capture's CPU cost: an hour of simulated window switching compressed into seconds, against a floor.

    uv run python bench/capture.py [--hours 1] [--rounds 5] [--samples N] [--index]

The input is one sample a second (3,600 an hour, seeded): the user switches among eight applications every 5-60 s,
an editor's and a browser's titles change now and then (files, tabs), a password manager and a private browser
window come in front a few times (excluded), the desktop has focus for a moment, and twice an hour the user is away
for 4-9 minutes (over the 180 s idle threshold). A second input switches window at every sample (the worst case).
The clock is simulated: sample k is at 09:00 + k s.

- tracker: `Tracker.observe` alone over the samples, as the service configures it.
- pipeline: a `CaptureService` over a real SQLite file, its source a replay of the samples through the service's own
  sampler thread. The replay keeps the service in step with simulated time, as at one sample a second: it hands
  over the next sample once the service has taken the last one and the database write it started has committed,
  and every 30 simulated seconds it flushes the way the service's 30 s timer does (the timer itself, in real
  seconds, is set out of the way). The service's indicator status is computed on every change as in the server;
  publishing it to clients is not included. No `activity` index (`capture.index = false`). After the last sample,
  `flush()`, and the rows in the database must be exactly the spans the tracker alone produced, or the bench fails.
- replay alone: the same hand-over with nothing behind it (a thread like the sampler, a loop that ignores the
  samples). It is inside the pipeline's figure, and most of it is not there in a server, where a sample wakes the
  loop once and no thread waits for the loop; the service's own cost lies between the pipeline less this and the
  pipeline.
- floor: the same final spans written straight to `activity_spans` with the sqlite3 module, one `executemany` in
  one transaction: what storing the hour costs at the least.
- with indexing (`--index`, one round): the pipeline with the `activity` index on and the local model as the server
  builds it (`Retrieval`), every 300 simulated seconds a pass of `index_dirty` as the service's index loop makes one,
  and one at the end; the model is loaded first and its load printed apart.

CPU is `time.process_time` (every thread of this process: the loop, the sampler and the database writer), the
median of `--rounds` rounds after a short warm-up round. "Core share" is the pipeline's CPU per simulated hour over
an hour: what one core spends on capture at one sample a second (the X11 source samples on every window change
and at most every `capture.poll_seconds`, 5 s, so one a second is more than it takes).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sqlite3
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cowork.capture import CaptureService, Exclusions, Tracker, Window
from cowork.config import CaptureConfig, MemoryConfig
from cowork.retrieval import Retrieval
from cowork.store import Connection, Database
from cowork.store.repos import activity
from cowork.store.repos.activity import ActivitySpanRow

START = datetime(2026, 11, 27, 9, tzinfo=UTC)
HOUR_S = 3600
DEFAULTS = CaptureConfig()
CONFIG = DEFAULTS.model_copy(update={"index": False, "poll_seconds": 0.2, "flush_seconds": 600.0})
"""The defaults, but no index, and the real-time flush timer out of the way (the replay flushes in simulated time)."""
FLUSH_EVERY = int(DEFAULTS.flush_seconds)
INDEX_EVERY = 300
"""How often the service indexes the hours that changed (`cowork.capture._service.INDEX_EVERY_S`)."""
SEED = 20261127


# ---- the input --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    window: Window | None
    idle: float


@dataclass(frozen=True, slots=True)
class App:
    app: str
    process: str
    titles: tuple[str, ...]
    retitle: float
    """The chance, each second, that the title changes (another file, another tab)."""
    weight: float


def _files(pattern: str, names: Sequence[str]) -> tuple[str, ...]:
    return tuple(pattern.format(name) for name in names)


APPS = (
    App(
        "Code",
        "code",
        _files(
            "{} - cowork - Visual Studio Code",
            ["_service.py", "_tracker.py", "core.py", "test_tracker.py", "capture.md", "pyproject.toml", "README.md"],
        ),
        0.04,
        5,
    ),
    App(
        "firefox",
        "firefox",
        _files(
            "{} — Mozilla Firefox",
            [
                "Pull request #412 · cowork/cowork",
                "sqlite3 — DB-API 2.0 interface for SQLite databases — Python 3.11 documentation",
                "asyncio — Asynchronous I/O",
                "Inbox (12) - mail",
                "Calendar - Week of 23 November 2026",
                "python - Why is my thread slow? - Stack Overflow",
                "YouTube",
            ],
        ),
        0.05,
        4,
    ),
    App("gnome-terminal-server", "gnome-terminal-", ("dev@laptop: ~/src/cowork", "dev@laptop: ~"), 0.01, 3),
    App("Slack", "slack", ("Slack | #cowork | Team", "Slack | Alice | Team", "Slack | #general | Team"), 0.02, 2),
    App("thunderbird", "thunderbird", ("Inbox - dev@example.org - Mozilla Thunderbird",), 0.0, 1),
    App("libreoffice-writer", "soffice.bin", ("design-notes.odt - LibreOffice Writer",), 0.0, 1),
    App("evince", "evince", ("sqlite-wal.pdf — On WAL mode",), 0.0, 1),
    App("Spotify", "spotify", ("Spotify Premium",), 0.0, 0.5),
)
PASSWORDS = App("KeePassXC", "keepassxc", ("Passwords.kdbx - KeePassXC",), 0.0, 0)
PRIVATE = App("firefox", "firefox", ("My bank — Mozilla Firefox Private Browsing",), 0.0, 0)
PIDS = {a.app: 1000 + i for i, a in enumerate((*APPS, PASSWORDS))}


def _window(app: App, title: str, pid: int) -> Window:
    return Window(app.app, title, pid, app.process)


def realistic(count: int, rng: random.Random) -> list[Sample]:
    """`count` samples of ordinary work, a second apart (see the module's docstring)."""
    samples: list[Sample] = []
    away: list[tuple[int, int]] = []
    for hour in range(0, count, HOUR_S):
        away.append((hour + rng.randint(600, 1200), rng.randint(240, 540)))
        away.append((hour + rng.randint(2100, 2900), rng.randint(240, 540)))
    current: Window | None = None
    while len(samples) < count:
        if away and len(samples) >= away[0][0]:
            length = away.pop(0)[1]
            samples.extend(Sample(current, float(s)) for s in range(1, length + 1))
            continue
        roll = rng.random()
        if roll < 0.03:
            app, seconds = PASSWORDS, rng.randint(8, 20)
        elif roll < 0.045:
            app, seconds = PRIVATE, rng.randint(30, 120)
        elif roll < 0.055:
            current, seconds = None, rng.randint(2, 5)  # the desktop: nothing has focus
            samples.extend(Sample(None, 0.0) for _ in range(seconds))
            continue
        else:
            others = [a for a in APPS if current is None or a.app != current.app]
            app = rng.choices(others, [a.weight for a in others])[0]
            seconds = rng.randint(5, 60)
        current = _window(app, rng.choice(app.titles), PIDS[app.app])
        for _ in range(seconds):
            if app.retitle and rng.random() < app.retitle:
                current = _window(app, rng.choice(app.titles), PIDS[app.app])
            idle = 0.0 if rng.random() < 0.7 else float(rng.randint(1, 40))  # reading: no input for a while
            samples.append(Sample(current, idle))
    return samples[:count]


def rapid(count: int, rng: random.Random) -> list[Sample]:
    """`count` samples, each in another window than the one before."""
    samples: list[Sample] = []
    last: tuple[str, str] | None = None
    while len(samples) < count:
        app = rng.choice(APPS)
        title = rng.choice(app.titles)
        if (app.app, title) == last:
            continue
        last = (app.app, title)
        samples.append(Sample(_window(app, title, PIDS[app.app]), 0.0))
    return samples


def describe(samples: Sequence[Sample]) -> str:
    switches = titles = excluded = away = 0
    exclusions = Exclusions.of(DEFAULTS.exclude_apps, DEFAULTS.exclude_titles)
    before: Window | None = None
    for sample in samples:
        window = sample.window
        if window is not None and exclusions.excludes(window):
            excluded += 1
        if sample.idle >= DEFAULTS.idle_seconds:
            away += 1
        if window != before:
            if window is not None and before is not None and window.app == before.app:
                titles += 1
            else:
                switches += 1
        before = window
    return (
        f"{switches:,} window switches, {titles:,} title changes, {excluded:,} excluded samples, "
        f"{away:,} samples idle over {DEFAULTS.idle_seconds:.0f} s"
    )


def times(count: int) -> list[datetime]:
    return [START + timedelta(seconds=k) for k in range(count)]


# ---- the tracker alone ------------------------------------------------------------------------------------------


def new_tracker(config: CaptureConfig) -> Tracker:
    """A tracker as the service makes one (the default settings: every consented stream on, no user exclusions)."""
    return Tracker(
        idle_seconds=config.idle_seconds,
        focus_seconds=config.focus_minutes * 60,
        min_span_seconds=config.min_span_seconds,
        exclusions=Exclusions.of(config.exclude_apps, config.exclude_titles),
    )


def tracker_run(samples: Sequence[Sample], at: Sequence[datetime]) -> tuple[float, float]:
    """CPU and wall seconds for `Tracker.observe` over the samples."""
    tracker = new_tracker(CONFIG)
    observe = tracker.observe
    cpu, wall = time.process_time(), time.perf_counter()
    for sample, now in zip(samples, at, strict=True):
        observe(now, sample.window, sample.idle)
    return time.process_time() - cpu, time.perf_counter() - wall


def expected_spans(samples: Sequence[Sample], at: Sequence[datetime]) -> list[ActivitySpanRow]:
    """The spans the tracker produces over the samples: closed ones final, the open one as it stands."""
    tracker = new_tracker(CONFIG)
    spans: dict[str, ActivitySpanRow] = {}
    for sample, now in zip(samples, at, strict=True):
        for span in tracker.observe(now, sample.window, sample.idle).spans:
            spans[span.id] = span
    return list(spans.values())


def _key(span: ActivitySpanRow) -> tuple[str, str, str | None, datetime, datetime]:
    return span.app, span.title, span.process, span.started_at, span.ended_at


def check(what: str, stored: Sequence[ActivitySpanRow], expected: Sequence[ActivitySpanRow]) -> None:
    """Fail loudly unless the database holds exactly the spans the tracker produced."""
    got, want = sorted(map(_key, stored)), sorted(map(_key, expected))
    if got != want:
        missing = [k for k in want if k not in set(got)][:3]
        extra = [k for k in got if k not in set(want)][:3]
        raise SystemExit(
            f"{what}: the database holds {len(got)} spans, the tracker produced {len(want)}; "
            f"missing {missing}, unexpected {extra}"
        )


# ---- the pipeline -----------------------------------------------------------------------------------------------


class WatchedDatabase(Database):
    """A database that knows whether a write is in flight (so the replay can wait for a flush to commit)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writes = 0
        self._busy = 0
        self._idle = threading.Condition()

    async def write(self, fn: Callable[[Connection], Any]) -> Any:
        with self._idle:
            self._busy += 1
        try:
            return await super().write(fn)
        finally:
            with self._idle:
                self._busy -= 1
                self.writes += 1
                self._idle.notify_all()

    def wait_idle(self) -> None:
        with self._idle:
            self._idle.wait_for(lambda: self._busy == 0)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Timer:
    """One of the service's periodic jobs, run every `every` simulated seconds; its CPU and results summed."""

    every: int
    run: Callable[[], Coroutine[Any, Any, int]]
    cpu: float = 0.0
    calls: int = 0
    total: int = 0


class Replay:
    """A capture source that replays samples in step with the service (see the module's docstring).

    The sampler thread asks for the window and the idle time, posts them to the loop, then calls `wait`: here the
    replay waits until the loop has taken the sample (a callback queued behind it, and behind the flush it may have
    started) and the database is idle, runs the timers due, and moves the clock to the next sample. The loop is idle
    whenever the clock moves, so nothing reads it half-way.
    """

    name = "replay"

    def __init__(
        self,
        samples: Sequence[Sample],
        at: Sequence[datetime],
        loop: asyncio.AbstractEventLoop,
        settle: Callable[[], None],
    ) -> None:
        self.samples, self.at, self.loop, self.settle = samples, at, loop, settle
        self.clock = Clock(at[0])
        self.timers: list[Timer] = []
        self.go = threading.Event()
        self.closed = threading.Event()
        self._taken = threading.Lock()
        """Held by the sampler thread while the loop takes a sample (the cheapest signal between two threads)."""
        self._taken.acquire()
        self.done: asyncio.Future[None] = loop.create_future()
        self.position = 0

    def open(self) -> None:
        self.go.wait()

    def active_window(self) -> Window | None:
        return self.samples[self.position].window

    def idle_seconds(self) -> float | None:
        return self.samples[self.position].idle

    def wait(self, timeout: float) -> bool:
        if self.position >= len(self.samples):
            self.closed.wait()
            return False
        # Queued behind the sample; its own callback then goes behind the flush task the sample may have started.
        self.loop.call_soon_threadsafe(self.loop.call_soon, self._taken.release)
        self._taken.acquire()
        self.settle()
        self.position += 1
        for timer in self.timers:
            if self.position % timer.every == 0:
                self.fire(timer)
        if self.position == len(self.samples):
            self.loop.call_soon_threadsafe(self.done.set_result, None)
            self.closed.wait()
            return False
        self.clock.now = self.at[self.position]
        return True

    def fire(self, timer: Timer) -> None:
        """Run the timer's job on the loop and wait for it (the sampler thread is the only other busy thread)."""
        cpu = time.process_time()
        timer.total += asyncio.run_coroutine_threadsafe(timer.run(), self.loop).result()
        timer.cpu += time.process_time() - cpu
        timer.calls += 1

    def close(self) -> None:
        self.closed.set()


@dataclass(frozen=True, slots=True)
class PipelineRun:
    cpu: float
    wall: float
    spans: int
    writes: int
    index: Timer | None = None
    model_load: float = 0.0


async def pipeline_run(
    samples: Sequence[Sample],
    at: Sequence[datetime],
    template: Path,
    expected: Sequence[ActivitySpanRow],
    *,
    index: bool = False,
) -> PipelineRun:
    """One replay through a fresh service and database; checked against `expected`."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cowork.db"
        shutil.copy(template, path)  # its mode too (0600)
        db = WatchedDatabase.sqlite(path)
        assert isinstance(db, WatchedDatabase)
        retrieval, model_load = None, 0.0
        if index:
            retrieval = Retrieval(db, MemoryConfig(), home=Path(tmp))  # as `Core` builds it
            model_load = time.process_time()
            await retrieval.index.embedder.embed(["the model loads on its first use"])
            model_load = time.process_time() - model_load
        loop = asyncio.get_running_loop()
        replay = Replay(samples, at, loop, db.wait_idle)
        config = CONFIG.model_copy(update={"index": index})
        service = CaptureService(
            db, config, env={}, retrieval=retrieval, clock=replay.clock, sources=lambda _env: (replay, None)
        )
        replay.timers.append(Timer(FLUSH_EVERY, service.flush))
        indexing = Timer(INDEX_EVERY, service.index_dirty) if index else None
        if indexing is not None:
            replay.timers.append(indexing)
        try:
            await service.start()
            await asyncio.sleep(0)  # the retention task's first pass starts its write…
            await asyncio.to_thread(db.wait_idle)  # …and it commits
            writes = db.writes
            cpu, wall = time.process_time(), time.perf_counter()
            replay.go.set()
            await replay.done
            await service.flush()
            if indexing is not None:  # what the next pass would find
                await asyncio.to_thread(replay.fire, indexing)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            writes = db.writes - writes
            end = at[-1] + timedelta(seconds=1)
            stored, _ = await db.read(lambda c: activity.in_range(c, at[0] - timedelta(hours=1), end))
            check("pipeline", stored, expected)
        finally:
            await service.stop()
            db.close()
    return PipelineRun(cpu, wall, len(stored), writes, indexing, model_load)


async def _no_flush() -> int:
    return 0


def _ignore(window: Window | None, idle: float | None) -> None:
    pass


async def replay_run(samples: Sequence[Sample], at: Sequence[datetime]) -> float:
    """CPU seconds of the replay's own hand-over, with a thread like the service's sampler and nothing on the loop."""
    loop = asyncio.get_running_loop()
    replay = Replay(samples, at, loop, lambda: None)
    replay.timers.append(Timer(FLUSH_EVERY, _no_flush))

    def sample() -> None:
        replay.open()
        while True:
            loop.call_soon_threadsafe(_ignore, replay.active_window(), replay.idle_seconds())
            if not replay.wait(CONFIG.poll_seconds):
                return

    thread = threading.Thread(target=sample, name="bench-replay", daemon=True)
    thread.start()
    cpu = time.process_time()
    replay.go.set()
    await replay.done
    cpu = time.process_time() - cpu
    replay.close()
    await asyncio.to_thread(thread.join)
    return cpu


# ---- the floor --------------------------------------------------------------------------------------------------


def _text(moment: datetime) -> str:
    """A timestamp as SQLAlchemy stores it in SQLite (naive UTC text with microseconds)."""
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


def floor_run(template: Path, spans: Sequence[ActivitySpanRow]) -> float:
    """CPU seconds to write `spans` into `activity_spans` in one transaction; checked by reading them back."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cowork.db"
        shutil.copy(template, path)  # its mode too (0600)
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        cpu = time.process_time()
        rows = [(s.id, s.app, s.title, s.process, _text(s.started_at), _text(s.ended_at)) for s in spans]
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO activity_spans (id, app, title, process, started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.execute("COMMIT")
        cpu = time.process_time() - cpu
        conn.close()
        db = Database.sqlite(path)
        try:
            stored, _ = db.read_sync(
                lambda c: activity.in_range(c, START - timedelta(days=1), START + timedelta(days=30))
            )
        finally:
            db.close()
        check("floor", stored, spans)
    return cpu


# ---- the run ----------------------------------------------------------------------------------------------------


@dataclass
class Figures:
    tracker_cpu: list[float]
    tracker_wall: list[float]
    pipeline: list[PipelineRun]
    replay: list[float]
    floor: list[float]


async def main(hours: float, rounds: int, count: int | None, index: bool) -> None:
    count = count or round(hours * HOUR_S)
    per_hour = HOUR_S / count  # figures are scaled to one simulated hour
    inputs = {
        "": realistic(count, random.Random(SEED)),
        "rapid switching": rapid(count, random.Random(SEED + 1)),
    }
    at = times(count)
    expected = {name: expected_spans(samples, at) for name, samples in inputs.items()}
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template.db"
        db = Database.sqlite(template)
        db.migrate()
        db.close()

        warm = min(count, 300)  # first-use costs: SQLAlchemy's statement caches, imports, threads
        for samples in inputs.values():
            tracker_run(samples[:warm], at[:warm])
            await pipeline_run(samples[:warm], at[:warm], template, expected_spans(samples[:warm], at[:warm]))
            await replay_run(samples[:warm], at[:warm])
            floor_run(template, expected_spans(samples[:warm], at[:warm]))

        figures = {name: Figures([], [], [], [], []) for name in inputs}
        for _ in range(rounds):
            for name, samples in inputs.items():
                f = figures[name]
                cpu, wall = tracker_run(samples, at)
                f.tracker_cpu.append(cpu)
                f.tracker_wall.append(wall)
                f.pipeline.append(await pipeline_run(samples, at, template, expected[name]))
                f.replay.append(await replay_run(samples, at))
                f.floor.append(floor_run(template, expected[name]))
        indexed = await pipeline_run(inputs[""], at, template, expected[""], index=True) if index else None

    print(
        f"input: {count:,} samples a second apart ({count / HOUR_S:g} simulated hours), median of {rounds} rounds; "
        f"ordinary work: {describe(inputs[''])}; rapid switching: a switch at every sample"
    )
    for name, f in figures.items():
        label = f" ({name})" if name else ""
        prefix = f"{name}: " if name else ""
        tracker_cpu = statistics.median(f.tracker_cpu)
        print(
            f"tracker{label}: {count / tracker_cpu:,.0f} samples/s of CPU ({tracker_cpu / count * 1e6:.2f} µs a sample; "
            f"{count / statistics.median(f.tracker_wall):,.0f} samples/s of wall time)"
        )
        cpu = statistics.median(r.cpu for r in f.pipeline) * per_hour
        wall = statistics.median(r.wall for r in f.pipeline)
        run = f.pipeline[0]
        print(
            f"pipeline{label}: {cpu * 1e3:,.1f} ms CPU per simulated hour ({count / wall:,.0f} samples/s of wall time, "
            f"{run.spans:,} spans, {run.writes:,} write transactions; "
            f"{cpu / HOUR_S * 1e6:.1f} µs CPU a sample)"
        )
        replay = statistics.median(f.replay) * per_hour
        print(
            f"replay alone{label}: {replay * 1e3:,.1f} ms CPU per simulated hour (the bench's hand-over, included above)"
        )
        floor = statistics.median(f.floor) * per_hour
        print(f"floor{label}: {floor * 1e3:,.2f} ms CPU per simulated hour ({run.spans:,} spans in one transaction)")
        print(
            f"{prefix}ratio pipeline/floor: {cpu / floor:,.0f} (less the replay's hand-over: {(cpu - replay) / floor:,.0f})"
        )
        print(f"{prefix}core share at 1 sample/s: {cpu / HOUR_S * 100:.4f} %")
    if indexed is not None:
        assert indexed.index is not None
        cpu, timer = indexed.cpu * per_hour, indexed.index
        print(
            f"pipeline with indexing: {cpu * 1e3:,.0f} ms CPU per simulated hour, of which indexing "
            f"{timer.cpu * per_hour * 1e3:,.0f} ms ({timer.calls} passes, one every {INDEX_EVERY} s and one at the end; "
            f"{timer.total} hour texts embedded); loading the local model first: {indexed.model_load * 1e3:,.0f} ms "
            "CPU, once per process"
        )
        print(f"core share at 1 sample/s with indexing: {cpu / HOUR_S * 100:.4f} %")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=1.0, help="simulated hours (3,600 samples each)")
    parser.add_argument("--samples", type=int, help="samples instead of whole hours (figures still per hour)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--index", action="store_true", help="also index the hour with the local embedder")
    args = parser.parse_args()
    if args.rounds < 1 or (args.samples is not None and args.samples < 2) or args.hours <= 0:
        parser.error("--rounds must be at least 1, --samples at least 2, --hours above 0")
    asyncio.run(main(args.hours, args.rounds, args.samples, args.index))
