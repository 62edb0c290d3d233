"""Text both terminal clients (the CLI and the TUI) show for the same things, so the two cannot drift apart.

Each helper returns a plain string or a rich `Text` (Textual renders rich text too); where a line goes and how it is
indented in its transcript stays with the client.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from cowork.protocol import (
    AgentSpawned,
    BudgetWarning,
    ContextCompressed,
    ModelRetry,
    OperationStatus,
    Route,
    SearchHit,
    Todo,
    ToolInterrupted,
    ToolResult,
    UnknownPayload,
)

__all__ = [
    "FORK_USAGE",
    "PLAN_OFF",
    "PLAN_ON",
    "SafeConsole",
    "agent_spawned",
    "budget_warning",
    "cancelled",
    "child_status",
    "clean",
    "context_compressed",
    "cost",
    "diff_text",
    "fork_number",
    "model_retry",
    "money",
    "render_todos",
    "result_size",
    "result_summary",
    "route",
    "search_hit",
    "shorten",
    "summarize_arguments",
    "tool_interrupted",
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
