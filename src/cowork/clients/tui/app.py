"""`cowork tui`: the Textual app. It renders what the server says and sends what the user does; nothing more.

One WebSocket connection; the shown session is subscribed with `afterSeq`, so a reconnect (after a server restart)
replays exactly what was missed, and the subscribe result's `pending` brings back approvals and questions asked
before this client was watching.

Over 500 lines: the app's key bindings, actions and connection loop are one Textual `App` class. Its slash
commands move out when the clients share one slash-command definition (issue 13).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, assert_never

from pydantic import ValidationError
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header, Input, Label, ListView

import cowork
from cowork.clients import format as fmt
from cowork.clients.connection import RpcClient, RpcError, ServerAddress, discover_server, ensure_server
from cowork.clients.documents import document_files, document_line
from cowork.protocol import (
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
    DocumentPreview,
    DocumentRef,
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
    OperationStatusChanged,
    PendingApproval,
    PendingQuestion,
    Reasoning,
    ReceivedEvent,
    Route,
    SessionCreateParams,
    SessionForkParams,
    SessionForkResult,
    SessionGetParams,
    SessionInfo,
    SessionListParams,
    SessionListResult,
    SessionRef,
    SessionUpdated,
    SlashCommand,
    SubscribeParams,
    SubscribeResult,
    Todos,
    ToolCall,
    ToolInterrupted,
    ToolResult,
    TurnCancelParams,
    TurnStartParams,
    TurnSteerParams,
    UnknownPayload,
    Usage,
    UserMessage,
    parse_event,
)

from .automations import TuiAutomations
from .commands import is_command, run_command
from .screens import ApprovalAnswer, ApprovalScreen, ConfirmScreen, ModelPickerScreen, QuestionScreen
from .state import SessionState
from .widgets import ChatView, McpPanel, SessionItem, SessionList, TodosPanel, UsageBar

__all__ = ["CoworkApp", "TuiOptions", "run_tui"]

Connector = Callable[[], Awaitable[RpcClient]]

CSS = """
Screen { layout: vertical; }
#body { height: 1fr; }
#sidebar { width: 28; border-right: vkey $panel; padding: 0 1 0 0; }
#sidebar.hidden, #panels.hidden { display: none; }
#sidebar Label, #panels Label.panel-title { text-style: bold; color: $text-muted; padding: 0 1; }
#sessions { height: 1fr; background: $surface; }
#sessions > ListItem.current { text-style: bold; }
#sessions Static { text-wrap: nowrap; text-overflow: ellipsis; }
#main { width: 1fr; }
#chat { height: 1fr; padding: 0 1; }
#chat > .user { margin: 1 0 0 0; color: $text; background: $boost; padding: 0 1; }
#chat > Markdown { margin: 0; padding: 0 0; }
#chat > .note { color: $text-muted; }
#chat > Collapsible { border: none; padding: 0; margin: 0; background: $background; }
#chat > Collapsible > Contents { padding: 0 0 0 3; }
#chat > Collapsible > CollapsibleTitle { padding: 0; width: 1fr; }
#prompt { dock: bottom; margin: 0 0; }
#panels { width: 34; border-left: vkey $panel; padding: 0 1; }
#todos { height: auto; max-height: 50%; padding: 0 1 1 1; }
#mcp { height: auto; padding: 0 1; }
#usage { height: 1; background: $panel; color: $text; }
.dialog-screen { align: center middle; }
#dialog { width: 80; max-width: 95%; height: auto; max-height: 90%; border: thick $warning; background: $surface;
          padding: 1 2; }
