"""The TUI's widgets: the chat transcript, the sessions sidebar, the todos and MCP panels, the usage bar."""

from __future__ import annotations

import json
from typing import Any, assert_never

from rich.console import RenderableType
from rich.text import Text
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widget import MountError
from textual.widgets import Collapsible, ListItem, ListView, Markdown, Static
from textual.widgets.markdown import MarkdownStream

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
    SessionInfo,
    SessionUpdated,
    Todo,
    Todos,
    ToolCall,
    ToolInterrupted,
    ToolResult,
    UnknownPayload,
    Usage,
    UserMessage,
)

from .state import UsageTotals

__all__ = [
    "ChatView",
    "McpPanel",
    "SessionItem",
    "SessionList",
    "TodosPanel",
    "ToolCallLine",
    "UsageBar",
]

_MCP_STYLE = {
    "running": ("●", "green"),
    "starting": ("◐", "yellow"),
    "stopped": ("○", "dim"),
    "disabled": ("○", "dim"),
    "error": ("✘", "red"),
    "auth_required": ("⚿", "yellow"),
    "untrusted": ("?", "yellow"),
}


class ToolCallLine(Collapsible):
    """One tool call: a single line (name and arguments, then the result's size); expand for details."""

    def __init__(self, call: ToolCall) -> None:
        self.call = call
        self.result: ToolResult | None = None
        self.details = Static(self._details(), classes="tool-details")
        super().__init__(self.details, title=self._line_title(), collapsed=True, classes="tool-call")

    def _line_title(self) -> str:
        """Markup for the one line (Collapsible titles are markup)."""
        args = escape(f"({fmt.summarize_arguments(self.call.arguments)})")
        head = f"[cyan]●[/] [b]{escape(self.call.name)}[/b][dim]{args}[/dim]"
        if self.result is None:
            return head
        summary = escape(fmt.result_summary(self.result, 80))
        if self.result.is_error:
            return f"{head}[dim]  ⎿ [/dim][red]{summary}[/red]"
        return f"{head}[dim]  ⎿ {summary}[/dim]"

    def _details(self) -> Text:
        text = Text()
        text.append("arguments ", style="bold")
        text.append(json.dumps(self.call.arguments, indent=2, ensure_ascii=False)[:2000] + "\n")
        if self.result is None:
            text.append("running…", style="dim")
        else:
            text.append("result ", style="bold")
            text.append(
                fmt.result_size(self.result.content) + ("  (error)" if self.result.is_error else ""), style="dim"
            )
            preview = "\n".join(self.result.content.splitlines()[:8])
            if preview:
                text.append("\n" + fmt.clean(preview[:1000]), style="red" if self.result.is_error else "")
            if self.result.diff:
                text.append("\n")
                text.append_text(fmt.diff_text(self.result.diff, 60))
        return text

    def set_result(self, result: ToolResult) -> None:
        self.result = result
        self.title = self._line_title()
        self.details.update(self._details())
        if result.diff:
            self.collapsed = False  # a change is worth seeing without a click


