"""Text both terminal clients (the CLI and the TUI) show for the same things, so the two cannot drift apart.

Each helper returns a plain string or a rich `Text` (Textual renders rich text too); where a line goes and how it is
indented in its transcript stays with the client.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Literal

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from cowork.protocol import (
    AgentSpawned,
    BudgetWarning,
    ContextCompressed,
    HealthResult,
    InitializeResult,
    ModelRetry,
    OperationStatus,
    ReceivedPayload,
    Route,
    SearchHit,
    SessionRestoreResult,
    Todo,
    ToolInterrupted,
    ToolResult,
    UnknownPayload,
    UserMessage,
)

__all__ = [
    "FORK_USAGE",
    "PLAN_OFF",
    "PLAN_ON",
    "REWIND_USAGE",
    "RestoreChoice",
    "SafeConsole",
    "agent_spawned",
    "budget_warning",
    "cancelled",
    "child_status",
    "clean",
    "conflict_warning",
    "context_compressed",
    "cost",
    "degraded_lines",
    "diff_text",
    "fork_number",
    "model_retry",
    "money",
    "render_todos",
    "restore_diff",
    "restored",
    "result_size",
    "result_summary",
    "rewind_choice",
    "rewind_help",
    "rewind_number",
    "route",
    "search_hit",
    "shorten",
    "summarize_arguments",
    "tool_interrupted",
    "turn_messages",
    "undo_heading",
    "unknown_event",
]

_TODO_MARK = {"completed": ("✔", "green"), "in_progress": ("◐", "yellow"), "pending": ("○", "dim")}
_BUDGET_LABEL = {
    "interaction": "this request's",
    "daily": "today's",
    "weekly": "this week's",
    "monthly": "this month's",
}


def summarize_arguments(arguments: dict[str, Any], width: int = 70) -> str:
    """A tool call's arguments on one line (`key=value, …`), cut to `width` with an ellipsis."""
    parts = []
    for key, value in arguments.items():
        shown = value if isinstance(value, str) else json.dumps(value)
        parts.append(f"{key}={shown}")
    text = ", ".join(parts).replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def result_size(content: str) -> str:
    """How big a tool result is: `3 lines, 47 chars`."""
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    return f"{lines} line{'s' if lines != 1 else ''}, {len(content):,} chars"


def result_summary(result: ToolResult, width: int) -> str:
    """A tool result on one line: its size, or for an error the error's first line."""
    if not result.is_error:
        return result_size(result.content)
    return result.content.splitlines()[0][:width] if result.content.strip() else "error"


def money(usd: float, places: int = 4) -> str:
    """A dollar amount: `$0.0421` (4 places suit per-turn costs; 2 suit a day's); `<$0.0001` below the last place."""
    if 0 < usd < 10**-places:
        return f"<${10**-places:.{places}f}"
    return f"${usd:.{places}f}"


def cost(usd: float, known: bool, places: int = 4) -> str:
    """What something cost, saying so when a price was unknown: `$0.0421`, `price unknown`, `$0.0421 + price unknown`."""
    if known:
        return money(usd, places)
    return f"{money(usd, places)} + price unknown" if usd else "price unknown"


def render_todos(todos: list[Todo], indent: str = "") -> Text:
    """The progress list, one line per item (each ending in a newline), done ones struck through."""
    text = Text()
    for todo in todos:
        mark, style = _TODO_MARK[todo.status]
        label = todo.active_form if todo.status == "in_progress" and todo.active_form else todo.content
        text.append(f"{indent}{mark} ", style=style)
        text.append(label + "\n", style="strike dim" if todo.status == "completed" else "")
    return text


def tool_interrupted(p: ToolInterrupted) -> Text:
    verb = "asking before running it again" if p.action == "ask" else "running it again"
    return Text(f"  ⎿ {p.name} was interrupted by a restart; {verb}", style="yellow")


def route(p: Route) -> Text:
    return Text(f"⇢ {p.provider}:{p.model} ({p.tier}): {p.reason}", style="yellow" if p.notify else "dim")


def model_retry(p: ModelRetry, indent: str = "") -> Text:
    return Text(
        f"{indent}⟳ {p.code.replace('_', ' ')}: trying again in {p.delay_seconds:.1f} s "
        f"(attempt {p.attempt} of {p.max_attempts})",
        style="yellow",
    )


