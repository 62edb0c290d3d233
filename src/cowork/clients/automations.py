"""Automations and proactive notifications as every terminal client shows them (the CLI, the REPL, the TUI).

Text only: rich `Text` and tables built from the protocol's models; where they are printed stays with the client.
Everything here comes from the server and may hold anything a flow file or a tool produced, so it is shown as `Text`
(never as markup) and cleaned of control characters.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import JsonValue
from rich import box
from rich.table import Table
from rich.text import Text

from cowork.protocol import (
    AutomationInfo,
    AutomationRunInfo,
    AutomationRunStatus,
    AutomationRunStepInfo,
    AutomationStepStatus,
    NotificationInfo,
    NotificationTier,
)

from .format import clean, shorten, summarize_arguments

__all__ = [
    "APPROVAL_NOTE_DELAY",
    "FINAL",
    "RUN_MARK",
    "STEP_MARK",
    "TIER_SEVERITY",
    "TIER_STYLE",
    "FlowFormat",
    "WaitTracker",
    "approval_hint",
    "automation_detail",
    "automations_lines",
    "automations_table",
    "duration",
    "flow_format",
    "input_types",
    "notification_hint",
    "notification_line",
    "notifications_lines",
    "notifications_table",
    "parse_inputs",
    "pending_text",
    "run_detail",
    "run_heading",
    "runs_lines",
    "runs_table",
    "step_line",
    "trigger_text",
    "waiting_line",
    "waiting_run",
]

FlowFormat = Literal["yaml", "toml"]

RUN_MARK: dict[AutomationRunStatus, tuple[str, str]] = {
    "running": ("▶", "cyan"),
    "waiting_for_human": ("⏸", "yellow"),
    "interrupted": ("!", "yellow"),
    "done": ("✔", "green"),
    "failed": ("✗", "red"),
    "cancelled": ("⏹", "dim"),
}
STEP_MARK: dict[AutomationStepStatus, tuple[str, str]] = {
    "running": ("◐", "cyan"),
    "done": ("✔", "green"),
    "failed": ("✗", "red"),
    "skipped": ("↷", "dim"),
    "waiting": ("⏸", "yellow"),
    "interrupted": ("!", "yellow"),
}
FINAL: frozenset[AutomationRunStatus] = frozenset({"done", "failed", "cancelled"})
"""A run in one of these never changes again."""

TIER_STYLE: dict[NotificationTier, str] = {"urgent": "bold red", "helpful": "yellow", "informational": "cyan"}
TIER_SEVERITY: dict[NotificationTier, Literal["error", "warning", "information"]] = {
    "urgent": "error",
    "helpful": "warning",
    "informational": "information",
}
"""A notification's tier as a Textual toast's severity."""

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SUFFIXES: dict[str, FlowFormat] = {".yaml": "yaml", ".yml": "yaml", ".toml": "toml"}


def parse_inputs(pairs: list[str], types: dict[str, str] | None = None) -> dict[str, JsonValue]:
    """`--input key=value` values: the value as JSON when it parses (`n=3`, `tags=["a"]`), else as a string; an input
    the flow declares as a string (`types`) is always the text as typed (`zip=01234`).

    Raises:
        ValueError: naming the pair that is not `key=value` with a valid key.
    """
    inputs: dict[str, JsonValue] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not _KEY.fullmatch(key):
            raise ValueError(f"--input {pair!r} is not KEY=VALUE (a key is a letter or _ then letters, digits or _)")
        if (types or {}).get(key) == "string":
            inputs[key] = value
            continue
        try:
            inputs[key] = json.loads(value)
        except ValueError:
            inputs[key] = value
    return inputs


def input_types(a: AutomationInfo) -> dict[str, str]:
    """The type each input of the flow declares (`string`, `number`…)."""
    declared = a.definition.get("inputs")
    if not isinstance(declared, dict):
        return {}
    return {name: str(spec.get("type")) for name, spec in declared.items() if isinstance(spec, dict)}


def flow_format(path: Path) -> FlowFormat:
    """A flow file's format by its suffix.

    Raises:
        ValueError: a suffix that is neither YAML nor TOML.
    """
    found = _SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise ValueError(f"{path.name}: a flow file ends in .yaml, .yml or .toml")
    return found


def duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def _when(moment: datetime) -> str:
    return f"{moment.astimezone():%Y-%m-%d %H:%M:%S}"


def trigger_text(trigger: dict[str, Any]) -> str:
    """What starts a flow, on one line: `manual`, `cron 0 9 * * 1-5 (Europe/Paris)`, `files *.md (created)`…"""
    kind = str(trigger.get("type", "manual"))
    if kind == "cron":
        text = f"cron {trigger.get('expression', '')} ({trigger.get('timezone', 'UTC')})"
    elif kind == "file":
        events = trigger.get("events")
        said = f" ({', '.join(map(str, events))})" if isinstance(events, list) else ""
        text = f"files {' '.join(map(str, trigger.get('patterns') or []))}{said}"
    elif kind == "sessionEvent":
        text = f"session event {trigger.get('eventType') or trigger.get('event_type') or ''}"
    elif kind == "mcpNotification":
        text = f"MCP {trigger.get('server', '')} {trigger.get('method', '')}"
    else:
        text = kind
    return clean(" ".join(text.split()))


def _value(value: JsonValue, width: int) -> str:
    return shorten(clean(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)), width)


def step_line(step: AutomationRunStepInfo, width: int = 120) -> Text:
    """One step of a run: `  ✔ greet  toolCall  12 ms  → output`, a failure's error or why it waits or was skipped;
    the output and note cut to end the line by `width`, an error whole (to a point: it is what the reader wants)."""
    mark, style = STEP_MARK.get(step.status, ("?", ""))
    line = Text.assemble(f"  {mark} ", (clean(step.step_id), "bold"), f"  {clean(step.type)}")
    line.stylize(style, 0, 4)
    if step.duration_ms is not None:
        line.append(f"  {duration(step.duration_ms / 1000)}", style="dim")
    room = max(20, width - line.cell_len - 4)
    if step.error is not None:
        line.append(f"  {clean(step.error.code)}: {shorten(clean(step.error.message), 400)}", style="red")
    elif step.note:
        line.append(f"  {shorten(clean(step.note), room)}", style="dim")
    elif step.status == "done" and step.output is not None:
        line.append(f"  → {_value(step.output, room)}", style="dim")
    return line


def waiting_run(runs: list[AutomationRunInfo], command: str) -> str:
    """The run `approve` or `reject` without a run id means: the one run that waits for approval.

    Raises:
        ValueError: none waits, or several do (they are named).
    """
    waiting = [run for run in runs if run.status == "waiting_for_human"]
    if len(waiting) == 1:
        return waiting[0].id
    if not waiting:
        raise ValueError("no run waits for approval")
    named = ", ".join(f"{run.id} ({clean(run.automation_name)})" for run in waiting)
    raise ValueError(f"{len(waiting)} runs wait for approval; name one ({command} approve RUN): {named}")


def run_heading(run: AutomationRunInfo) -> Text:
    """`✔ hello · run arun_1 · done in 0.3 s` (or `running since …`)."""
    mark, style = RUN_MARK.get(run.status, ("?", ""))
    line = Text.assemble((f"{mark} ", style), (clean(run.automation_name), "bold"), f" · run {run.id} · ")
    status: str = "waiting for approval" if run.status == "waiting_for_human" else run.status
    if run.finished_at is not None:
        status += f" in {duration((run.finished_at - run.started_at).total_seconds())}"
    else:
        status += f" since {run.started_at.astimezone():%H:%M:%S}"
    line.append(status, style=style)
    return line


def pending_text(run: AutomationRunInfo) -> Text:
    """What a waiting run asks: the step, the call and why it needs approval."""
    pending = run.pending
    if pending is None:
        return Text("(it waits, but the server did not say for what)", style="dim")
    body = Text.assemble(
        ("step ", "dim"),
        (clean(pending.step_id), "bold"),
        ": ",
        (clean(pending.tool), "bold"),
        f"({clean(summarize_arguments(pending.arguments, 300))})",
    )
    if pending.reason:
        body.append("\n" + clean(pending.reason), style="dim")
    return body


def approval_hint(run: AutomationRunInfo, command: str) -> str:
    """How to answer a waiting run (`command`: `/automation` or `cowork automation`); an agent step's approval is
    answered in its session."""
    if run.pending is not None and run.pending.session_id:
        session = run.pending.session_id
        resume = f"/resume {session}" if command.startswith("/") else f"cowork --resume {session}"
        return f"in session {session}: {resume}, then /continue"
    return f"{command} approve {run.id} · {command} reject {run.id}"


def _with_hint(line: Text, hint: str, width: int) -> Text:
    """`line` then its hint, dim: on the same line when both fit in `width`, else the hint on the next one."""
    gap = "   " if line.cell_len + 3 + len(hint) <= width else "\n  "
    line.append(gap + hint, style="dim")
    return line


def waiting_line(run: AutomationRunInfo, command: str, width: int = 200) -> Text:
    """A run that waits for approval: the run, the tool and how to answer (on a second line when it is long)."""
    line = Text.assemble(("⏸ ", "yellow"), "automation ", (clean(run.automation_name), "bold"), f" (run {run.id})")
    line.append(" waits for approval")
    if run.pending is not None:
        room = max(10, width - line.cell_len - len(run.pending.tool) - 5)  # the call ends the first line
        call = f"{run.pending.tool}({summarize_arguments(run.pending.arguments, room)})"
        line.append(": ")
        line.append(clean(call), style="bold")
    return _with_hint(line, approval_hint(run, command), width)


def notification_line(note: NotificationInfo, width: int = 200) -> Text:
    """A proactive notification, coloured by tier, with how to answer it (on a second line when it is long)."""
    style = TIER_STYLE.get(note.tier, "")
    line = Text.assemble(("● ", style), (shorten(clean(note.title), 80), f"bold {style}"))
    if note.count > 1:
        line.append(f" (×{note.count})", style="dim")
    hint = notification_hint(note)
    if note.body.strip():
        room = width - line.cell_len - 3
        # The body is cut to leave the hint room on the line, unless that leaves too little of it.
        line.append(" — " + shorten(clean(note.body), room - len(hint) - 3 if room - len(hint) - 3 >= 30 else room))
    return _with_hint(line, hint, width)


APPROVAL_NOTE_DELAY = 1.0
"""Seconds a client waits before it says an `automation_approval` notification (see `WaitTracker`)."""


def notification_hint(note: NotificationInfo) -> str:
    """How to answer a notification: a run waiting for approval by approving it, the others by id."""
    if note.kind == "automation_approval" and note.run_id:
        return f"/automation approve {note.run_id} · /automation reject {note.run_id}"
    return f"/notifications accept|dismiss|snooze {note.id}"


def _table(*columns: tuple[str, bool]) -> Table:
    """A listing with a rule under its header; `(name, no_wrap)` per column."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for name, no_wrap in columns:
        table.add_column(name, no_wrap=no_wrap)
    return table


