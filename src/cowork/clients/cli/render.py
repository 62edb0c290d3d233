"""Rendering session events in the terminal with rich: streamed markdown, one line per tool call."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.panel import Panel
from rich.text import Text

from cowork.protocol import (
    AgentSpawned,
    AssistantMessage,
    BudgetWarning,
    ContextCompressed,
    ErrorEvent,
    Guardrail,
    LogLine,
    ModelRetry,
    ModelStreamChunk,
    OperationStatus,
    OperationStatusChanged,
    Reasoning,
    Route,
    SessionEvent,
    Todo,
    Todos,
    ToolCall,
    ToolInterrupted,
    ToolResult,
    Usage,
)

__all__ = ["TERMINAL", "TurnView", "print_error", "render_todos", "summarize_arguments"]

TERMINAL = {OperationStatus.DONE, OperationStatus.ERROR, OperationStatus.CANCELLED, OperationStatus.INTERRUPTED}
_TODO_MARK = {"completed": ("✔", "green"), "in_progress": ("◐", "yellow"), "pending": ("○", "dim")}


def summarize_arguments(arguments: dict[str, Any], width: int = 70) -> str:
    parts = []
    for key, value in arguments.items():
        shown = value if isinstance(value, str) else json.dumps(value)
        parts.append(f"{key}={shown}")
    text = ", ".join(parts)
    return text if len(text) <= width else text[: width - 1] + "…"


def _size(content: str) -> str:
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    return f"{lines} line{'s' if lines != 1 else ''}, {len(content):,} chars"


def print_error(console: Console, code: str, message: str) -> None:
    console.print(Panel(Text(message), title=f"[bold red]{code}[/]", border_style="red", expand=False))


def render_todos(todos: list[Todo]) -> Text:
    text = Text()
    for todo in todos:
        mark, style = _TODO_MARK[todo.status]
        label = todo.active_form if todo.status == "in_progress" and todo.active_form else todo.content
        text.append(f"  {mark} ", style=style)
        text.append(label + "\n", style="strike dim" if todo.status == "completed" else "")
    return text


class TurnView:
    """Renders a turn's events as they arrive, with a live footer for what the user is typing.

    `done` is set when the turn's operation ends (or waits on something only a later message can change).
    `notes` gets what is about the run rather than its transcript (errors, cancellation, token counts); it is the
    same console in the REPL, and stderr for `cowork run`.
    """

    def __init__(self, console: Console, operation_id: str | None = None, *, notes: Console | None = None) -> None:
        self.console = console
        self.notes = notes or console
        self.operation_id = operation_id
        self.done = False
        self.status: OperationStatus | None = None
        self.typed = ""
        self.children: dict[str, str] = {}
        self._text = ""
        self._live: Live | None = None
        self._thinking_step: int | None = None
        self._tokens_in = 0
        self._tokens_out = 0
        self._cost = 0.0
        self._day_cost: float | None = None

    # -- the live area ----------------------------------------------------------------------------------------

    def _renderable(self) -> RenderableType:
        parts: list[RenderableType] = []
        if self._text:
            parts.append(Markdown(self._text))
        if self.typed:
            parts.append(Text(f"› {self.typed}", style="bold"))
        else:
            parts.append(Text("  type to add to this turn · Ctrl-C to cancel", style="dim"))
        return Group(*parts)

    def start(self) -> None:
        if self._live is None and self.console.is_terminal:
            self._live = Live(
                self._renderable(),
                console=self.console,
                refresh_per_second=12,
                vertical_overflow="visible",
                transient=True,
            )
            self._live.start()

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def refresh(self) -> None:
        if self._live is not None:
            self._live.update(self._renderable())

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Hand the terminal over (for a prompt), then take it back."""
        self._flush_text()
        self.stop()
        try:
            yield
        finally:
            if not self.done:
                self.start()

    def _flush_text(self, final: str | None = None) -> None:
        text = final if final is not None else self._text
        self._text = ""
        if text:
            self.console.print(Markdown(text))
        self.refresh()

    def _line(self, renderable: RenderableType) -> None:
        self.console.print(renderable)

    # -- events -----------------------------------------------------------------------------------------------

    def handle(self, event: SessionEvent) -> None:
        payload = event.payload
        op = getattr(payload, "operation_id", None)
        if op is not None and self.operation_id is not None and op != self.operation_id:
            if op in self.children:
                self._child_event(op, payload)
            return
        handler = _HANDLERS.get(type(payload))
        if handler is not None:
            handler(self, payload)
        # Approvals, questions and steering have no handler here: the REPL, which owns the prompt, answers them.

    def _on_chunk(self, payload: ModelStreamChunk) -> None:
        self._text += payload.text
        self.refresh()

    def _on_reasoning(self, payload: Reasoning) -> None:
        if self._thinking_step != payload.step:
            self._thinking_step = payload.step
            self._line(Text("✻ thinking…", style="dim italic"))

    def _on_message(self, payload: AssistantMessage) -> None:
        self._flush_text(payload.text)

    def _on_tool_call(self, payload: ToolCall) -> None:
        self._flush_text()
        self._line(
            Text.assemble(
                ("● ", "cyan"), (payload.name, "bold"), (f"({summarize_arguments(payload.arguments)})", "dim")
            )
        )

    def _on_tool_result(self, payload: ToolResult) -> None:
        first = payload.content.splitlines()[0][:100] if payload.content else ""
        summary = first if payload.is_error else _size(payload.content)
        self._line(Text(f"  ⎿ {summary}", style="red" if payload.is_error else "dim"))

    def _on_interrupted_tool(self, payload: ToolInterrupted) -> None:
        verb = "asking before running it again" if payload.action == "ask" else "running it again"
        self._line(Text(f"  ⎿ {payload.name} was interrupted by a restart; {verb}", style="yellow"))

    def _on_usage(self, payload: Usage) -> None:
        self._tokens_in += payload.input_tokens
        self._tokens_out += payload.output_tokens
        self._cost += payload.cost_usd
        self._day_cost = payload.day_cost_usd

    def _on_route(self, payload: Route) -> None:
        style = "yellow" if payload.notify else "dim"
        self._line(Text(f"⇢ {payload.provider}:{payload.model} ({payload.tier}): {payload.reason}", style=style))
        if payload.warning:
            self._line(Text(f"  ⚠ {payload.warning}", style="yellow"))

    def _on_retry(self, payload: ModelRetry) -> None:
        self._line(
            Text(
                f"  ⟳ {payload.code.replace('_', ' ')}: trying again in {payload.delay_seconds:.1f} s "
                f"(attempt {payload.attempt} of {payload.max_attempts})",
                style="yellow",
            )
        )

    def _on_budget_warning(self, payload: BudgetWarning) -> None:
        label = {"interaction": "this request's", "daily": "today's", "weekly": "this week's"}.get(
            payload.cap, "this month's"
        )
        self._line(
            Text(
                f"⚠ {payload.fraction:.0%} of {label} budget used (${payload.spent_usd:.2f} of ${payload.limit_usd:.2f})",
                style="yellow",
            )
        )

    def _on_log(self, payload: LogLine) -> None:
        self._line(Text(f"  │ {payload.text}", style="dim"))

    def _on_todos(self, payload: Todos) -> None:
        self._line(render_todos(payload.todos))

    def _on_spawned(self, payload: AgentSpawned) -> None:
        self.children[payload.child_operation_id] = payload.agent_type
        self._line(
            Text.assemble(("◆ ", "magenta"), (f"{payload.agent_type} agent", "bold"), (f": {payload.task[:80]}", "dim"))
        )

    def _on_compressed(self, payload: ContextCompressed) -> None:
        self._line(
            Text(
                f"  ⟲ context compressed: {payload.summarized_messages} messages summarised "
                f"({payload.tokens_before:,} → {payload.tokens_after:,} tokens)",
                style="dim",
            )
        )

    def _on_guardrail(self, payload: Guardrail) -> None:
        self._flush_text()
        self._line(Text(f"⚠ {payload.message}", style="yellow"))

    def _on_error(self, payload: ErrorEvent) -> None:
        self._flush_text()
        print_error(self.notes, str(payload.code), payload.message)

    def _child_event(self, child: str, payload: Any) -> None:
        kind = self.children[child]
        if isinstance(payload, ToolCall):
            self._line(Text(f"  ↳ {payload.name}({summarize_arguments(payload.arguments, 60)})", style="dim"))
        elif isinstance(payload, OperationStatusChanged) and payload.status in TERMINAL:
            style = "dim" if payload.status == OperationStatus.DONE else "yellow"
            self._line(Text(f"  ↳ {kind} agent {payload.status}", style=style))
        elif isinstance(payload, Usage):
            self._cost += payload.cost_usd

    def _on_status(self, payload: OperationStatusChanged) -> None:
        if payload.status == OperationStatus.WAITING_FOR_HUMAN:
            self._flush_text()
            return
        if payload.status not in TERMINAL:
            return
        self._flush_text()
        self.status = payload.status
        self.done = True
        self.stop()
        if payload.status == OperationStatus.CANCELLED:
            self.notes.print(Text(f"⏹ cancelled{': ' + payload.reason if payload.reason else ''}", style="yellow"))
        elif payload.status == OperationStatus.INTERRUPTED:
            self.notes.print(Text(f"⏹ interrupted: {payload.reason or ''} (/continue resumes it)", style="yellow"))
        if self._tokens_in or self._tokens_out:
            cost = f" · ${self._cost:.4f}" if self._cost else ""
            today = f" · today ${self._day_cost:.2f}" if self._day_cost else ""
            self.notes.print(
                Text(f"  {self._tokens_in:,} tokens in · {self._tokens_out:,} out{cost}{today}", style="dim")
            )


_HANDLERS: dict[type, Callable[[TurnView, Any], None]] = {
    ModelStreamChunk: TurnView._on_chunk,
    Reasoning: TurnView._on_reasoning,
    AssistantMessage: TurnView._on_message,
    ToolCall: TurnView._on_tool_call,
    ToolResult: TurnView._on_tool_result,
    ToolInterrupted: TurnView._on_interrupted_tool,
    Usage: TurnView._on_usage,
    LogLine: TurnView._on_log,
    Todos: TurnView._on_todos,
    AgentSpawned: TurnView._on_spawned,
    ContextCompressed: TurnView._on_compressed,
    Guardrail: TurnView._on_guardrail,
    ErrorEvent: TurnView._on_error,
    OperationStatusChanged: TurnView._on_status,
    Route: TurnView._on_route,
    ModelRetry: TurnView._on_retry,
    BudgetWarning: TurnView._on_budget_warning,
}