def budget_warning(p: BudgetWarning) -> Text:
    return Text(
        f"⚠ {p.fraction:.0%} of {_BUDGET_LABEL[p.cap]} budget used ({money(p.spent_usd, 2)} of {money(p.limit_usd, 2)})",
        style="yellow",
    )


def context_compressed(p: ContextCompressed, indent: str = "") -> Text:
    return Text(
        f"{indent}⟲ context compressed: {p.summarized_messages} messages summarised "
        f"({p.tokens_before:,} → {p.tokens_after:,} tokens)",
        style="dim",
    )


def agent_spawned(p: AgentSpawned) -> Text:
    return Text.assemble(("◆ ", "magenta"), (f"{p.agent_type} agent", "bold"), (f": {p.task[:80]}", "dim"))


def child_status(kind: str, status: OperationStatus) -> Text:
    """A sub-agent's operation stopped (its parent's transcript shows one line)."""
    return Text(f"  ↳ {kind} agent {status}", style="dim" if status == OperationStatus.DONE else "yellow")


def cancelled(reason: str | None) -> Text:
    return Text(f"⏹ cancelled{': ' + reason if reason else ''}", style="yellow")


def unknown_event(p: UnknownPayload) -> Text:
    """The neutral line for an event this client cannot read (a newer server's type, or a malformed one)."""
    return Text(f"· event {p.type}" + (f" (unreadable: {p.problem})" if p.problem else ""), style="dim")


def degraded_lines(health: HealthResult, init: InitializeResult) -> list[Text]:
    """One line per degraded subsystem (`! mcp: …`); nothing when all is well. The sandbox is left out when the
    client shows `capabilities.sandboxNote` already (the same words)."""
    said = {"sandbox"} if init.capabilities.sandbox_note else set()
    return [
        Text(f"! {s.name}: {s.reason or 'degraded'}", style="yellow")
        for s in health.subsystems
        if s.status == "degraded" and s.name not in said
    ]


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shorten(text: str, width: int) -> str:
    """`text` on one line, cut at a word boundary to fit `width` (with `…`), never mid-word."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text[: width - 1].rsplit(" ", 1)[0] if " " in text[: width - 1] else text[: width - 1]
    return cut.rstrip(" ,;:.") + "…"


PLAN_ON = "Plan mode on: only tools that change nothing run; the agent plans first. /plan off approves the plan."
PLAN_OFF = "Plan mode off: the agent may act (approvals as usual)."


def search_hit(hit: SearchHit) -> Text:
    """A `session/search` hit's snippet on one line, the matched words highlighted, who said it first."""
    who = {"user": "you", "assistant": "cowork", "tool": "tool"}[hit.kind]
    line = Text(f"{who}: ", style="dim")
    position = 0
    for start, end in [*hit.matches, (len(hit.snippet), len(hit.snippet))]:
        line.append(" ".join(clean(hit.snippet[position:start]).split("\n")))
        line.append(clean(hit.snippet[start:end]), style="bold yellow")
        position = end
    return line