class WaitTracker:
    """Which runs' waits for approval a client has told the user about, so that each wait is said once.

    The server says a run waits twice, in no set order: by the run's `automation/run` (it names the call) and by an
    urgent `automation_approval` notification (the one that reaches a desktop). A client says the run's line, and
    the notification only when it comes alone: it asks `approval_note` a moment after the notification arrived.
    Waits are only ever added: a run's messages may arrive out of order (a stale `running` after its
    `waiting_for_human`), and that must not make a wait news again.
    """

    def __init__(self) -> None:
        self._steps: set[tuple[str, str]] = set()
        self._latest: dict[str, str | None] = {}
        """Per run, the step of the last wait said (None: said by its notification, which names no step)."""

    def run_changed(self, run: AutomationRunInfo, *, say: bool = True) -> bool:
        """Whether to say that `run` waits now (`say=False`: it is asked about in place; only remember it)."""
        if run.status != "waiting_for_human":
            return False
        step = run.pending.step_id if run.pending is not None else ""
        if (run.id, step) in self._steps:
            return False
        self._steps.add((run.id, step))
        said_by_note = run.id in self._latest and self._latest[run.id] is None
        self._latest[run.id] = step
        return say and not said_by_note

    def approval_note(self, note: NotificationInfo) -> bool:
        """Whether an approval notification still needs saying: no wait of its run was said otherwise."""
        if note.run_id is None:
            return True
        if note.run_id in self._latest:
            return False
        self._latest[note.run_id] = None
        return True


