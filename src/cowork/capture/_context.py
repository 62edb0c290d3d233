"""Reading captured activity: spans clipped to a range, time per application, focus sessions, and the text of an
hour as the `activity` index holds it. Pure functions over rows, so the query, the tool and the index agree."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from cowork.protocol import ActivityAppTotal, ActivitySpanInfo, FocusSessionInfo
from cowork.store.repos.activity import ActivitySpanRow

__all__ = ["FOCUS_GAP", "app_totals", "clip", "focus_sessions", "hour_of", "hour_text", "span_info"]

FOCUS_GAP = timedelta(seconds=5)
"""Two spans of one application this close together belong to one focus run (a title change, a dialog)."""


def clip(spans: Sequence[ActivitySpanRow], since: datetime, until: datetime) -> list[ActivitySpanRow]:
    """The spans cut to [since, until); those left empty dropped."""
    clipped = []
    for span in spans:
        start, end = max(span.started_at, since), min(span.ended_at, until)
        if end > start:
            clipped.append(replace(span, started_at=start, ended_at=end))
    return clipped


def span_info(span: ActivitySpanRow) -> ActivitySpanInfo:
    return ActivitySpanInfo(
        id=span.id,
        app=span.app,
        title=span.title,
        process=span.process,
        started_at=span.started_at,
        ended_at=span.ended_at,
        seconds=round(span.seconds, 3),
    )


def app_totals(spans: Sequence[ActivitySpanRow]) -> list[ActivityAppTotal]:
    seconds: defaultdict[str, float] = defaultdict(float)
    counts: defaultdict[str, int] = defaultdict(int)
    for span in spans:
        seconds[span.app] += span.seconds
        counts[span.app] += 1
    ranked = sorted(seconds, key=lambda app: (-seconds[app], app))
    return [ActivityAppTotal(app=app, seconds=round(seconds[app], 3), spans=counts[app]) for app in ranked]


def focus_sessions(spans: Sequence[ActivitySpanRow], minimum: timedelta) -> list[FocusSessionInfo]:
    """Runs of one application (spans in time order, gaps under `FOCUS_GAP`) lasting at least `minimum`."""
    sessions: list[FocusSessionInfo] = []
    run: list[ActivitySpanRow] = []

    def close() -> None:
        if run and run[-1].ended_at - run[0].started_at >= minimum:
            start, end = run[0].started_at, run[-1].ended_at
            sessions.append(
                FocusSessionInfo(
                    app=run[0].app, started_at=start, ended_at=end, seconds=round((end - start).total_seconds(), 3)
                )
            )
        run.clear()

    for span in spans:
        if run and (span.app != run[-1].app or span.started_at - run[-1].ended_at > FOCUS_GAP):
            close()
        run.append(span)
    close()
    return sessions


def hour_of(moment: datetime) -> datetime:
    """The start of the local-time hour `moment` falls in (in UTC): what the index keeps per source."""
    return moment.astimezone().replace(minute=0, second=0, microsecond=0).astimezone(UTC)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"


def hour_text(hour: datetime, spans: Sequence[ActivitySpanRow]) -> tuple[str, str]:
    """The title and text of one hour of activity (local time), as indexed: each window once, with its time."""
    local = hour.astimezone()
    title = f"Activity {local:%A %Y-%m-%d %H:%M}–{(local + timedelta(hours=1)):%H:%M}"
    seconds: defaultdict[tuple[str, str], float] = defaultdict(float)
    for span in clip(spans, hour, hour + timedelta(hours=1)):
        seconds[(span.app, span.title)] += span.seconds
    lines = [f"{title} (local time):"]
    for (app, window), spent in sorted(seconds.items(), key=lambda item: -item[1]):
        lines.append(f"- {app or 'unknown application'}: {window or '(no title)'} — {_minutes(spent)}")
    return title, "\n".join(lines)
