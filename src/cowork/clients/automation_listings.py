"""Automations, runs and notifications listed and detailed, as the CLI, the REPL and the TUI show them: tables where
there is room (a terminal), lines where there is not (the TUI's chat), and the whole of one automation or run.

Built from `automations`' lines; everything from the server is shown as `Text`, never as markup.
"""

from __future__ import annotations

import json
from datetime import datetime

from pydantic import JsonValue
from rich import box
from rich.table import Table
from rich.text import Text

from cowork.protocol import AutomationInfo, AutomationRunInfo, NotificationInfo

from .automations import (
    RUN_MARK,
    TIER_STYLE,
    approval_hint,
    duration,
    pending_text,
    run_heading,
    step_line,
    trigger_text,
    value_text,
)
from .format import clean, shorten

__all__ = [
    "automation_detail",
    "automations_lines",
    "automations_table",
    "notifications_lines",
    "notifications_table",
    "run_detail",
    "runs_lines",
    "runs_table",
]


def _when(moment: datetime) -> str:
    return f"{moment.astimezone():%Y-%m-%d %H:%M:%S}"


def _table(*columns: tuple[str, bool]) -> Table:
    """A listing with a rule under its header; `(name, no_wrap)` per column."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for name, no_wrap in columns:
        table.add_column(name, no_wrap=no_wrap)
    return table


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
        what += f" · inputs {value_text(run.inputs, 200)}"
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