def automations_table(automations: list[AutomationInfo]) -> Table:
    table = _table(("name", True), ("state", True), ("trigger", False), ("last run", True), ("next run", True))
    table.add_column("description")
    for a in automations:
        last = Text("—", style="dim")
        if a.last_run is not None:
            mark, style = RUN_MARK.get(a.last_run.status, ("?", ""))
            last = Text(f"{mark} {a.last_run.status} {a.last_run.started_at.astimezone():%m-%d %H:%M}", style=style)
        table.add_row(
            Text(clean(a.name), style="bold"),
            Text("enabled", style="green") if a.enabled else Text("disabled", style="dim"),
            Text(shorten(trigger_text(a.trigger), 40)),
            last,
            Text(f"{a.next_run_at.astimezone():%m-%d %H:%M}" if a.next_run_at else "—"),
            Text(shorten(clean(a.description), 50)),
        )
    return table


def runs_table(runs: list[AutomationRunInfo]) -> Table:
    # The id (to copy) and the short columns are never cut; names and triggers wrap.
    table = _table(("automation", False), ("status", True), ("started", True), ("took", True), ("trigger", False))
    table.add_column("run", no_wrap=True)
    for run in runs:
        mark, style = RUN_MARK.get(run.status, ("?", ""))
        took = duration((run.finished_at - run.started_at).total_seconds()) if run.finished_at else "—"
        table.add_row(
            Text(clean(run.automation_name)),
            Text(f"{mark} {'waiting' if run.status == 'waiting_for_human' else run.status}", style=style),
            f"{run.started_at.astimezone():%m-%d %H:%M}",
            took,
            Text(shorten(trigger_text(run.trigger), 30)),
            run.id,
        )
    return table