class ChatView(VerticalScroll):
    """The transcript of the shown session, built from its events as they arrive (replayed or live)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._streams: dict[tuple[str, int], tuple[Markdown, MarkdownStream]] = {}
        self._answers: dict[tuple[str, int], Markdown] = {}
        self._thinking: dict[tuple[str, int], tuple[Static, list[str]]] = {}
        self._tools: dict[str, ToolCallLine] = {}
        self._children_ops: dict[str, str] = {}
        self._sources: dict[str, tuple[Sources, Static]] = {}  # an operation's sources, and the line showing them
        self._latest_answer: dict[str, Markdown] = {}  # an operation's newest answer: its sources go under it

    async def clear(self) -> None:
        await self.close_streams()
        self._sources.clear()
        self._latest_answer.clear()
        self._answers.clear()
        self._thinking.clear()
        self._tools.clear()
        self._children_ops.clear()
        await self.remove_children()

    async def close_streams(self) -> None:
        streams = list(self._streams.values())
        self._streams.clear()
        for _, stream in streams:
            await stream.stop()

    async def _add(self, widget: Any) -> None:
        follow = self.is_vertical_scroll_end or self.max_scroll_y == 0
        await self.mount(widget)
        if follow:
            self.scroll_end(animate=False)

    async def note(self, text: RenderableType, classes: str = "note") -> None:
        await self._add(Static(text, classes=classes))

    async def handle(self, event: ReceivedEvent) -> None:  # noqa: C901 (one flat case per event type is the point)
        """Add one event to the transcript (a sub-agent's as one line per tool call and one when it stops)."""
        payload = event.payload
        op = getattr(payload, "operation_id", None)
        if op is not None and op in self._children_ops:
            await self._child_event(op, payload)
            return
        match payload:
            case UserMessage():
                await self._on_user_message(payload)
            case ModelStreamChunk():
                await self._on_model_stream_chunk(payload)
            case AssistantMessage():
                await self._on_assistant_message(payload)
            case Reasoning():
                await self._on_reasoning(payload)
            case ToolCall():
                line = ToolCallLine(payload)
                self._tools[payload.tool_call_id] = line
                await self._add(line)
            case ToolResult():
                if (called := self._tools.get(payload.tool_call_id)) is not None:
                    called.set_result(payload)
            case ToolInterrupted():
                await self.note(fmt.tool_interrupted(payload))
            case ApprovalRequested():
                reason = f" — {payload.reason}" if payload.reason else ""
                await self.note(Text.assemble(("⏸ approval needed: ", "yellow"), (payload.name, "bold"), reason))
            case ApprovalResolved():
                await self._on_approval_resolved(payload)
            case Ask():
                label = "keep going?" if payload.kind == "guardrail" else "question"
                await self.note(Text.assemble((f"? {label}: ", "cyan"), payload.question))
            case AskResolved():
                await self.note(Text(f"  → {payload.answer}", style="cyan"))
            case OperationStatusChanged():
                await self._on_operation_status(payload)
            case ErrorEvent():
                await self.note(
                    Text.assemble((f"✘ {payload.code}: ", "bold red"), payload.message), classes="note error"
                )
            case Guardrail():
                await self.note(Text(f"⚠ {payload.message}", style="yellow"))
            case Route():
                await self.note(fmt.route(payload))
            case ModelRetry():
                await self.note(fmt.model_retry(payload))
            case BudgetWarning():
                await self.note(fmt.budget_warning(payload))
            case ContextCompressed():
                await self.note(fmt.context_compressed(payload))
            case LogLine():
                await self.note(Text(f"  │ {payload.text}", style="dim"))
            case AgentSpawned():
                self._children_ops[payload.child_operation_id] = payload.agent_type
                await self.note(fmt.agent_spawned(payload))
            case Citations():
                await self._on_citations(payload)
            case Usage() | Todos() | SessionUpdated():
                pass  # shown by the usage bar, the todos panel and the title (the app routes them there)
            case UnknownPayload():
                await self.note(fmt.unknown_event(payload))
            case _:
                assert_never(payload)

    # -- the conversation -------------------------------------------------------------------------------------

    async def _on_user_message(self, p: UserMessage) -> None:
        prefix = "↳ " if p.steer else "› "
        await self._add(Static(Text(prefix + p.text, style="bold"), classes="user"))

    async def _on_model_stream_chunk(self, p: ModelStreamChunk) -> None:
        key = (p.operation_id, p.step)
        entry = self._streams.get(key)
        if entry is None:
            if key in self._answers:
                return  # already complete (a replayed chunk after its message): nothing to add
            markdown = Markdown(classes="assistant")
            self._answers[key] = markdown
            await self._add_answer(p.operation_id, markdown)
            entry = (markdown, Markdown.get_stream(markdown))
            self._streams[key] = entry
        await entry[1].write(p.text)
        if self.is_vertical_scroll_end or self.max_scroll_y == 0:
            self.call_after_refresh(self.scroll_end, animate=False)

    async def _on_assistant_message(self, p: AssistantMessage) -> None:
        key = (p.operation_id, p.step)
        entry = self._streams.pop(key, None)
        if entry is not None:
            await entry[1].stop()
        markdown = self._answers.get(key)
        if markdown is None:
            if not p.text:
                return
            markdown = Markdown(classes="assistant")
            self._answers[key] = markdown
            await self._add_answer(p.operation_id, markdown)
        if markdown.source != p.text:
            # Chunks may have been dropped under back-pressure: the complete message is the truth.
            await markdown.update(p.text)

    async def _add_answer(self, operation_id: str, markdown: Markdown) -> None:
        await self._add(markdown)
        self._latest_answer[operation_id] = markdown
        if (shown := self._sources.get(operation_id)) is not None:
            self.move_child(shown[1], after=markdown)

    async def _on_citations(self, p: Citations) -> None:
        """The operation's `Sources:` line, under its newest answer (numbered across the operation, each once)."""
        shown = self._sources.get(p.operation_id)
        if shown is None:
            sources = Sources()
            sources.add(p)
            line = Static(sources_line(sources), classes="note sources")
            self._sources[p.operation_id] = (sources, line)
            answer = self._latest_answer.get(p.operation_id)
            if answer is None:
                await self._add(line)
            else:
                await self.mount(line, after=answer)
        elif shown[0].add(p):
            shown[1].update(sources_line(shown[0]))

    async def _on_reasoning(self, p: Reasoning) -> None:
        key = (p.operation_id, p.step)
        entry = self._thinking.get(key)
        if entry is None:
            body = Static("", classes="reasoning-text")
            entry = (body, [])
            self._thinking[key] = entry
            await self._add(Collapsible(body, title="✻ thinking", collapsed=True, classes="reasoning"))
        entry[1].append(p.text)
        entry[0].update(Text("".join(entry[1]), style="italic dim"))

    # -- requests ---------------------------------------------------------------------------------------------

    async def _on_approval_resolved(self, p: ApprovalResolved) -> None:
        if p.approved:
            await self.note(Text("  ✔ approved", style="green"))
        else:
            await self.note(Text(f"  ✘ rejected{': ' + p.message if p.message else ''}", style="red"))

    # -- status and notices -----------------------------------------------------------------------------------

    async def _on_operation_status(self, p: OperationStatusChanged) -> None:
        if p.parent_operation_id is not None or not p.status.has_stopped:
            return
        await self.close_streams()
        if p.status == OperationStatus.CANCELLED:
            await self.note(fmt.cancelled(p.reason))
        elif p.status == OperationStatus.INTERRUPTED:
            await self.note(Text(f"⏹ interrupted: {p.reason or ''} (“Continue” in the palette resumes it)", "yellow"))
        elif p.status == OperationStatus.ERROR:
            await self.note(Text(f"⏹ stopped: {p.reason or p.code or 'error'}", style="red"))

    async def _child_event(self, child: str, payload: ReceivedPayload) -> None:
        # A sub-agent's own transcript stays out of its parent's: one line per tool call and one when it stops.
        match payload:
            case ToolCall():
                await self.note(
                    Text(f"  ↳ {payload.name}({fmt.summarize_arguments(payload.arguments, 60)})", style="dim")
                )
            case OperationStatusChanged():
                if payload.status.has_stopped:
                    await self.note(fmt.child_status(self._children_ops[child], payload.status))
            case (
                UserMessage()
                | ModelStreamChunk()
                | Reasoning()
                | AssistantMessage()
                | ToolResult()
                | Usage()
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

    async def on_unmount(self) -> None:
        await self.close_streams()


class SessionItem(ListItem):
    def __init__(self, session: SessionInfo, current: bool) -> None:
        self.session = session
        title = session.title or "(untitled)"
        super().__init__(Static(Text(title, no_wrap=True, overflow="ellipsis")), classes="current" if current else "")


class SessionList(ListView):
    """The sessions sidebar (newest first); Enter or a click switches to one."""

    async def show(self, sessions: list[SessionInfo], current: str | None) -> None:
        try:
            await self.clear()
            await self.extend(SessionItem(s, s.id == current) for s in sessions)
        except MountError:
            if self.is_attached:
                raise
            return  # the app quit while the list was being refilled: the list is gone, nothing to show
        for index, session in enumerate(sessions):
            if session.id == current:
                self.index = index


class TodosPanel(Static):
    def show(self, todos: list[Todo]) -> None:
        if not todos:
            self.update(Text("no todos yet", style="dim"))
            return
        text = fmt.render_todos(todos)
        text.rstrip()
        self.update(text)


class McpPanel(Static):
    """MCP servers and their status, from `mcp/list` and `mcp/status` notifications."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(Text("…", style="dim"), **kwargs)
        self.servers: dict[str, dict[str, Any]] = {}
        self.available: bool | None = None

    def unavailable(self) -> None:
        self.available = False
        self.update(Text("MCP not available", style="dim"))

    def load(self, servers: list[dict[str, Any]]) -> None:
        self.available = True
        self.servers = {str(s.get("name")): s for s in servers}
        self._redraw()

    def status(self, server: dict[str, Any]) -> None:
        if self.available is False:
            return
        self.available = True
        self.servers[str(server.get("name"))] = server
        self._redraw()

    def _redraw(self) -> None:
        if not self.servers:
            self.update(Text("no MCP servers", style="dim"))
            return
        text = Text()
        for name in sorted(self.servers):
            server = self.servers[name]
            status = str(server.get("status", "?"))
            mark, style = _MCP_STYLE.get(status, ("?", "dim"))
            tools = server.get("tools") or []
            text.append(f"{mark} ", style=style)
            text.append(name, style="bold")
            text.append(f" {status}", style=style)
            if tools:
                text.append(f" · {len(tools)} tool{'s' if len(tools) != 1 else ''}", style="dim")
            text.append("\n")
            if server.get("reason") and status != "running":
                text.append(f"  {server['reason']}\n", style="dim")
        text.rstrip()
        self.update(text)


class UsageBar(Static):
    """One line: model, tokens, cost, today's cost, connection."""

    def show(
        self,
        model: str,
        usage: UsageTotals,
        connection: str,
        *,
        plan: bool = False,
        capture: dict[str, Any] | None = None,
    ) -> None:
        text = Text()
        if capture is not None and capture.get("capturing"):
            text.append(" ● REC ", style="bold white on red")  # activity capture records: always visible
            current = capture.get("current")
            if current:
                text.append(f" {fmt.clean(current.get('app') or '')}", style="red")
        elif capture is not None and capture.get("state") == "paused":
            text.append(" ‖ capture paused ", style="black on yellow")
        if plan:
            text.append(" PLAN MODE ", style="bold black on cyan")
        text.append(f" {model}", style="bold")
        text.append(f" · {usage.input_tokens:,} in · {usage.output_tokens:,} out", style="")
        if usage.cost_usd or not usage.cost_known:
            text.append(f" · {fmt.cost(usage.cost_usd, usage.cost_known)}")
        if usage.day_cost_usd:  # nothing priced spent today: no "today $0.00" beside "price unknown"
            text.append(f" · today {fmt.money(usage.day_cost_usd, 2)}")
        text.append("  ")
        style = "green" if connection == "connected" else "yellow"
        text.append(("● " if connection == "connected" else "○ ") + connection, style=style)
        self.update(text)
