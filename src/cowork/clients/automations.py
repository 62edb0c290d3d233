"""Automations and proactive notifications as every terminal client shows them (the CLI, the REPL, the TUI).

Text only: rich `Text` built from the protocol's models (listings and details are in `automation_listings`); where
it is printed stays with the client.
Everything here comes from the server and may hold anything a flow file or a tool produced, so it is shown as `Text`
(never as markup) and cleaned of control characters.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import JsonValue
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
    "duration",
    "flow_format",
    "input_types",
    "notification_hint",
    "notification_line",
    "parse_inputs",
    "pending_text",
    "run_heading",
    "step_line",
    "trigger_text",
    "value_text",
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


def value_text(value: JsonValue, width: int) -> str:
    """A step's input or output on one line: text as it is, anything else as JSON, cut to `width`."""
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
        line.append(f"  → {value_text(step.output, room)}", style="dim")
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