def automations_lines(automations: list[AutomationInfo]) -> Text:
    """The list for a narrow place (the TUI's chat): a line per automation and a dim one under it."""
    text = Text()
    for a in automations:
        text.append(clean(a.name), style="bold")
        text.append("  enabled" if a.enabled else "  disabled", style="green" if a.enabled else "dim")
        text.append(f"  {trigger_text(a.trigger)}\n")
        said = [clean(shorten(a.description, 60))] if a.description else []
        if a.last_run is not None:
            said.append(f"last run {a.last_run.status} {a.last_run.started_at.astimezone():%m-%d %H:%M}")
        if a.next_run_at is not None:
            said.append(f"next {a.next_run_at.astimezone():%m-%d %H:%M}")
        if said:
            text.append("  " + " · ".join(said) + "\n", style="dim")
    text.rstrip()
    return text


def runs_lines(runs: list[AutomationRunInfo]) -> Text:
    """Runs for a narrow place: the heading of each, its id whole (to copy)."""
    return Text("\n").join(run_heading(run) for run in runs)


def notifications_lines(notes: list[NotificationInfo]) -> Text:
    """Notifications for a narrow place: the title coloured by tier, then its id, time and answer, then the body."""
    text = Text()
    for note in notes:
        text.append(shorten(clean(note.title), 80), style=f"bold {TIER_STYLE.get(note.tier, '')}")
        text.append(f"\n  {note.id} · {note.delivered_at.astimezone():%m-%d %H:%M}", style="dim")
        text.append(f" · {note.response}\n" if note.response else "\n", style="dim")
        if note.body.strip():
            text.append(f"  {shorten(clean(note.body), 160)}\n")
    text.rstrip()
    return text


def _inputs(a: AutomationInfo) -> Text | None:
    declared = a.definition.get("inputs")
    if not isinstance(declared, dict) or not declared:
        return None
    parts = []
    for name, spec in declared.items():
        kind = spec.get("type", "?") if isinstance(spec, dict) else "?"
        default = spec.get("default") if isinstance(spec, dict) else None
        parts.append(f"{name} ({kind}" + (f", default {json.dumps(default)})" if default is not None else ")"))
    return Text("Inputs: " + clean(", ".join(parts)))


