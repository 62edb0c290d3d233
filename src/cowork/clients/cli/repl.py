"""The interactive REPL: prompt, slash commands, streaming turns, Ctrl-C to cancel.

Over 500 lines while the slash commands live here; they move out when the clients share one slash-command
definition (issue 13). Rendering is `render.py`, shared text `cowork.clients.format`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, assert_never

from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory
from pydantic import ValidationError
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

import cowork
from cowork.clients import format as fmt
from cowork.clients.connection import RpcClient, RpcError, ServerAddress, cowork_home, ensure_server
from cowork.clients.export import import_path, parse_export, save_export
from cowork.clients.format import (
    PLAN_OFF,
    PLAN_ON,
    SafeConsole,
    clean,
    degraded_lines,
    diff_text,
    fork_number,
    render_todos,
    search_hit,
    shorten,
    summarize_arguments,
)
from cowork.clients.sources import Sources, operation_sources
from cowork.clients.trace_view import NO_TRACE_YET, trace_lines, trace_params
from cowork.protocol import (
    SLASH_COMMANDS,
    AgentSpawned,
    ApprovalRequested,
    ApprovalResolved,
    ApprovalRespondParams,
    Ask,
    AskResolved,
    AskRespondParams,
    AssistantMessage,
    BudgetWarning,
    Citations,
    ClientInfo,
    ContextCompressed,
    ErrorEvent,
    Guardrail,
    HealthResult,
    InitializeParams,
    InitializeResult,
    LogLine,
    ModelListParams,
    ModelListResult,
    ModelRetry,
    ModelSetParams,
    ModelStreamChunk,
    OperationRef,
    OperationStatus,
    OperationStatusChanged,
    PendingApproval,
    Reasoning,
    ReceivedEvent,
    Route,
    SessionCompactParams,
    SessionCreateParams,
    SessionDiffResult,
    SessionExportParams,
    SessionExportResult,
    SessionForkParams,
    SessionForkResult,
    SessionGetParams,
    SessionGetResult,
    SessionImportParams,
    SessionImportResult,
    SessionInfo,
    SessionListParams,
    SessionListResult,
    SessionRef,
    SessionRestoreResult,
    SessionRewindParams,
    SessionSearchParams,
    SessionSearchResult,
    SessionUndoParams,
    SessionUpdated,
    SessionUpdateParams,
    SubscribeParams,
    Todos,
    ToolCall,
    ToolInterrupted,
    ToolListResult,
    ToolResult,
    ToolSetPolicyParams,
    TraceGetResult,
    TurnCancelParams,
    TurnStartParams,
    TurnStartResult,
    TurnSteerParams,
    UnknownPayload,
    Usage,
    UserMessage,
    parse_event,
    web_url,
)

from .capture_cmds import capture_toolbar, run_capture_command, run_context_command
from .completion import SlashCompleter
from .documents import show_documents
from .event_log import session_payloads
from .keys import KeyReader, LineEditor, prompt_bindings
from .mcp_cmds import MCP_HELP, run_mcp_command
from .memory_cmds import run_memory_command, run_pin_command
from .models_cmds import run_model_command
from .notification_cmds import ReplAutomations, run_automation_command, run_notifications_command
from .render import TurnView, print_error
from .source_cmds import run_source_command

__all__ = ["Repl", "ReplOptions", "run_repl"]


def _commands() -> dict[str, str]:
    commands: dict[str, str] = {}
    for c in SLASH_COMMANDS:
        if "repl" in c.clients:
            commands[f"/{c.name}"] = c.summary if c.usage == f"/{c.name}" else f"{c.usage} — {c.summary}"
    commands["/mcp"] = MCP_HELP
    return commands


COMMANDS = _commands()
"""The REPL's slash commands: the one table every client shares (`cowork.protocol.SLASH_COMMANDS`)."""

_COMMAND_WORD = re.compile(r"/[A-Za-z][\w-]*")


def is_command(line: str) -> bool:
    """A slash command is `/word` at the start; `/usr/bin is slow` is a message about a path."""
    word = line.strip().split(" ", 1)[0].split("\n", 1)[0]
    return _COMMAND_WORD.fullmatch(word) is not None


@dataclass(frozen=True)
class ReplOptions:
    workspace: Path
    address: ServerAddress | None = None
    resume: str | None = None
    idle_exit_seconds: float = 900
    yolo: bool = False