def clean(text: str) -> str:
    """Untrusted text made safe for a terminal: control characters (ESC above all, which could recolour, retitle or
    rewrite the screen) become visible `\\x1b`-style escapes; newlines and tabs stay."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text) if _CONTROL.search(text) else text


class SafeConsole(Console):
    """A rich Console that never writes a control character it did not generate itself.

    Model output, tool output and file contents reach the terminal through rich renderables (markdown, panels,
    text); rich keeps ESC in text. Every text segment is cleaned just before it is written; rich's own control
    segments (cursor moves of a live display) and styles are left alone.
    """

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(clean(segment.text), segment.style) for segment in buffer
        )


def diff_text(diff: str, max_lines: int = 60) -> Text:
    """A unified diff coloured the usual way (+ green, - red, @@ cyan, headers bold), cut at `max_lines`."""
    lines = diff.splitlines()
    text = Text()
    for line in lines[:max_lines]:
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = "dim"
        text.append(clean(line) + "\n", style=style)
    if len(lines) > max_lines:
        text.append(f"… {len(lines) - max_lines} more lines\n", style="dim italic")
    text.rstrip()
    return text


FORK_USAGE = "Usage: /fork (all of it) or /fork N (before your N-th message, to send it again or change it)"


def fork_number(arg: str) -> int | None:
    """`/fork`'s argument: None for all of the conversation, else the number of the user's message to fork before.

    Raises:
        ValueError: anything but nothing or a whole number from 1 (the message says how to use `/fork`).
    """
    text = arg.strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise ValueError(FORK_USAGE)
    return int(text)


def turn_messages(payloads: Iterable[ReceivedPayload]) -> list[str]:
    """The text of each of the user's messages that started a turn, in order: message N of `/fork N` and `/rewind N`
    is the N-th of these, as the server counts them (a message steering a running turn has no number)."""
    return [p.text for p in payloads if isinstance(p, UserMessage) and not p.steer]


REWIND_USAGE = (
    "Usage: /rewind N — go back to before your N-th message: its files, the conversation (a new session; this one "
    "stays), or both"
)

RestoreChoice = Literal["files", "conversation", "both"]


def rewind_number(arg: str) -> int:
    """`/rewind`'s argument: the number of the user's message to go back to before.

    Raises:
        ValueError: anything but a whole number from 1 (the message says how to use `/rewind`).
    """
    text = arg.strip()
    if not text.isdigit() or int(text) < 1:
        raise ValueError(REWIND_USAGE)
    return int(text)


def rewind_choice(answer: str) -> RestoreChoice | None:
    """What to restore, from the answer to "[f]iles, [c]onversation, [b]oth": None (Enter, anything else) cancels."""
    word = answer.strip().lower()
    choices: tuple[RestoreChoice, ...] = ("files", "conversation", "both")
    return next((choice for choice in choices if word and choice.startswith(word)), None)


def rewind_help(messages: list[str], note: str = REWIND_USAGE, last: int = 15) -> Text:
    """`note` (the usage, or why the number was refused), then the user's messages numbered as `/rewind` counts
    them, one line each (only the `last` ones)."""
    text = Text(clean(note) + "\n", style="yellow")
    if not messages:
        text.append("This session has no messages of yours yet.", style="dim")
        return text
    start = max(0, len(messages) - last)
    if start:
        text.append(f"  … {start} earlier\n", style="dim")
    for number, message in enumerate(messages[start:], start=start + 1):
        text.append(f"  {number:>2}. ", style="bold")
        text.append(clean(shorten(message, 70)) + "\n", style="dim")
    text.rstrip()
    return text


def undo_heading(result: SessionRestoreResult) -> str:
    """What `/undo` takes back, in words: `The last change to the files (write, in your message 2)`."""
    if not result.checkpoints:
        return "The last change to the files"
    last = result.checkpoints[0]
    where = f", in your message {last.message}" if last.message is not None else ""
    return f"The last change to the files ({last.tool}{where})"


def restore_diff(result: SessionRestoreResult, max_lines: int = 200, empty: str = "No file changes.") -> Text:
    """What a restore changes (changed), file by file as `/diff` shows it, then the files it cannot restore and why."""
    text = Text()
    for change in result.files:
        text.append(f"{change.status} ", style="bold")
        text.append(clean(change.path), style="bold cyan")
        text.append(f"  +{change.additions} -{change.deletions}\n", style="dim")
        text.append_text(diff_text(change.diff, max_lines))
        text.append("\n")
    if not result.files:
        text.append(empty + "\n", style="dim")
    for skipped in result.skipped:
        text.append(f"not restored: {clean(skipped)}\n", style="yellow")
    text.rstrip()
    return text


def conflict_warning(result: SessionRestoreResult, doing: str) -> Text | None:
    """The warning for files changed outside Cowork since (`doing`, say `undoing`, overwrites that); None if none."""
    if not result.conflicts:
        return None
    files = ", ".join(clean(path) for path in result.conflicts)
    return Text(f"⚠ changed outside Cowork since: {files} — {doing} overwrites that", style="bold red")


_RESTORED = {"added": "brought back", "modified": "restored", "deleted": "removed"}


def restored(result: SessionRestoreResult) -> Text:
    """What an applied restore did: each file and what became of it, then what it could not restore."""
    if result.files:
        done = ", ".join(f"{clean(f.path)} ({_RESTORED[f.status]})" for f in result.files)
        text = Text(f"Files restored: {done}.", style="bold green")
    else:
        text = Text("No file needed restoring.", style="dim")
    for skipped in result.skipped:
        text.append(f"\nnot restored: {clean(skipped)}", style="yellow")
    return text
