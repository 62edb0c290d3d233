"""`/capture`: what activity capture records and with which consent — pause, resume, turn a stream on or off,
exclude an application or a title, set the retention; `/context`: what was captured (a day, or the last hours),
and deleting it. Over `capture/status|configure` and `context/query|delete`; the indicator under the prompt follows
the `capture/status` notification (see docs/capture.md)."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from cowork.clients.format import clean

if TYPE_CHECKING:
    from .repl import Repl

__all__ = ["capture_toolbar", "run_capture_command", "run_context_command"]

_USAGE = (
    "Usage: /capture · /capture pause [MINUTES] · /capture resume · /capture on|off STREAM · "
    "/capture exclude|include app|title PATTERN · /capture retention DAYS"
)
_CONTEXT_USAGE = "Usage: /context [today|yesterday|Nh] [APP] · /context delete today|yesterday|Nh"


def capture_toolbar(status: dict[str, Any] | None) -> str | None:
    """The line under the prompt while capture records or is paused (None: no line)."""
    if status is None:
        return None
    if status.get("capturing"):
        current = status.get("current")
        window = " ".join(f"{current['app']} — {current['title']}".split())[:80] if current else ""
        now = f": {clean(window)}" if current else ""  # one line: a title may carry newlines
        deep = " · deep work" if status.get("deepWork") else ""
        return f" ● capturing activity{now}{deep}   (/capture to pause or change) "
    if status.get("state") == "paused":
        until = status.get("pausedUntil")
        when = f" until {datetime.fromisoformat(until).astimezone():%H:%M}" if until else ""
        return f" ‖ activity capture paused{when}   (/capture resume) "
    return None


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def _show_status(repl: Repl, status: dict[str, Any]) -> None:
    state = status["state"]
    style = {"capturing": "bold red", "paused": "yellow"}.get(state, "dim")
    line = Text.assemble(("● " if state == "capturing" else "○ ", style), (f"capture {state}", style))
    if status.get("source") and state == "capturing":
        line.append(f" via {status['source']}", style="dim")
    repl.console.print(line)
    if status.get("reason"):
        repl.console.print(Text(f"  {status['reason']}", style="dim"))
    if status.get("current"):
        current = status["current"]
        since = datetime.fromisoformat(current["since"]).astimezone()
        repl.console.print(Text(f"  now: {clean(current['app'])} — {clean(current['title'])} (since {since:%H:%M})"))
    if status.get("deepWork"):
        repl.console.print(Text(f"  deep work in {clean(status.get('focusApp') or '')}", style="cyan"))
    table = Table("stream", "consent", "what it records", box=None)
    for stream in status["streams"]:
        consent = "on" if stream["enabled"] else "off"
        what = stream["description"] + (f" ({stream['note']})" if stream.get("note") and not stream["enabled"] else "")
        table.add_row(stream["stream"], consent, Text(what))
    repl.console.print(table)
    mine = [*(f"app {p}" for p in status["excludeApps"]), *(f"title {p}" for p in status["excludeTitles"])]
    repl.console.print(Text(f"  your exclusions: {', '.join(mine) if mine else 'none'}", style="dim"))
    repl.console.print(Text("  always excluded: password managers, private browser windows", style="dim"))
    repl.console.print(Text(f"  kept for {status['retentionDays']} days", style="dim"))


async def run_capture_command(repl: Repl, arg: str) -> None:
    words = arg.split()
    verb = words[0].lower() if words else ""
    change: dict[str, Any] | None = None
    if not words:
        _show_status(repl, await repl.rpc.call("capture/status", {}))
        return
    if verb == "pause" and len(words) <= 2:
        change = {"paused": True}
        if len(words) == 2:
            if not words[1].isdigit():
                repl.console.print(Text(_USAGE, style="yellow"))
                return
            change["pauseMinutes"] = int(words[1])
    elif verb == "resume" and len(words) == 1:
        change = {"paused": False}
    elif verb in ("on", "off") and len(words) == 2:
        change = {"streams": {words[1].lower(): verb == "on"}}
    elif verb in ("exclude", "include") and len(words) >= 3 and words[1] in ("app", "title"):
        status = await repl.rpc.call("capture/status", {})
        key = "excludeApps" if words[1] == "app" else "excludeTitles"
        pattern = " ".join(words[2:])
        patterns = [p for p in status[key] if p != pattern] + ([pattern] if verb == "exclude" else [])
        if verb == "include" and pattern not in status[key]:
            repl.console.print(Text(f"{pattern!r} is not among your exclusions.", style="yellow"))
            return
        change = {key: patterns}
    elif verb == "retention" and len(words) == 2 and words[1].isdigit():
        change = {"retentionDays": int(words[1])}
    if change is None:
        repl.console.print(Text(_USAGE, style="yellow"))
        return
    _show_status(repl, await repl.rpc.call("capture/configure", change))


def _range(word: str) -> tuple[datetime, datetime] | None:
    now = datetime.now().astimezone()
    today = datetime.combine(now.date(), time(), now.tzinfo)
    if word in ("", "today"):
        return today, now
    if word == "yesterday":
        return today - timedelta(days=1), today
    if word.endswith("h") and word[:-1].isdigit() and 0 < int(word[:-1]) <= 24 * 30:
        return now - timedelta(hours=int(word[:-1])), now
    return None


async def run_context_command(repl: Repl, arg: str) -> None:
    words = arg.split()
    if words and words[0] == "delete":
        span = _range(words[1]) if len(words) == 2 else None
        if span is None:
            repl.console.print(Text(_CONTEXT_USAGE, style="yellow"))
            return
        since, until = span
        question = f"Delete what was captured from {since:%a %H:%M} to {until:%a %H:%M}? [y/N] › "
        if (await repl.ask_line(question)).strip().lower() not in ("y", "yes"):
            repl.console.print(Text("Nothing was deleted.", style="dim"))
            return
        deleted = (await repl.rpc.call("context/delete", {"since": since.isoformat(), "until": until.isoformat()}))[
            "deleted"
        ]
        repl.console.print(Text(f"Deleted ({deleted} spans touched).", style="green"))
        return
    span = _range(words[0].lower() if words else "")
    app = " ".join(words[1:]) if span is not None else " ".join(words)
    if span is None:
        span = _range("today")
    assert span is not None
    since, until = span
    params: dict[str, Any] = {"since": since.isoformat(), "until": until.isoformat()}
    if app:
        params["app"] = app
    result = await repl.rpc.call("context/query", params)
    if not result["spans"]:
        repl.console.print(Text(f"Nothing captured from {since:%a %H:%M} to {until:%a %H:%M}.", style="dim"))
        return
    totals = Table("application", "time", "windows", box=None)
    for total in result["apps"]:
        totals.add_row(Text(clean(total["app"] or "unknown")), _duration(total["seconds"]), str(total["spans"]))
    repl.console.print(totals)
    for focus in result["focus"]:
        start = datetime.fromisoformat(focus["startedAt"]).astimezone()
        repl.console.print(Text(f"  focus: {clean(focus['app'])} from {start:%H:%M} ({_duration(focus['seconds'])})"))
    spans = Table("from", "to", "application", "window", box=None)
    for span_ in result["spans"][-40:]:
        start = datetime.fromisoformat(span_["startedAt"]).astimezone()
        end = datetime.fromisoformat(span_["endedAt"]).astimezone()
        spans.add_row(f"{start:%H:%M}", f"{end:%H:%M}", Text(clean(span_["app"])), Text(clean(span_["title"])[:80]))
    repl.console.print(spans)
    if len(result["spans"]) > 40:
        repl.console.print(Text(f"  (the last 40 of {len(result['spans'])} shown)", style="dim"))