@dataclass
class Repl:
    options: ReplOptions
    console: Console = field(default_factory=SafeConsole)
    client: RpcClient | None = None
    session: SessionInfo | None = None
    events: asyncio.Queue[ReceivedEvent] = field(default_factory=asyncio.Queue)
    mcp_names: list[str] = field(default_factory=list)
    tool_names: list[str] = field(default_factory=list)
    session_ids: list[str] = field(default_factory=list)
    cancelled_by_user: bool = False
    """The last turn was cancelled with Ctrl-C: one more Ctrl-C at the prompt exits."""
    _last_interrupted: str | None = None
    address: ServerAddress | None = None
    prefill: str | None = None
    """Text to put at the next prompt, ready to send or change (`/fork N` puts the message it forked before)."""
    capture: dict[str, Any] | None = None
    """Activity capture's status (`capture/status`), for the line under the prompt while it records."""
    prompt: PromptSession[str] | None = None
    answered: set[tuple[str, str]] = field(default_factory=set)
    """Requests this REPL has answered: one asked both in `session/get`'s pending list and by its event (it came
    while the turn was starting) is asked once."""
    automations: ReplAutomations = field(init=False)
    """Notifications and automation runs: the lines they print above the prompt, `/automation`'s follow-up."""

    def __post_init__(self) -> None:
        self.automations = ReplAutomations(self)

    async def load_capture(self, init: InitializeResult) -> None:
        """Capture's status now (then each `capture/status` notification keeps it): the indicator under the prompt,
        and a line under the banner while it records. Quietly nothing from an older server."""
        if "capture/status" not in init.capabilities.methods:
            return
        try:
            self.capture = await self.rpc.call("capture/status", {})
        except RpcError:
            return
        line = capture_toolbar(self.capture)
        if line is not None:
            self.console.print(Text(line.strip(), style="red" if self.capture.get("capturing") else "yellow"))

    def prompt_message(self) -> FormattedText:
        """`› `, led by a red ● while activity capture records and a yellow ‖ while it is paused: an indicator every
        terminal shows (the line under the prompt needs one that reports the cursor position)."""
        status = self.capture or {}
        if status.get("capturing"):
            return FormattedText([("ansired bold", "● "), ("", "› ")])
        if status.get("state") == "paused":
            return FormattedText([("ansiyellow", "‖ "), ("", "› ")])
        return FormattedText([("", "› ")])

    def _refresh_toolbar(self) -> None:
        """Show the indicator line under the prompt only while there is something to show (no empty bar)."""
        if self.prompt is None:
            return
        line = capture_toolbar(self.capture)
        self.prompt.bottom_toolbar = None if line is None else (lambda: capture_toolbar(self.capture) or "")
        self.prompt.app.invalidate()

    async def connect(self) -> InitializeResult:
        address = self.options.address
        if address is None:
            address = await asyncio.to_thread(
                ensure_server, workspace=self.options.workspace, idle_exit_seconds=self.options.idle_exit_seconds
            )
        self.client = await RpcClient.connect(address)
        self.address = address
        self.client.on_notification = self._on_notification
        return await self.client.request(
            "initialize", InitializeParams(client_info=ClientInfo(name="cowork-cli", version=cowork.__version__))
        )

    async def _reconnect(self, session_id: str, after_seq: int, within: float = 15.0) -> bool:
        """The connection dropped mid-turn: connect again to the same address (behind a shared one, another replica
        answers and goes on with the turn) and replay the session's events after `after_seq`. False after `within`
        seconds without a server."""
        if self.address is None:
            return False
        self.console.print(Text("connection lost; reconnecting…", style="yellow"))
        deadline = asyncio.get_running_loop().time() + within
        pause = 0.2
        while asyncio.get_running_loop().time() < deadline:
            try:
                client = await RpcClient.connect(self.address)
            except Exception:  # refused, a failed handshake, a timeout: nobody answers there yet
                await asyncio.sleep(pause)
                pause = min(pause * 2, 2.0)
                continue
            old, self.client = self.client, client
            if old is not None:
                await old.close()
            client.on_notification = self._on_notification
            try:
                await client.request(
                    "initialize",
                    InitializeParams(client_info=ClientInfo(name="cowork-cli", version=cowork.__version__)),
                )
                await client.request("session/subscribe", SubscribeParams(session_id=session_id, after_seq=after_seq))
            except Exception:  # the connection dropped again, or the server refused: try once more
                await asyncio.sleep(pause)
                continue
            self.console.print(Text("reconnected", style="green"))
            return True
        return False

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if self.automations.on_notification(method, params):
            return
        if method == "capture/status":
            self.capture = params
            self._refresh_toolbar()
            return
        if method == "session/event":
            event = parse_event(params)
            payload = event.payload
            if isinstance(payload, OperationStatusChanged) and payload.parent_operation_id is None:
                if payload.status == OperationStatus.INTERRUPTED:
                    self._last_interrupted = payload.operation_id
            self.events.put_nowait(event)

    @property
    def rpc(self) -> RpcClient:
        assert self.client is not None
        return self.client

    async def new_session(self) -> None:
        """Start afresh in the current folder: the session itself is created with the first message (or the first
        command that changes it), so opening and closing the REPL leaves no empty session behind."""
        self.session = None

    async def current(self) -> SessionInfo:
        """The session, created now if this is its first use."""
        if self.session is None:
            self.session = await self.rpc.request(
                "session/create", SessionCreateParams(workspace=str(self.options.workspace), yolo=self.options.yolo)
            )
        return self.session

    async def resume(self, session_id: str) -> None:
        result: SessionGetResult = await self.rpc.request("session/get", SessionGetParams(session_id=session_id))
        self.session = result.session
        self.console.print(Text(f"Resumed “{result.session.title}” ({result.session.id})", style="bold"))
        for message in result.messages[-20:]:
            who = "you" if message.role == "user" else "cowork"
            style = "bold green" if message.role == "user" else "bold cyan"
            self.console.print(Text.assemble((f"{who}: ", style), message.text[:500]))
        if result.todos:
            self.console.print(render_todos(result.todos, indent="  "))
        waiting = len(result.pending.approvals) + len(result.pending.questions)
        if waiting or result.session.active_operation_id:
            note = f"{waiting} request(s) waiting for you" if waiting else "a turn is in progress"
            self.console.print(Text(f"{note}: /continue to pick it up", style="yellow"))

    def banner(self, init: InitializeResult) -> None:
        cfg = init.config
        model = f"{cfg.provider}:{cfg.model}" if cfg.provider else "no provider connected"
        self.console.print(Text.assemble(("Cowork ", "bold magenta"), (init.server_info.version, "dim")))
        self.console.print(
            Text(f"{self.options.workspace} · {model} · /help for commands · Ctrl-D to exit", style="dim")
        )
        if self.address is not None:
            # The one place the token is shown: the link logs the browser in (then it lives in a cookie).
            self.console.print(Text(f"Web UI: {web_url(self.address.url, self.address.token)}", style="dim"))
        if init.capabilities.sandbox_note:
            self.console.print(Text(f"⚠ {init.capabilities.sandbox_note}", style="bold yellow"))
        for warning in init.config.warnings:
            self.console.print(Text(f"⚠ {warning}", style="bold yellow"))
        if self.session.yolo if self.session is not None else self.options.yolo:
            self.yolo_banner()

    async def show_health(self, init: InitializeResult) -> None:
        """A line per degraded subsystem under the banner; quietly nothing when all is well or the server (an older
        one) cannot say."""
        if "health" not in init.capabilities.methods:
            return
        try:
            health: HealthResult = await self.rpc.request("health")
        except (RpcError, ValidationError):
            return
        for line in degraded_lines(health, init):
            self.console.print(line)

    # -- turns ------------------------------------------------------------------------------------------------

    async def run_turn(self, text: str) -> None:
        while not self.events.empty():  # from before this turn (a restore's log line, another session's): said already
            self.events.get_nowait()
        try:
            await self.current()
            assert self.session is not None
            started: TurnStartResult = await self.rpc.request(
                "turn/start",
                TurnStartParams(session_id=self.session.id, text=text, client_message_id=uuid.uuid4().hex),
            )
        except RpcError as exc:
            print_error(self.console, exc.code, exc.message)
            return
        await self.follow(started.operation_id)

    async def follow(self, operation_id: str, sources: Sources | None = None) -> None:
        """Render the operation until it ends; answer its approvals and questions; send typed text as steering."""
        assert self.session is not None
        session_id = self.session.id
        view = TurnView(self.console, operation_id, sources=sources)
        inputs: asyncio.Queue[str | None] = asyncio.Queue()
        interrupts = 0

        def on_interrupt() -> None:
            nonlocal interrupts
            interrupts += 1
            inputs.put_nowait(None)

        editor = LineEditor(on_submit=inputs.put_nowait, on_interrupt=on_interrupt)

        def show_typing() -> None:
            view.typed = editor.buffer
            view.refresh()

        editor.on_change = show_typing
        keys = KeyReader(editor)
        await self._answer_pending(session_id, view, keys)
        last_seq = 0
        view.start()
        keys.start()
        try:
            while not view.done:
                event_wait = asyncio.ensure_future(self.events.get())
                input_wait = asyncio.ensure_future(inputs.get())
                closed = asyncio.ensure_future(self.rpc.closed.wait())
                finished, _ = await asyncio.wait({event_wait, input_wait, closed}, return_when=asyncio.FIRST_COMPLETED)
                for waiter in (event_wait, input_wait, closed):
                    if waiter not in finished:
                        waiter.cancel()
                if closed in finished:
                    if await self._reconnect(session_id, last_seq):
                        continue  # another replica (or the same server back) replays what was missed
                    view.stop()
                    print_error(self.console, "disconnected", "The connection to the Cowork server was lost.")
                    return
                if input_wait in finished:
                    typed = input_wait.result()
                    if typed is None:
                        if interrupts > 1:
                            raise KeyboardInterrupt
                        view.console.print(Text("cancelling… (Ctrl-C again to quit)", style="yellow"))
                        await self._cancel(operation_id)
                    else:
                        await self._steer(typed, view)
                if event_wait in finished:
                    event = event_wait.result()
                    if event.session_id != session_id:  # the one this REPL was in before (`/fork`, `/rewind`)
                        continue
                    if event.seq <= last_seq:
                        continue  # told already, before a reconnect
                    last_seq = event.seq
                    view.handle(event)
                    if isinstance(event.payload, ToolResult) and event.payload.files:
                        await show_documents(self.rpc, session_id, event.payload.files, view.console)
                    await self._maybe_answer(event, view, keys)
        finally:
            self.cancelled_by_user = interrupts > 0
            keys.stop()
            view.stop()

    async def _steer(self, text: str, view: TurnView) -> None:
        assert self.session is not None
        try:
            await self.rpc.call(
                "turn/steer",
                TurnSteerParams(session_id=self.session.id, text=text, client_message_id=uuid.uuid4().hex),
            )
            view.console.print(Text(f"↳ added: {text}", style="cyan"))
        except RpcError as exc:
            print_error(view.console, exc.code, exc.message)

    async def _answer_pending(self, session_id: str, view: TurnView, keys: KeyReader) -> None:
        """Questions and approvals asked before this client was watching (another client, a restart)."""
        got: SessionGetResult = await self.rpc.request("session/get", SessionGetParams(session_id=session_id))
        for approval in got.pending.approvals:
            await self._approve(approval, view, keys)
        for question in got.pending.questions:
            await self._answer(
                question.request_id, question.question, question.options, question.kind, view, keys,
                operation_id=question.operation_id,
            )  # fmt: skip

    async def _maybe_answer(self, event: ReceivedEvent, view: TurnView, keys: KeyReader) -> None:
        payload = event.payload
        match payload:
            case ApprovalRequested():
                await self._approve(payload, view, keys)
            case Ask():
                await self._answer(
                    payload.request_id, payload.question, payload.options, payload.kind, view, keys,
                    operation_id=payload.operation_id,
                )  # fmt: skip
            case (
                UserMessage()
                | OperationStatusChanged()
                | ModelStreamChunk()
                | Reasoning()
                | AssistantMessage()
                | ToolCall()
                | ToolResult()
                | Usage()
                | LogLine()
                | ErrorEvent()
                | SessionUpdated()
                | ToolInterrupted()
                | ApprovalResolved()
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
                pass  # nothing to answer; the view shows them
            case _:
                assert_never(payload)

    async def _approve(self, request: ApprovalRequested | PendingApproval, view: TurnView, keys: KeyReader) -> None:
        """Show the call (with the diff it would make) and ask: yes, no (with a reason), or allow for the session.

        A dangerous call is red and only an explicit `y` approves it: Enter alone rejects.
        """
        key = (request.operation_id, request.request_id)
        if key in self.answered:
            return
        dangerous, allow = request.dangerous, request.session_allow
        arguments = request.arguments
        if request.preview:  # the diff says it better than the text arguments
            arguments = {k: v for k, v in arguments.items() if k not in ("oldString", "newString", "content")}
        body = Text.assemble((request.name, "bold"), "(", (summarize_arguments(arguments, 200), ""), ")")
        if request.preview:
            body.append("\n")
            body.append_text(diff_text(request.preview))
        if request.reason:
            body.append("\n" + clean(request.reason), style="bold red" if dangerous else "dim")
        choices = "[y]es / [n]o (n, reason)" + (f" / [a]llow for this session: {allow}" if allow else "")
        prompt = f"Allow? {choices}{' — Enter rejects' if dangerous else ''} › "
        with keys.paused(), view.paused():
            self.console.print(
                Panel(
                    body,
                    title="[bold red]dangerous — approve?[/]" if dangerous else "[bold yellow]approve?[/]",
                    border_style="red" if dangerous else "yellow",
                    expand=False,
                )
            )
            answer = (await self.ask_line(prompt)).strip()
        word = answer.split(",", 1)[0].strip().lower()
        scope: Literal["once", "session"] = "session" if allow and word in ("a", "allow") else "once"
        approved = word in ("y", "yes") or scope == "session" or (word == "" and not dangerous)
        message = answer.split(",", 1)[1].strip() or None if not approved and "," in answer else None
        if scope == "session":
            self.console.print(Text(f"✓ allowed for this session: {allow}", style="green"))
        try:
            await self.rpc.call(
                "approval/respond",
                ApprovalRespondParams(request_id=request.request_id, approved=approved, message=message, scope=scope),
            )
            self.answered.add(key)
        except RpcError as exc:
            if exc.code != "already_resolved":  # another client answered first; nothing to say
                print_error(self.console, exc.code, exc.message)
            else:
                self.answered.add(key)

    async def _answer(
        self,
        request_id: str,
        question: str,
        options: list[str],
        kind: str,
        view: TurnView,
        keys: KeyReader,
        *,
        operation_id: str = "",
    ) -> None:
        key = (operation_id, request_id)
        if key in self.answered:
            return
        with keys.paused(), view.paused():
            style = "yellow" if kind == "guardrail" else "cyan"
            body = Text(question + "\n")
            for number, option in enumerate(options, 1):
                body.append(f"  {number}. {option}\n", style="dim")
            self.console.print(
                Panel(
                    body,
                    title=f"[bold {style}]{'keep going?' if kind == 'guardrail' else 'question'}[/]",
                    border_style=style,
                    expand=False,
                )
            )
            answer = (await self.ask_line("Answer › ")).strip()
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            answer = options[int(answer) - 1]
        try:
            await self.rpc.call("ask/respond", AskRespondParams(request_id=request_id, answer=answer))
            self.answered.add(key)
        except RpcError as exc:
            if exc.code != "already_resolved":
                print_error(self.console, exc.code, exc.message)
            else:
                self.answered.add(key)

    async def ask_line(self, prompt: str) -> str:
        if not sys.stdin.isatty():
            return await asyncio.to_thread(input, prompt)
        session: PromptSession[str] = PromptSession()
        try:
            return await session.prompt_async(prompt)
        except (KeyboardInterrupt, EOFError):
            return "n"

    async def _cancel(self, operation_id: str) -> None:
        assert self.session is not None
        try:
            await self.rpc.call("turn/cancel", TurnCancelParams(session_id=self.session.id, operation_id=operation_id))
        except RpcError as exc:
            print_error(self.console, exc.code, exc.message)

    async def resume_last(self) -> None:
        """`/continue`: resume the session's interrupted (or paused) turn."""
        if self.session is None:
            self.console.print(Text("Nothing to continue in this session.", style="dim"))
            return
        session = await self.rpc.request("session/get", SessionGetParams(session_id=self.session.id))
        operation_id = session.session.active_operation_id or self._last_interrupted
        if operation_id is None:
            self.console.print(Text("Nothing to continue in this session.", style="dim"))
            return
        try:
            await self.rpc.call("operation/resume", OperationRef(operation_id=operation_id))
        except RpcError as exc:
            # Waiting for an answer is not resumed but answered: following the turn asks its questions again.
            if exc.code != "not_resumable" or not exc.data.get("details", {}).get("requestIds"):
                print_error(self.console, exc.code, exc.message)
                return
        self._last_interrupted = None
        # Its sources so far keep their numbers: the line under the answer counts on from them.
        sources = operation_sources(await session_payloads(self.rpc, self.session.id), operation_id)
        await self.follow(operation_id, sources)

    # -- commands ---------------------------------------------------------------------------------------------

    async def command(self, line: str) -> bool:
        """Run a slash command; returns False when the REPL should exit."""
        name, _, arg = line.strip().partition(" ")
        arg = arg.strip()
        if name in ("/quit", "/exit"):
            return False
        handlers: dict[str, Callable[[str], Awaitable[None]]] = {
            "/help": self._help,
            "/new": self._new,
            "/clear": self._new,
            "/sessions": self._list_sessions,
            "/diff": self._diff,
            "/trace": self._trace,
            "/compact": self._compact,
            "/export": self._export,
            "/import": self._import,
            "/delete": self._delete,
            "/fork": self._fork,
            "/undo": self._undo,
            "/rewind": self._rewind,
            "/title": self._title,
            "/plan": self._plan,
            "/search": self._search,
            "/resume": self._resume_command,
            "/model": self._model,
            "/continue": lambda _arg: self.resume_last(),
            "/tools": self._tools,
            "/cwd": self._cwd,
            "/mcp": lambda a: run_mcp_command(self, a),
            "/memory": lambda a: run_memory_command(self, a),
            "/capture": lambda a: run_capture_command(self, a),
            "/context": lambda a: run_context_command(self, a),
            "/source": lambda a: run_source_command(self, a),
            "/pin": lambda a: run_pin_command(self, a, pin=True),
            "/unpin": lambda a: run_pin_command(self, a, pin=False),
            "/automations": lambda a: run_automation_command(self, f"list {a}"),
            "/automation": lambda a: run_automation_command(self, a),
            "/notifications": lambda a: run_notifications_command(self, a),
            "/network": lambda a: self._switch("network", a),
            "/yolo": lambda a: self._switch("yolo", a),
        }
        try:
            handler = handlers.get(name)
            if handler is not None:
                await handler(arg)
            elif not await run_model_command(self, name, arg):
                self.console.print(
                    Text(f"Unknown command {name} — /help lists them. Nothing was sent.", style="yellow")
                )
        except RpcError as exc:
            print_error(self.console, exc.code, exc.message)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            print_error(self.console, "invalid_params", f"{problems}. /help shows how to use {name}.")
        return True

    async def _help(self, _arg: str) -> None:
        table = Table(show_header=False, box=None)
        for command, help_text in COMMANDS.items():
            table.add_row(Text(command, style="bold"), Text(help_text))  # usages hold [brackets]: not markup
        self.console.print(table)

    async def _new(self, _arg: str) -> None:
        """`/new` and `/clear`: a fresh conversation in the same folder (the old one stays in /sessions)."""
        if self.session is not None:
            self.options = dataclasses.replace(self.options, workspace=Path(self.session.workspace))
        await self.new_session()
        self.console.print(
            Text(f"New session in {self.options.workspace} (saved with your first message)", style="dim")
        )

    async def _resume_command(self, arg: str) -> None:
        if not arg:
            self.console.print("Usage: /resume ID (see /sessions)")
        else:
            await self.resume(arg)

    async def _tools(self, arg: str) -> None:
        if arg:
            name, _, policy = arg.partition(" ")
            if policy.strip() not in ("always", "never", "inherit"):
                self.console.print("Usage: /tools NAME always|never|inherit")
                return
            params = ToolSetPolicyParams.model_validate({"name": name, "policy": policy.strip()})
            info = await self.rpc.request("tool/setPolicy", params)
            self.console.print(Text(f"{info.name}: {info.policy}", style="bold"))
            return
        result: ToolListResult = await self.rpc.request("tool/list")
        self.tool_names = [tool.name for tool in result.tools]
        table = Table("tool", "side effects", "asks", "what it does")
        for tool in result.tools:
            asks = {"always": "always", "never": "never"}.get(tool.policy, "when risky" if tool.side_effects else "no")
            table.add_row(tool.name, "yes" if tool.side_effects else "no", asks, shorten(clean(tool.summary), 70))
        self.console.print(table)

    async def _cwd(self, arg: str) -> None:
        """The workspace is fixed when a session is created, so a new folder means a new session there."""
        if not arg and self.session is None:
            self.console.print(Text(f"{self.options.workspace} (a new session)", style="bold"))
            return
        await self.current()
        assert self.session is not None
        if not arg:
            self.console.print(Text(f"{self.session.workspace} (session {self.session.id})", style="bold"))
            return
        session = await self.rpc.request(
            "session/create",
            SessionCreateParams(workspace=_folder(self.session.workspace, arg), yolo=self.options.yolo),
        )
        previous, self.session = self.session, session
        self.options = dataclasses.replace(self.options, workspace=Path(session.workspace))
        self.console.print(
            Text(f"New session {session.id} in {session.workspace} (/resume {previous.id} goes back)", style="bold")
        )

    def known_names(self, kind: str) -> Iterable[str]:
        """What tab completion offers after a command: tools, MCP servers, sessions, automations, runs and
        notifications seen so far."""
        known = {
            "tools": self.tool_names,
            "mcp": self.mcp_names,
            "sessions": self.session_ids,
            "automations": self.automations.names,
            "runs": self.automations.run_ids[::-1],
            "notifications": self.automations.notification_ids[::-1],
        }
        return known.get(kind, ())

    async def load_names(self) -> None:
        """Tool, MCP server and automation names for completion; quietly nothing when the server cannot say."""
        try:
            tools: ToolListResult = await self.rpc.request("tool/list")
            self.tool_names = [tool.name for tool in tools.tools]
            servers = await self.rpc.call("mcp/list", {})
            self.mcp_names = [str(s.get("name")) for s in servers.get("servers", [])]
        except (RpcError, ValidationError, AttributeError):
            pass
        try:
            await self.automations.load_names()
        except (RpcError, ValidationError):  # an older server: no automations
            pass

    async def _switch(self, name: str, arg: str) -> None:
        await self.current()
        assert self.session is not None
        if arg not in ("on", "off"):
            current = getattr(self.session, name)
            self.console.print(
                Text(f"{name} is {'on' if current else 'off'}; /{name} on|off to change it", style="dim")
            )
            return
        params = SessionUpdateParams(session_id=self.session.id, **{name: arg == "on"})
        self.session = await self.rpc.request("session/update", params)
        if name == "yolo" and self.session.yolo:
            self.yolo_banner()
        else:
            self.console.print(Text(f"{name} {'on' if getattr(self.session, name) else 'off'}", style="bold"))

    def yolo_banner(self) -> None:
        self.console.print(
            Panel(
                Text(
                    "YOLO: approvals and the sandbox are OFF for this session. Commands run unconfined.",
                    style="bold red",
                ),
                border_style="red",
                expand=False,
            )
        )

    async def _diff(self, _arg: str) -> None:
        """What this session's edits and writes changed, file by file."""
        if self.session is None:
            self.console.print(Text("No changes by this session yet.", style="dim"))
            return
        result: SessionDiffResult = await self.rpc.request("session/diff", SessionRef(session_id=self.session.id))
        if not result.files:
            self.console.print(Text("No changes by this session to the folder's files.", style="dim"))
            return
        for change in result.files:
            self.console.print(
                Text.assemble(
                    (f"{change.status} ", "bold"),
                    (clean(change.path), "bold cyan"),
                    (f"  +{change.additions} -{change.deletions}", "dim"),
                )
            )
            self.console.print(diff_text(change.diff, 200))

    async def _trace(self, arg: str) -> None:
        """`/trace [ID]`: what the session's last turn did (or trace or operation ID's), span by span."""
        params = trace_params(arg, self.session.id if self.session is not None else None)
        if params is None:
            self.console.print(Text(NO_TRACE_YET, style="dim"))
            return
        try:
            trace: TraceGetResult = await self.rpc.request("trace/get", params)
        except RpcError as exc:
            if exc.code != "trace_not_found":
                raise
            self.console.print(Text(exc.message, style="dim"))
            return
        for line in trace_lines(trace, self.console.width):
            self.console.print(line)

    async def _compact(self, arg: str) -> None:
        """`/compact [what to keep]`: summarise the conversation so far, shown like a turn (Ctrl-C cancels it)."""
        if self.session is None:
            self.console.print(Text("Nothing to compact yet: this session has no messages.", style="dim"))
            return
        params = SessionCompactParams(session_id=self.session.id, instructions=arg or None)
        started: TurnStartResult = await self.rpc.request("session/compact", params)
        self.console.print(Text("compacting the conversation…", style="dim"))
        await self.follow(started.operation_id)

    async def _export(self, arg: str) -> None:
        """`/export [md|json] [FILE]`: the session saved in this folder (or at FILE), never over a file."""
        if self.session is None:
            self.console.print(Text("Nothing to export yet: this session has no messages.", style="dim"))
            return
        fmt, path = parse_export(arg)
        params = SessionExportParams(session_id=self.session.id, format=fmt)
        result: SessionExportResult = await self.rpc.request("session/export", params)
        try:
            saved = save_export(result, path, Path.cwd())
        except FileExistsError as exc:
            print_error(self.console, "file_exists", f"{exc.filename} exists already; name another file: /export FILE")
            return
        except OSError as exc:
            print_error(self.console, "write_failed", f"Could not write {exc.filename}: {exc.strerror}.")
            return
        self.console.print(Text(f"Saved {result.events:,} events as {fmt} to {saved}", style="dim"))

    async def _import(self, arg: str) -> None:
        """`/import FILE`: a new session from a JSON export, and go on in it."""
        try:
            path = import_path(arg, Path.cwd())
        except ValueError as exc:
            self.console.print(Text(str(exc), style="yellow"))
            return
        result: SessionImportResult = await self.rpc.request(
            "session/import", SessionImportParams(path=path, workspace=str(self.options.workspace))
        )
        self.session = result.session
        self.console.print(
            Text(
                f"Imported “{clean(result.session.title)}” ({result.session.id}): {result.messages} of your messages, "
                f"{result.events:,} events. Go on here; its settings are this machine's defaults.",
                style="bold",
            )
        )

    async def _plan(self, arg: str) -> None:
        """`/plan on|off`: plan mode (only tools that change nothing run); `off` approves the plan."""
        arg = arg.strip().lower()
        if arg not in ("on", "off"):
            on = self.session is not None and self.session.plan_mode
            self.console.print(Text(f"{PLAN_ON if on else PLAN_OFF} (/plan on|off)", style="dim"))
            return
        session = await self.current()
        params = SessionUpdateParams(session_id=session.id, plan_mode=arg == "on")
        self.session = await self.rpc.request("session/update", params)
        self.console.print(Text(PLAN_ON if self.session.plan_mode else PLAN_OFF, style="bold cyan"))

    async def _title(self, arg: str) -> None:
        """`/title`: the session's title; `/title NEW` renames it (a new session is created for it if need be)."""
        title = " ".join(arg.split())
        if not title:
            shown = clean(self.session.title) if self.session is not None else "New session (not saved yet)"
            self.console.print(Text(f"{shown} — /title NEW TITLE renames it", style="dim"))
            return
        session = await self.current()
        self.session = await self.rpc.request("session/update", SessionUpdateParams(session_id=session.id, title=title))
        self.console.print(Text(f"Renamed to “{clean(self.session.title)}”", style="dim"))

    async def _delete(self, arg: str) -> None:
        """`/delete [ID]`: this session (or ID) for good, after a yes; this one then gives way to a new one."""
        session_id = arg.strip() or (self.session.id if self.session is not None else None)
        if session_id is None:
            self.console.print(Text("Nothing to delete: this session has no messages yet.", style="dim"))
            return
        got: SessionGetResult = await self.rpc.request("session/get", SessionGetParams(session_id=session_id))
        title, count = clean(got.session.title), len(got.messages)
        self.console.print(
            Text(
                f"Delete “{title}” ({count} messages) for good? Its messages, tool calls and the outputs kept for "
                "it go; this cannot be undone.",
                style="bold red",
            )
        )
        if (await self.ask_line("Delete it? [y/N] › ")).strip().lower() not in ("y", "yes"):
            self.console.print(Text("Nothing was deleted.", style="dim"))
            return
        await self.rpc.request("session/delete", SessionRef(session_id=session_id))
        self.console.print(Text(f"Deleted “{title}”.", style="dim"))
        if self.session is not None and self.session.id == session_id:
            await self.new_session()

    async def _fork(self, arg: str) -> None:
        """`/fork [N]`: go on in a new session holding this one's conversation (before your message N, which is then
        put at the prompt to send again or change); this one stays as it is."""
        if self.session is None:
            self.console.print(Text("Nothing to fork: this session has no messages yet.", style="dim"))
            return
        try:
            number = fork_number(arg)
        except ValueError as exc:
            self.console.print(Text(str(exc), style="yellow"))
            return
        source = self.session
        result: SessionForkResult = await self.rpc.request(
            "session/fork", SessionForkParams(session_id=source.id, before_message=number)
        )
        self._go_on_in(result, source, number)

    def _go_on_in(self, result: SessionForkResult, source: SessionInfo, number: int | None) -> None:
        """Switch to a fork of `source` (`/fork`, `/rewind`), the message it was cut before put at the prompt."""
        self.session = result.session
        self.console.print(
            Text(
                f"Now in “{clean(result.session.title)}” ({result.session.id}), holding {result.messages} of your "
                f"messages. The original stays: /resume {source.id}",
                style="bold",
            )
        )
        if result.message is not None:
            self.prefill = result.message
            self.console.print(
                Text(f"Your message {number} is at the prompt: send it again, or change it.", style="dim")
            )

    async def _undo(self, _arg: str) -> None:
        """`/undo`: the agent's last change to the folder's files, taken back after a yes (the diff shown first)."""
        if self.session is None:
            self.console.print(Text("Nothing to undo: this session has no messages yet.", style="dim"))
            return
        params = SessionUndoParams(session_id=self.session.id)
        try:
            preview: SessionRestoreResult = await self.rpc.request("session/undo", params)
        except RpcError as exc:
            if exc.code != "nothing_to_undo":
                raise
            self.console.print(Text(exc.message, style="dim"))
            return
        self.console.print(Text(f"{fmt.undo_heading(preview)}. Undoing it changes:", style="bold"))
        self._show_restore(preview, "undoing")
        if (await self.ask_line("Undo this change? [y/N] › ")).strip().lower() not in ("y", "yes"):
            self.console.print(Text("Nothing was changed.", style="dim"))
            return
        # Forced only over the files the user was just warned about (a file changed since the preview refuses it).
        params = params.model_copy(update={"apply": True, "overwrite": preview.conflicts})
        done: SessionRestoreResult = await self.rpc.request("session/undo", params)
        self.console.print(fmt.restored(done))

    async def _rewind(self, arg: str) -> None:
        """`/rewind N`: back to before your message N: the files (the diff shown first), the conversation (a new
        session, like `/fork N`; this one stays), or both."""
        if self.session is None:
            self.console.print(Text("Nothing to rewind: this session has no messages yet.", style="dim"))
            return
        try:
            number = fmt.rewind_number(arg)
        except ValueError as exc:
            self.console.print(fmt.rewind_help(await self._turn_messages(), str(exc)))
            return
        source = self.session
        params = SessionRewindParams(session_id=source.id, before_message=number, restore="files")
        try:
            preview: SessionRestoreResult = await self.rpc.request("session/rewind", params)
        except RpcError as exc:
            if exc.code != "invalid_params":
                raise
            self.console.print(fmt.rewind_help(await self._turn_messages(), exc.message))
            return
        messages = await self._turn_messages()
        said = f" (“{shorten(messages[number - 1], 60)}”)" if number <= len(messages) else ""
        self.console.print(
            Text(f"Going back to before your message {number}{said}. Restoring the files changes:", "bold")
        )
        self._show_restore(preview, "restoring the files", empty="No file changes since then.")
        choice = fmt.rewind_choice(await self.ask_line("Restore [f]iles, [c]onversation, [b]oth, or Enter to cancel: "))
        if choice is None:
            self.console.print(Text("Nothing was changed.", style="dim"))
            return
        files = choice != "conversation"
        params = params.model_copy(
            update={"apply": True, "restore": choice, "overwrite": preview.conflicts if files else []}
        )
        done: SessionRestoreResult = await self.rpc.request("session/rewind", params)
        if files:
            self.console.print(fmt.restored(done))
        if done.fork is not None:
            self._go_on_in(done.fork, source, number)

    def _show_restore(self, preview: SessionRestoreResult, doing: str, empty: str = "No file changes.") -> None:
        self.console.print(fmt.restore_diff(preview, empty=empty))
        warning = fmt.conflict_warning(preview, doing)
        if warning is not None:
            self.console.print(warning)

    async def _turn_messages(self) -> list[str]:
        """The user's messages that started a turn, numbered as `/rewind N` counts them (from the event log)."""
        assert self.session is not None
        return fmt.turn_messages(await session_payloads(self.rpc, self.session.id))

    async def _search(self, arg: str) -> None:
        """`/search WORDS`: every folder's sessions, where they say all the words (messages and tool results)."""
        if not arg.strip():
            self.console.print(Text("Usage: /search WORDS (then /resume ID)", style="yellow"))
            return
        result: SessionSearchResult = await self.rpc.request("session/search", SessionSearchParams(query=arg))
        if not result.hits:
            self.console.print(Text(f"Nothing found for {clean(arg)!r}.", style="dim"))
            return
        table = Table("id", "title", "found", "folder")
        self.session_ids = list(dict.fromkeys(hit.session_id for hit in result.hits))
        for hit in result.hits:
            table.add_row(hit.session_id, clean(hit.title), search_hit(hit), clean(hit.workspace))
        self.console.print(table)

    async def _list_sessions(self, arg: str) -> None:
        """This folder's sessions that have a message (`--all`: every folder's, with the folder)."""
        every = arg.strip() in ("--all", "-a", "all")
        if arg.strip() and not every:
            self.console.print(Text("Usage: /sessions [--all]", style="yellow"))
            return
        folder = None if every else (self.session.workspace if self.session else str(self.options.workspace))
        result: SessionListResult = await self.rpc.request(
            "session/list", SessionListParams(limit=20, workspace=folder, include_empty=False)
        )
        if not result.sessions:
            where = "" if every else " in this folder"
            self.console.print(
                Text(
                    f"No sessions{where} yet." + ("" if every else " /sessions --all lists every folder's."),
                    style="dim",
                )
            )
            return
        table = Table("id", "title", "updated", *(["folder"] if every else []))
        self.session_ids = [s.id for s in result.sessions]
        for s in result.sessions:
            marker = " ◀" if self.session is not None and s.id == self.session.id else ""
            row = [s.id + marker, clean(s.title), s.updated_at.strftime("%Y-%m-%d %H:%M")]
            table.add_row(*row, *([clean(s.workspace)] if every else []))
        self.console.print(table)

    async def _model(self, arg: str) -> None:
        await self.current()
        assert self.session is not None
        if arg:
            self.session = await self.rpc.request("model/set", ModelSetParams(session_id=self.session.id, model=arg))
            chosen = (
                "auto (the router picks per turn)"
                if self.session.auto_model
                else (f"{self.session.provider}:{self.session.model}")
            )
            self.console.print(Text(f"Model: {chosen}", style="bold"))
            return
        result: ModelListResult = await self.rpc.request("model/list", ModelListParams(session_id=self.session.id))
        current = "auto" if result.auto else f"{result.current_provider}:{result.current_model}"
        effort = f" · reasoning {result.reasoning_effort}" if result.reasoning_effort else ""
        self.console.print(Text(f"Current: {current}{effort}", style="bold"))
        table = Table("provider", "connected", "models")
        for p in result.providers:
            models = [
                m.id + (f" [{m.tier}]" if m.tier else "") + (" (running)" if m.source == "server" else "")
                for m in result.models
                if m.provider == p.id
            ] or ([p.default_model] if p.default_model else [])
            table.add_row(p.id, "yes" if p.configured else "no", ", ".join(models))
        self.console.print(table)
        if result.router is not None and result.router.tiers:
            ladder = " → ".join(f"{t.name} ({t.provider}:{t.model})" for t in result.router.tiers)
            self.console.print(Text(f"Router ladder: {ladder}", style="dim"))
            if result.router.local_note:
                self.console.print(Text(f"Local tier off: {result.router.local_note}", style="yellow"))
        self.console.print(Text("Switch with /model provider:model, or /model auto", style="dim"))


def _folder(workspace: str, arg: str) -> str:
    """DIR as typed after /cwd: relative to the session's folder, `~` expanded."""
    return str((Path(workspace) / Path(arg).expanduser()).resolve())


async def _main_loop(repl: Repl) -> int:
    try:
        init = await repl.connect()
    except (OSError, RuntimeError) as exc:
        print_error(repl.console, "cannot_connect", str(exc))
        return 1
    try:
        if repl.options.resume:
            try:
                await repl.resume(repl.options.resume)
            except RpcError as exc:
                print_error(repl.console, exc.code, exc.message)
                return 1
        else:
            await repl.new_session()
        repl.banner(init)
        await repl.show_health(init)
        await repl.load_capture(init)
        await repl.load_names()
        completer = SlashCompleter(
            COMMANDS,
            names=repl.known_names,
            cwd=lambda: Path(repl.session.workspace) if repl.session else repl.options.workspace,
        )
        prompt: PromptSession[str] = PromptSession(
            history=FileHistory(str(cowork_home() / "history")),
            completer=completer,
            key_bindings=prompt_bindings(),
            prompt_continuation="  ",
        )
        repl.prompt = prompt
        repl._refresh_toolbar()
        armed = False  # the previous key was Ctrl-C (at the prompt, or cancelling a turn): one more exits
        while True:
            try:
                line = await prompt.prompt_async(repl.prompt_message, default=repl.prefill or "")
                repl.prefill = None
            except KeyboardInterrupt:
                if armed:
                    return 130
                armed = True
                repl.console.print(Text("(Ctrl-C again to exit)", style="dim"))
                continue
            except EOFError:
                break
            armed = False
            if not line.strip():
                continue
            if is_command(line):
                if not await repl.command(line):
                    break
                continue
            try:
                await repl.run_turn(line)
            except KeyboardInterrupt:  # a second Ctrl-C while the turn was being cancelled
                return 130
            armed = repl.cancelled_by_user
            if repl.rpc.closed.is_set():
                return 1
    finally:
        await repl.rpc.close()
    return 0


def run_repl(options: ReplOptions) -> int:
    cowork_home().mkdir(parents=True, exist_ok=True)
    return asyncio.run(_main_loop(Repl(options)))