#dialog.question, #dialog.models { border: thick $accent; }
#dialog.dangerous { border: thick $error; }
#dialog #reason { margin: 0 0 1 0; }
#dialog > Label { margin: 0 0 1 0; }
#dialog #arguments { height: auto; max-height: 20; background: $boost; margin: 0 0 1 0; }
#dialog .buttons { height: auto; align: right middle; margin: 1 0 0 0; }
#dialog Button { margin: 0 0 0 2; }
#dialog OptionList { height: auto; max-height: 20; margin: 0 0 1 0; }
#dialog #question-text { margin: 0 0 1 0; }
"""


@dataclass(frozen=True)
class TuiOptions:
    workspace: Path
    address: ServerAddress | None = None
    """None: the local server (found in COWORK_HOME, started when none runs)."""
    resume: str | None = None
    yolo: bool = False
    idle_exit_seconds: float = 900


class EventArrived(Message):
    def __init__(self, event: ReceivedEvent) -> None:
        super().__init__()
        self.event = event


class McpStatusArrived(Message):
    def __init__(self, server: dict[str, Any]) -> None:
        super().__init__()
        self.server = server


class CaptureStatusArrived(Message):
    def __init__(self, status: dict[str, Any]) -> None:
        super().__init__()
        self.status = status


class AutomationsArrived(Message):
    """A `notification/delivered` or an `automation/run` (see `automations.py`)."""

    def __init__(self, method: str, params: dict[str, Any]) -> None:
        super().__init__()
        self.method = method
        self.params = params


class CoworkApp(App[int]):
    """The Cowork terminal UI. Without options it does not connect (tests feed it events directly)."""

    TITLE = "Cowork"
    CSS = CSS
    BINDINGS = [
        Binding("ctrl+n", "new_session", "New session"),
        Binding("ctrl+o", "pick_model", "Model"),
        Binding("ctrl+b", "switch_sessions", "Sessions"),
        Binding("ctrl+t", "toggle_panels", "Panels"),
        Binding("escape", "cancel_turn", "Cancel turn"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, options: TuiOptions | None = None, *, connector: Connector | None = None) -> None:
        super().__init__()
        self.options = options
        self._connector = connector
        self.rpc: RpcClient | None = None
        self.init: InitializeResult | None = None
        self.session: SessionInfo | None = None
        self.sessions: list[SessionInfo] = []
        self.state = SessionState()
        self.connection = "connecting…" if options is not None or connector is not None else "offline"
        self.capture: dict[str, Any] | None = None
        """Activity capture's status (`capture/status`): the bottom bar shows it while it records or is paused."""
        self.model_label = "no provider connected"
        self._request_screen: ApprovalScreen | QuestionScreen | None = None
        # Not `_closing`: that name is Textual's own (MessagePump), and shadowing it made the app drop every
        # message once set, the exit included, so the TUI could not be quit.
        self._quitting = False
        self.connected = asyncio.Event()
        # What was sent before a session was open (typed while connecting or reconnecting): sent once it is.
        self._unsent: list[str] = []
        self.automations = TuiAutomations(self)
        """Toasts for notifications and automation runs that wait or end."""

    # -- layout -----------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield Label("Sessions")
                yield SessionList(id="sessions")
            with Vertical(id="main"):
                yield ChatView(id="chat")
                yield Input(placeholder="Message Cowork (Enter sends; during a turn it is added to it)", id="prompt")
            with Vertical(id="panels"):
                yield Label("Todos", classes="panel-title")
                yield TodosPanel(id="todos")
                yield Label("MCP servers", classes="panel-title")
                yield McpPanel(id="mcp")
        yield UsageBar(id="usage")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(TodosPanel).show([])
        self._refresh_usage()
        self.query_one("#prompt", Input).focus()
        if self.options is not None or self._connector is not None:
            self._connection_loop()

    @property
    def chat(self) -> ChatView:
        return self.query_one(ChatView)

    def _refresh_usage(self) -> None:
        with contextlib.suppress(NoMatches):  # not there while the app exits
            plan = self.session is not None and self.session.plan_mode
            self.query_one(UsageBar).show(
                self.model_label, self.state.usage, self.connection, plan=plan, capture=self.capture
            )

    def _set_model_label(self, session: SessionInfo | None) -> None:
        if session is not None and session.auto_model:
            self.model_label = "auto"
        elif session is not None and session.provider:
            self.model_label = f"{session.provider}:{session.model}"
        elif self.init is not None and self.init.config.provider:
            self.model_label = f"{self.init.config.provider}:{self.init.config.model}"
        self._refresh_usage()

    def quitting(self) -> bool:
        """Whether the user asked to quit (a method: the flag changes while the connection loop awaits)."""
        return self._quitting

    # -- connection -------------------------------------------------------------------------------------------

    async def _connect(self) -> RpcClient:
        if self._connector is not None:
            return await self._connector()
        assert self.options is not None
        address = self.options.address
        if address is None:
            address = await asyncio.to_thread(discover_server)
            if address is None:
                address = await asyncio.to_thread(
                    ensure_server, workspace=self.options.workspace, idle_exit_seconds=self.options.idle_exit_seconds
                )
        return await RpcClient.connect(address)

    @work(exclusive=True, group="connection")
    async def _connection_loop(self) -> None:
        delay = 0.2
        while not self._quitting:
            try:
                client = await self._connect()
            except (OSError, RuntimeError, TimeoutError) as exc:
                self.connection = "disconnected; retrying…"
                self._refresh_usage()
                self.log.warning(f"connect failed: {exc}")
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            client.on_notification = self._on_notification
            self.rpc = client
            try:
                await self._on_connected(client)
                delay = 0.2
                await client.closed.wait()
            except (ConnectionError, OSError) as exc:
                self.log.warning(f"connection lost: {exc}")
            except RpcError as exc:  # the server refused to set up (say, the session is gone): say so, back off
                self.notify(exc.message, title=exc.code, severity="error")
                delay = min(delay * 2, 5.0)
            finally:
                self.connected.clear()
                self.rpc = None
                await client.close()
            if self.quitting():
                return
            self.connection = "reconnecting…"
            self._refresh_usage()
            await asyncio.sleep(delay)

    async def _on_connected(self, client: RpcClient) -> None:
        self.init = await client.request(
            "initialize", InitializeParams(client_info=ClientInfo(name="cowork-tui", version=cowork.__version__))
        )
        self.connection = "connected"
        if self.init.capabilities.sandbox_note:
            self.notify(self.init.capabilities.sandbox_note, title="sandbox", severity="warning", timeout=15)
        for warning in self.init.config.warnings:
            self.notify(warning, title="configuration", severity="warning", timeout=30)
        await self._notify_degraded(client)
        await self._load_mcp(client)
        await self._load_capture(client)
        if self.session is None:
            resume = self.options.resume if self.options is not None else None
            session = None
            if resume:
                try:
                    session = (await client.request("session/get", SessionGetParams(session_id=resume))).session
                except RpcError as exc:
                    self.notify(f"{exc.message} A new session was started instead.", title=exc.code, severity="error")
            if session is None:
                session = await self._untouched_session(client)
            if session is None:
                session = await client.request("session/create", self._create_params())
            await self.show_session(session)
        else:
            await self._subscribe(client)  # same session: only what was missed
        await self.refresh_sessions()
        self.connected.set()
        self._send_unsent()

    async def _notify_degraded(self, client: RpcClient) -> None:
        """One notification naming each degraded subsystem and why; nothing when all is well or the server (an older
        one) cannot say."""
        assert self.init is not None
        if "health" not in self.init.capabilities.methods:
            return
        try:
            health: HealthResult = await client.request("health")
        except (RpcError, ValidationError):
            return
        lines = fmt.degraded_lines(health, self.init)
        if lines:
            self.notify("\n".join(line.plain for line in lines), title="degraded", severity="warning", timeout=30)

    async def _untouched_session(self, client: RpcClient) -> SessionInfo | None:
        """The newest session of this folder nothing happened in yet (no event: no message, no setting changed)
        with the same `--yolo`, so that each launch does not leave another empty session behind."""
        create = self._create_params()
        workspace = create.workspace or (self.init.config.workspace if self.init is not None else None)
        if workspace is None:
            return None
        result: SessionListResult = await client.request(
            "session/list", SessionListParams(limit=20, workspace=workspace)
        )
        return next((s for s in result.sessions if s.last_seq == 0 and s.yolo == create.yolo), None)

    def _create_params(self) -> SessionCreateParams:
        workspace = str(self.options.workspace) if self.options is not None else None
        return SessionCreateParams(workspace=workspace, yolo=self.options.yolo if self.options else False)

    async def _load_mcp(self, client: RpcClient) -> None:
        panel = self.query_one(McpPanel)
        try:
            result = await client.call("mcp/list", {})
        except RpcError as exc:
            if exc.code == "method_not_found":
                panel.unavailable()
            else:
                panel.update(Text(f"MCP: {exc.message}", style="red"))
            return
        panel.load(list(result.get("servers") or []))

    async def _load_capture(self, client: RpcClient) -> None:
        """Activity capture's status, for the indicator in the bottom bar (then `capture/status` keeps it)."""
        assert self.init is not None
        if "capture/status" not in self.init.capabilities.methods:
            return
        with contextlib.suppress(RpcError):
            self.capture = await client.call("capture/status", {})
            self._refresh_usage()

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "session/event":
            self.post_message(EventArrived(parse_event(params)))
        elif method == "mcp/status":
            self.post_message(McpStatusArrived(params))
        elif method == "capture/status":
            self.post_message(CaptureStatusArrived(params))
        elif method in ("notification/delivered", "automation/run"):
            self.post_message(AutomationsArrived(method, params))

    async def _subscribe(self, client: RpcClient) -> None:
        """Subscribe to the shown session from the last event seen (0: all of it), then bring back its requests."""
        assert self.session is not None
        self.state.boundary = None
        result: SubscribeResult = await client.request(
            "session/subscribe", SubscribeParams(session_id=self.session.id, after_seq=self.state.last_seq)
        )
        self.state.subscribed(result.last_seq, result.pending)
        if self._request_screen is not None:
            open_id = self._request_screen.request.request_id
            if open_id not in self.state.approvals and open_id not in self.state.questions:
                self.dismiss_request()  # answered while this client was away
        self.show_next_request()

    async def show_session(self, session: SessionInfo) -> None:
        """Switch the screen to `session` and subscribe to it from its first event."""
        client = self.rpc
        previous = self.session
        self.dismiss_request()
        self.session = session
        self.state = SessionState(session_id=session.id)
        self.sub_title = session.title
        await self.chat.clear()
        self.query_one(TodosPanel).show([])
        self._set_model_label(session)
        if client is not None:
            if previous is not None and previous.id != session.id:
                with contextlib.suppress(RpcError, ConnectionError):
                    await client.call("session/unsubscribe", SessionRef(session_id=previous.id))
            await self._subscribe(client)

    async def refresh_sessions(self) -> None:
        """Reload the sessions sidebar (those someone wrote in, and the one shown)."""
        if self.rpc is None:
            return
        # Sessions nobody wrote in are left out (no "New session" row per launch), except the one shown now.
        params = SessionListParams(limit=100, include_empty=False)
        result: SessionListResult = await self.rpc.request("session/list", params)
        sessions = list(result.sessions)
        if self.session is not None and all(s.id != self.session.id for s in sessions):
            sessions.insert(0, self.session)
        await self.show_sessions(sessions)

    async def show_sessions(self, sessions: list[SessionInfo]) -> None:
        self.sessions = list(sessions)
        await self.query_one(SessionList).show(self.sessions, self.session.id if self.session else None)

    # -- events -----------------------------------------------------------------------------------------------

    async def apply_event(self, event: ReceivedEvent) -> None:
        """Show one event of the shown session (events already seen or of another session are ignored)."""
        if not self.state.is_new(event):
            return
        self.state.apply(event)
        await self.chat.handle(event)
        payload = event.payload
        match payload:
            case Todos():
                self.query_one(TodosPanel).show(self.state.todos)
            case Usage():
                self._refresh_usage()
            case SessionUpdated():
                await self._session_updated(payload)
            case ApprovalRequested() | Ask():
                self.show_next_request()
            case ApprovalResolved() | AskResolved():
                if self._request_screen is not None and self._request_screen.request.request_id == payload.request_id:
                    self.dismiss_request()  # answered elsewhere (another client)
            case OperationStatusChanged():
                if self.state.running is None and self.state.boundary is not None and event.seq > self.state.boundary:
                    self.run_worker(self.guarded(self.refresh_sessions()), group="sessions", exclusive=True)
            case ToolResult():
                # A live result that made or changed documents: a line each (not for history replayed on opening).
                live = self.state.boundary is not None and event.seq > self.state.boundary
                if live and document_files(payload.files):
                    self.run_worker(self.guarded(self._show_documents(payload.files)), group="documents")
            case (
                UserMessage()
                | ModelStreamChunk()
                | Reasoning()
                | AssistantMessage()
                | ToolCall()
                | LogLine()
                | ErrorEvent()
                | ToolInterrupted()
                | ContextCompressed()
                | Guardrail()
                | AgentSpawned()
                | Route()
                | ModelRetry()
                | BudgetWarning()
                | Citations()
                | UnknownPayload()
            ):
                pass  # the transcript's alone
            case _:
                assert_never(payload)

    async def _show_documents(self, files: list[str]) -> None:
        """A line per document among `files`: where it is and what is in it (`document/preview`'s summary)."""
        if self.session is None:
            return
        for path in document_files(files):
            try:
                preview: DocumentPreview = await self.rpc_request(
                    "document/preview", DocumentRef(session_id=self.session.id, path=path)
                )
            except RpcError as exc:
                await self.chat.note(document_line(path, None, exc.message))
                continue
            await self.chat.note(document_line(path, preview))

    async def _session_updated(self, payload: SessionUpdated) -> None:
        if self.session is None:
            return
        changes = payload.model_dump(exclude_none=True, exclude={"reasoning_effort"})
        self.session = self.session.model_copy(update=changes)
        self.sub_title = self.session.title
        self._set_model_label(self.session)

    async def on_event_arrived(self, message: EventArrived) -> None:
        with contextlib.suppress(NoMatches):  # the screen is being torn down at exit
            await self.apply_event(message.event)

    def on_capture_status_arrived(self, message: CaptureStatusArrived) -> None:
        self.capture = message.status
        self._refresh_usage()

    def on_automations_arrived(self, message: AutomationsArrived) -> None:
        self.automations.handle(message.method, message.params)

    def on_mcp_status_arrived(self, message: McpStatusArrived) -> None:
        with contextlib.suppress(NoMatches):
            self.query_one(McpPanel).status(message.server)

    # -- approvals and questions ------------------------------------------------------------------------------

    def show_next_request(self) -> None:
        """Open the dialog for the oldest request the session waits on (one dialog at a time)."""
        if self._request_screen is not None:
            return
        request = self.state.next_request()
        if request is None:
            return
        if isinstance(request, PendingApproval):
            approval = ApprovalScreen(request)
            self._request_screen = approval
            self.push_screen(approval, lambda answer: self._approval_answered(request, answer))
        else:
            question = QuestionScreen(request)
            self._request_screen = question
            self.push_screen(question, lambda answer: self._question_answered(request, answer))

    def dismiss_request(self) -> None:
        screen = self._request_screen
        if screen is not None:
            self._request_screen = None
            if screen.is_attached and screen in self.screen_stack:
                screen.dismiss(None)

    def _approval_answered(self, request: PendingApproval, answer: ApprovalAnswer | None) -> None:
        self._request_screen = None
        if answer is not None:
            self.state.resolve(request.request_id)
            self._respond(
                "approval/respond",
                ApprovalRespondParams(
                    request_id=request.request_id, approved=answer.approved, message=answer.message, scope=answer.scope
                ),
            )
        self.show_next_request()

    def _question_answered(self, request: PendingQuestion, answer: str | None) -> None:
        self._request_screen = None
        if answer is not None:
            self.state.resolve(request.request_id)
            self._respond("ask/respond", AskRespondParams(request_id=request.request_id, answer=answer))
        self.show_next_request()

    @work(group="respond")
    async def _respond(self, method: str, params: ApprovalRespondParams | AskRespondParams) -> None:
        try:
            await self.rpc_request(method, params)
        except RpcError as exc:
            if exc.code != "already_resolved":  # another client answered first; nothing to say
                self.notify(exc.message, title=exc.code, severity="error")
        except ConnectionError as exc:  # still pending on the server: asked again after the reconnect
            self.notify(str(exc), title="disconnected", severity="error")

    # -- actions ----------------------------------------------------------------------------------------------

    async def rpc_request(self, method: str, params: Any) -> Any:
        """One request to the server, its typed result (raises `RpcError`, also when disconnected)."""
        if self.rpc is None:
            raise RpcError("disconnected", "Not connected to the Cowork server (reconnecting…).")
        return await self.rpc.request(method, params)

    async def guarded(self, call: Awaitable[Any]) -> Any:
        """`call`'s result, or None after a notification saying why it failed."""
        try:
            return await call
        except RpcError as exc:
            self.notify(exc.message, title=exc.code, severity="error")
        except ConnectionError as exc:
            self.notify(str(exc), title="disconnected", severity="error")
        return None

    @on(Input.Submitted, "#prompt")
    async def _send(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        event.input.value = ""
        if is_command(text):  # at once (`/quit` and `/help` need no session; the others do nothing without one)
            await run_command(self, text)
            return
        if self.session is None or not self.connected.is_set():
            self._unsent.append(text)
            self.notify("The session is not open yet (connecting to the Cowork server): this is sent as soon as it is.")
            return
        await self.submit(text)

    def _send_unsent(self) -> None:
        """Send the messages typed before the session was open, as one message (a second turn would be refused
        while the first runs)."""
        unsent, self._unsent = self._unsent, []
        if unsent:
            self.run_worker(self.submit("\n\n".join(unsent)), group="unsent")

    async def submit(self, text: str) -> None:
        """Start a turn with `text`, or steer the running one with it."""
        if self.session is None:
            return
        if self.state.running is not None:
            params: Any = TurnSteerParams(session_id=self.session.id, text=text, client_message_id=uuid.uuid4().hex)
            self.run_worker(self.guarded(self.rpc_request("turn/steer", params)), group="turn")
        else:
            params = TurnStartParams(session_id=self.session.id, text=text, client_message_id=uuid.uuid4().hex)
            self.run_worker(self.guarded(self.rpc_request("turn/start", params)), group="turn")

    @on(ListView.Selected, "#sessions")
    async def _session_selected(self, event: ListView.Selected) -> None:
        item = event.item
        if isinstance(item, SessionItem) and (self.session is None or item.session.id != self.session.id):
            self.switch_session(item.session.id)

    @work(exclusive=True, group="switch")
    async def switch_session(self, session_id: str) -> None:
        async def switch() -> None:
            got = await self.rpc_request("session/get", SessionGetParams(session_id=session_id))
            await self.show_session(got.session)
            await self.refresh_sessions()

        await self.guarded(switch())
        self.query_one("#prompt", Input).focus()  # back to typing in the session just opened

    @work(exclusive=True, group="switch")
    async def action_new_session(self) -> None:
        if self.session is not None and self.session.last_seq == 0 and self.state.last_seq == 0:
            self.notify("This session is new already.")
            self.query_one("#prompt", Input).focus()
            return

        async def create() -> None:
            session = await self.rpc_request("session/create", self._create_params())
            await self.show_session(session)
            await self.refresh_sessions()
            self.query_one("#prompt", Input).focus()

        await self.guarded(create())

    @work(exclusive=True, group="switch")
    async def confirm_delete(self, session: SessionInfo) -> None:
        """`/delete`: asks first (Cancel has the focus), then deletes; the shown session gives way to a new one."""
        title = fmt.clean(session.title)
        question = f"Delete “{title}” for good? Its messages, tool calls and the outputs kept for it go; this cannot be undone."
        if not await self.push_screen_wait(ConfirmScreen(question, "Delete")):
            self.notify("Nothing was deleted.")
            return
        deleted = await self.guarded(self.rpc_request("session/delete", SessionRef(session_id=session.id)))
        if deleted is None:
            return
        self.notify(f"Deleted “{title}”.")
        if self.session is not None and self.session.id == session.id:
            self.session = None
            created = await self.guarded(self.rpc_request("session/create", self._create_params()))
            if created is not None:
                await self.show_session(created)
        await self.guarded(self.refresh_sessions())
        self.query_one("#prompt", Input).focus()

    @work(exclusive=True, group="switch")
    async def fork(self, source: SessionInfo, before_message: int | None) -> None:
        """`/fork [N]`: switch to a new session holding `source`'s conversation (before message N, which is then
        put in the prompt to send again or change); `source` stays as it is."""
        params = SessionForkParams(session_id=source.id, before_message=before_message)
        result: SessionForkResult | None = await self.guarded(self.rpc_request("session/fork", params))
        if result is None:
            return
        await self.go_on_in(result)
        self.notify(
            f"Forked: {result.messages} of your messages came along; “{fmt.clean(source.title)}” stays as it was."
        )

    async def go_on_in(self, result: SessionForkResult) -> None:
        """Show a fork (`/fork`, `/rewind`), the message it was cut before in the prompt to send again or change."""
        await self.show_session(result.session)
        await self.guarded(self.refresh_sessions())
        prompt = self.query_one("#prompt", Input)
        if result.message is not None:
            prompt.value = result.message
            prompt.cursor_position = len(result.message)
        prompt.focus()

    @work(exclusive=True, group="models")
    async def action_pick_model(self) -> None:
        if self.session is None:
            return
        models: ModelListResult | None = await self.guarded(
            self.rpc_request("model/list", ModelListParams(session_id=self.session.id))
        )
        if models is None:
            return
        choice = await self.push_screen_wait(ModelPickerScreen(models))
        if choice is None or self.session is None:
            return
        await self.set_model(choice)

    async def set_model(self, choice: str) -> None:
        """Switch the shown session's model (`/model provider:model`, the picker); a refusal is shown as said."""
        if self.session is None:
            return
        session = await self.guarded(
            self.rpc_request("model/set", ModelSetParams(session_id=self.session.id, model=choice))
        )
        if session is not None:
            self.session = session
            self._set_model_label(session)
            self.notify(f"Model: {self.model_label}")

    @property
    def commands(self) -> list[SlashCommand] | None:
        """The slash commands the server sent (None before `initialize`, or from an older server)."""
        return self.init.commands if self.init is not None and self.init.commands else None

    def action_switch_sessions(self) -> None:
        """Ctrl-B: to the sessions list (shown if it was hidden) to pick one with the arrows and Enter; pressed
        again there, back to the prompt."""
        sidebar = self.query_one("#sidebar")
        sessions = self.query_one(SessionList)
        if sessions.has_focus:
            self.query_one("#prompt", Input).focus()
            return
        sidebar.remove_class("hidden")
        sessions.focus()

    def action_toggle_sidebar(self) -> None:
        self.query_one("#sidebar").toggle_class("hidden")

    def action_toggle_panels(self) -> None:
        self.query_one("#panels").toggle_class("hidden")

    async def action_cancel_turn(self) -> None:
        if self.session is None or self.state.running is None or isinstance(self.screen, ModalScreen):
            return  # Escape in a dialog closes or ignores the dialog; it never cancels the turn
        params = TurnCancelParams(session_id=self.session.id, operation_id=self.state.running)
        await self.guarded(self.rpc_request("turn/cancel", params))

    async def action_continue_turn(self) -> None:
        """Resume the session's interrupted turn (after a server restart)."""
        if self.session is None or self.rpc is None:
            return
        got = await self.guarded(self.rpc_request("session/get", SessionGetParams(session_id=self.session.id)))
        operation_id = got.session.active_operation_id if got is not None else None
        if operation_id is None:
            self.notify("Nothing to continue in this session.")
            return
        await self.guarded(self.rpc_request("operation/resume", OperationRef(operation_id=operation_id)))

    async def action_refresh_mcp(self) -> None:
        if self.rpc is not None:
            await self.guarded(self._load_mcp(self.rpc))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield SystemCommand("New session", "Start a new session in this workspace", self.action_new_session)
        yield SystemCommand("Switch model", "Pick the model for this session (or auto)", self.action_pick_model)
        yield SystemCommand("Toggle sessions sidebar", "Show or hide the sessions list", self.action_toggle_sidebar)
        yield SystemCommand("Toggle panels", "Show or hide the todos and MCP panels", self.action_toggle_panels)
        yield SystemCommand("Cancel turn", "Stop the running turn", self.action_cancel_turn)
        yield SystemCommand("Continue", "Resume this session's interrupted turn", self.action_continue_turn)
        yield SystemCommand("Refresh MCP servers", "Ask the server for the MCP servers again", self.action_refresh_mcp)
        yield from super().get_system_commands(screen)

    async def action_quit(self) -> None:
        self._quitting = True
        if self.rpc is not None:
            await self.rpc.close()
        self.exit(0)

    async def on_unmount(self) -> None:
        self._quitting = True
        if self.rpc is not None:
            await self.rpc.close()


def run_tui(options: TuiOptions) -> int:
    return CoworkApp(options).run() or 0