def automation_detail(a: AutomationInfo, runs: list[AutomationRunInfo], *, narrow: bool = False) -> list[Text | Table]:
    """`show`: the automation's state, inputs, steps, warnings, recent runs (`narrow`: as lines, not a table) and its
    flow file."""
    state = Text("enabled", style="green") if a.enabled else Text("disabled", style="dim")
    head = Text.assemble((clean(a.name), "bold"), f"  {a.id} · ", state, f" · version {a.version} · ")
    head.append(trigger_text(a.trigger))
    if a.enabled:
        head.append(f" · the agent calls it as {a.tool}", style="dim")
    shown: list[Text | Table] = [head]
    if a.description:
        shown.append(Text(clean(a.description)))
    if a.next_run_at is not None:
        shown.append(Text(f"Next run: {_when(a.next_run_at)}"))
    inputs = _inputs(a)
    if inputs is not None:
        shown.append(inputs)
    steps = a.definition.get("steps")
    if isinstance(steps, list):
        listing = Text("Steps:")
        for number, step in enumerate(steps, 1):
            if isinstance(step, dict):
                what = step.get("tool") or step.get("title") or step.get("when") or step.get("prompt") or ""
                listing.append(f"\n  {number}. ")
                listing.append(clean(str(step.get("id", "?"))), style="bold")
                listing.append(f"  {clean(str(step.get('type', '?')))}  ")
                listing.append(shorten(clean(str(what)), 60), style="dim")
        shown.append(listing)
    for warning in a.warnings:
        shown.append(Text(f"⚠ {clean(warning)}", style="yellow"))
    if runs:
        shown.append(Text("Recent runs:", style="bold"))
        shown.append(runs_lines(runs) if narrow else runs_table(runs))
    else:
        shown.append(Text("No runs yet.", style="dim"))
    shown.append(Text("Flow file (cowork automation export):", style="bold"))
    shown.append(Text(clean(a.text.rstrip("\n")), style="dim"))
    return shown


def _block(label: str, value: JsonValue, max_lines: int = 12) -> Text:
    """A step's input or output: on the label's line when it is short, else as an indented block under it."""
    if not isinstance(value, str):
        compact = json.dumps(value, ensure_ascii=False)
        if len(compact) <= 100:
            return Text(f"    {label}: {clean(compact)}", style="dim")
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    lines = clean(text).splitlines() or [""]
    if len(lines) == 1 and len(lines[0]) <= 100:
        return Text(f"    {label}: {lines[0]}", style="dim")
    more = [f"… {len(lines) - max_lines} more lines"] if len(lines) > max_lines else []
    return Text(f"    {label}:\n" + "\n".join(f"      {line}" for line in [*lines[:max_lines], *more]), style="dim")


def run_detail(run: AutomationRunInfo, command: str = "cowork automation") -> list[Text]:
    """`run-info`: the run, then each step with its input, output, error and note (`command` answers a wait)."""
    shown = [run_heading(run)]
    what = f"  version {run.version} · {trigger_text(run.trigger)} · started {_when(run.started_at)}"
    if run.inputs:
        what += f" · inputs {_value(run.inputs, 200)}"
    if run.session_id:
        what += f" · session {run.session_id}"
    shown.append(Text(what, style="dim"))
    for step in run.steps:
        shown.append(step_line(step, width=160))
        if step.input is not None:
            shown.append(_block("input", step.input))
        if step.output is not None:
            shown.append(_block("output", step.output))
    if run.status == "waiting_for_human":
        shown.append(Text("Waiting for your approval:", style="yellow"))
        pending = pending_text(run)
        shown.append(Text("  ") + Text("\n  ").join(pending.split("\n")))
        shown.append(Text(f"  {approval_hint(run, command)}", style="dim"))
    said = {(s.error.code, s.error.message) for s in run.steps if s.error is not None}
    if run.error is not None and (run.error.code, run.error.message) not in said:
        shown.append(Text(f"{clean(run.error.code)}: {clean(run.error.message)}", style="red"))
    if run.result is not None:
        shown.append(_block("result", run.result, max_lines=40))
    return shown


def notifications_table(notes: list[NotificationInfo]) -> Table:
    table = _table(("id", True), ("tier", True), ("when", True), ("title", False), ("answer", True))
    for note in notes:
        title = Text(shorten(clean(note.title), 50), style="bold")
        if note.body.strip():
            title.append("\n" + shorten(clean(note.body), 70), style="dim")
        table.add_row(
            note.id,
            Text(note.tier, style=TIER_STYLE.get(note.tier, "")),
            f"{note.delivered_at.astimezone():%m-%d %H:%M}",
            title,
            Text(note.response or "—", style="dim" if note.response else ""),
        )
    return table
