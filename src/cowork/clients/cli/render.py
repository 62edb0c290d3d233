"""Rendering session events in the terminal with rich: streamed markdown, one line per tool call."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import assert_never

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.padding import Padding
from rich.panel import Panel
from rich.text import Text

from cowork.clients import format as fmt
from cowork.clients.sources import Sources, sources_line
from cowork.protocol import (
    AgentSpawned,
    ApprovalRequested,
    ApprovalResolved,
    Ask,
    AskResolved,
    AssistantMessage,
    BudgetWarning,
    Citations,
    ContextCompressed,
    ErrorEvent,
    Guardrail,
    LogLine,
    ModelRetry,
    ModelStreamChunk,
    OperationStatus,
    OperationStatusChanged,
    Reasoning,
    ReceivedEvent,
    ReceivedPayload,
    Route,
    SessionUpdated,
    Todos,
    ToolCall,
    ToolInterrupted,
    ToolResult,
    UnknownPayload,
    Usage,
    UserMessage,
)

__all__ = ["TurnView", "print_error"]


def _markdown(text: str) -> RenderableType:
    # rich's Markdown brings markdown-it and pygments (a tenth of a second): imported with the first answer shown,
    # not before the client has connected.
    from rich.markdown import Markdown

    return Markdown(text)


def print_error(console: Console, code: str, message: str) -> None:
    """A red panel on a terminal; one unwrapped `code: message` line when the output goes to a file or a pipe."""
    if not console.is_terminal:
        console.print(Text(f"{code}: {message}"), soft_wrap=True)
        return
    console.print(Panel(Text(message), title=f"[bold red]{code}[/]", border_style="red", expand=False))


class TurnView:
    """Renders a turn's events as they arrive, with a live footer for what the user is typing.

    `done` is set when the turn's operation ends (or waits on something only a later message can change).
    `notes` gets what is about the run rather than its transcript (errors, cancellation, token counts); it is the
    same console in the REPL, and stderr for `cowork run`.
    """

    def __init__(
        self,
        console: Console,
        operation_id: str | None = None,
        *,
        notes: Console | None = None,
        sources: Sources | None = None,
    ) -> None:
        """`sources`: the operation's sources so far, when following a turn that had begun (`/continue`)."""
        self.console = console
        self.notes = notes or console
        self.operation_id = operation_id
        self.done = False
        self.status: OperationStatus | None = None
        self.typed = ""
        self.children: dict[str, str] = {}
        self.sources = sources if sources is not None else Sources()
        self._text = ""
        self._live: Live | None = None
        self._thinking_step: int | None = None
        self._tokens_in = 0
        self._tokens_out = 0
        self._cost = 0.0
        self._cost_known = True
        self._day_cost: float | None = None

    # -- the live area ----------------------------------------------------------------------------------------

    def _renderable(self) -> RenderableType:
        parts: list[RenderableType] = []
        if self._text:
            parts.append(_markdown(self._text))
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
            self.console.print(_markdown(text))
        self.refresh()

    def _line(self, renderable: RenderableType) -> None:
        self.console.print(renderable)

    # -- events -----------------------------------------------------------------------------------------------

    def handle(self, event: ReceivedEvent) -> None:  # noqa: C901 (one flat case per event type is the point)
        """Show one event: this turn's in full, its sub-agents' as one line each, other operations' not at all."""
        payload = event.payload
        op = getattr(payload, "operation_id", None)
        if op is not None and self.operation_id is not None and op != self.operation_id:
            if op in self.children:
                self._child_event(op, payload)
            return
        match payload:
            case ModelStreamChunk():
                self._text += payload.text
                self.refresh()
            case Reasoning():
                self._on_reasoning(payload)
            case AssistantMessage():
                self._flush_text(payload.text)
            case ToolCall():
                self._flush_text()
                args = f"({fmt.summarize_arguments(payload.arguments)})"
                self._line(Text.assemble(("● ", "cyan"), (payload.name, "bold"), (args, "dim")))
            case ToolResult():
                if payload.rejected:
                    self._line(Text(f"  ⎿ ✗ {payload.content}", style="red"))
                else:
                    self._line(
                        Text(f"  ⎿ {fmt.result_summary(payload, 100)}", style="red" if payload.is_error else "dim")
                    )
                if payload.diff:
                    self._line(Padding(fmt.diff_text(payload.diff, 40), (0, 0, 0, 4)))
            case ToolInterrupted():
                self._line(fmt.tool_interrupted(payload))
            case Usage():
                self._on_usage(payload)
            case Route():
                self._line(fmt.route(payload))
                if payload.warning:
                    self._line(Text(f"  ⚠ {payload.warning}", style="yellow"))
            case ModelRetry():
                self._line(fmt.model_retry(payload, indent="  "))
            case BudgetWarning():
                self._line(fmt.budget_warning(payload))
            case LogLine():
                self._line(Text(f"  │ {payload.text}", style="dim"))
            case Todos():
                self._line(fmt.render_todos(payload.todos, indent="  "))
            case AgentSpawned():
                self.children[payload.child_operation_id] = payload.agent_type
                self._line(fmt.agent_spawned(payload))
            case ContextCompressed():
                self._line(fmt.context_compressed(payload, indent="  "))
            case Guardrail():
                self._flush_text()
                self._line(Text(f"⚠ {payload.message}", style="yellow"))
            case ErrorEvent():
                self._flush_text()
                print_error(self.notes, str(payload.code), payload.message)
            case OperationStatusChanged():
                self._on_status(payload)
            case Citations():
                self.sources.add(payload)  # shown under the answer, once the turn has ended
            case UserMessage() | SessionUpdated():
                pass  # the user typed it; a title or model change is not part of the answer
            case ApprovalRequested() | ApprovalResolved() | Ask() | AskResolved():
                pass  # the REPL, which owns the prompt, answers these; `cowork run` by its flags
            case UnknownPayload():
                self._line(fmt.unknown_event(payload))
            case _:
                assert_never(payload)

    def _on_reasoning(self, payload: Reasoning) -> None:
        if self._thinking_step != payload.step:
            self._thinking_step = payload.step
            self._line(Text("✻ thinking…", style="dim italic"))

    def _on_usage(self, payload: Usage) -> None:
        self._tokens_in += payload.input_tokens
        self._tokens_out += payload.output_tokens
        self._cost += payload.cost_usd
        self._cost_known = self._cost_known and payload.cost_known
        self._day_cost = payload.day_cost_usd

    def _child_event(self, child: str, payload: ReceivedPayload) -> None:
        # A sub-agent's own transcript stays out of its parent's: one line per tool call and one when it stops.
        match payload:
            case ToolCall():
                self._line(Text(f"  ↳ {payload.name}({fmt.summarize_arguments(payload.arguments, 60)})", style="dim"))
            case OperationStatusChanged():
                if payload.status.has_stopped:
                    self._line(fmt.child_status(self.children[child], payload.status))
            case Usage():
                self._cost += payload.cost_usd
            case (
                UserMessage()
                | ModelStreamChunk()
                | Reasoning()
                | AssistantMessage()
                | ToolResult()
                | LogLine()
                | ErrorEvent()
                | SessionUpdated()
                | ToolInterrupted()
                | ApprovalRequested()
                | ApprovalResolved()
                | Ask()
                | AskResolved()
                | Todos()
                | ContextCompressed()
                | Guardrail()
                | AgentSpawned()
                | Route()
                | ModelRetry()
                | BudgetWarning()
                | Citations()
                | UnknownPayload()
            ):
                pass
            case _:
                assert_never(payload)

    def _on_status(self, payload: OperationStatusChanged) -> None:
        if payload.status == OperationStatus.WAITING_FOR_HUMAN:
            self._flush_text()
            return
        if not payload.status.has_stopped:
            return
        self._flush_text()
        self.status = payload.status
        self.done = True
        self.stop()
        if self.sources:
            self._line(sources_line(self.sources))
        if payload.status == OperationStatus.CANCELLED:
            self.notes.print(fmt.cancelled(payload.reason))
        elif payload.status == OperationStatus.INTERRUPTED:
            self.notes.print(Text(f"⏹ interrupted: {payload.reason or ''} (/continue resumes it)", style="yellow"))
        if self._tokens_in or self._tokens_out:
            cost = f" · {fmt.cost(self._cost, self._cost_known)}" if self._cost or not self._cost_known else ""
            today = f" · today {fmt.money(self._day_cost, 2)}" if self._day_cost else ""
            self.notes.print(
                Text(f"  {self._tokens_in:,} tokens in · {self._tokens_out:,} out{cost}{today}", style="dim")
            )
