"""`cowork run`: one turn without a person at the keyboard, for scripts and CI.

Nobody can answer an approval or a question here, so the rules are fixed up front (docs/cli.md):

- `--yolo`: the session runs with approvals off;
- `--approve-safe`: approval requests that are not dangerous are approved, dangerous ones rejected with a reason;
- otherwise an approval is left waiting and the run exits 3 (`cowork --resume SESSION` picks it up);
- a question (the `ask` tool) is answered with `NO_USER_ANSWER`; a guardrail's "keep going?" is left waiting (exit 3).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import uuid
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import IO, Any, assert_never

from rich.console import Console
from rich.text import Text

import cowork
from cowork.clients.connection import RpcClient, RpcError, ServerAddress, ensure_server
from cowork.clients.format import SafeConsole
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
    ErrorEvent,
    Guardrail,
    InitializeParams,
    LogLine,
    ModelRetry,
    ModelSetParams,
    ModelStreamChunk,
    OperationStatus,
    OperationStatusChanged,
    Reasoning,
    ReceivedEvent,
    Route,
    SessionCreateParams,
    SessionGetParams,
    SessionGetResult,
    SessionInfo,
    SessionUpdated,
    SessionUpdateParams,
    Todos,
    ToolCall,
    ToolInterrupted,
    ToolResult,
    TurnCancelParams,
    TurnStartParams,
    TurnStartResult,
    UnknownPayload,
    Usage,
    UserMessage,
    parse_event,
)

from .render import TurnView, print_error

__all__ = ["NO_USER_ANSWER", "ExitCode", "RunOptions", "is_dangerous", "outcome_line", "run_once"]

NO_USER_ANSWER = "(no user: running non-interactively)"
"""The answer every question gets in `cowork run`: the model decides on its own and says what it assumed."""

_REJECTED = "Rejected by `cowork run --approve-safe`: this call is flagged dangerous and nobody is here to approve it."
_CANCEL_GRACE_SECONDS = 10.0


class ExitCode(IntEnum):
    """What `cowork run` exits with; scripts rely on these (docs/cli.md)."""

    DONE = 0
    FAILED = 1
    USAGE = 2
    NEEDS_HUMAN = 3
    NO_PROVIDER = 4
    INTERRUPTED = 130


_OUTCOME = {
    ExitCode.DONE: "done",
    ExitCode.FAILED: "error",
    ExitCode.USAGE: "usage_error",
    ExitCode.NEEDS_HUMAN: "waiting_for_human",
    ExitCode.NO_PROVIDER: "no_provider",
    ExitCode.INTERRUPTED: "cancelled",
}
_USAGE_CODES = {"invalid_params", "session_not_found", "workspace_not_found", "unknown_provider", "model_not_found"}


def is_dangerous(payload: dict[str, Any]) -> bool:
    """Whether `--approve-safe` must reject this approval request (its `payload` as it came over the wire).

    Dangerous: the server's security check flagged it (`dangerous`: a destructive command, a tool that deletes,
    sends or pays, network access), or it re-runs a call a restart interrupted (it may repeat its effects).
    """
    return payload.get("dangerous") is True or payload.get("rerun") is True


@dataclass(frozen=True)
class RunOptions:
    prompt: str
    workspace: Path
    address: ServerAddress | None = None
    session_id: str | None = None
    model: str | None = None
    json: bool = False
    yolo: bool = False
    approve_safe: bool = False
    idle_exit_seconds: float = 900


class _Stop(Exception):
    """Ends the run with an exit code (and, for failures, the error that caused it)."""

    def __init__(self, code: ExitCode, error: tuple[str, str] | None = None) -> None:
        super().__init__(code.name)
        self.code = code
        self.error = error


@dataclass
class _Run:
    options: RunOptions
    out: IO[str] = field(default_factory=lambda: sys.stdout)
    notes: Console = field(default_factory=lambda: SafeConsole(stderr=True, soft_wrap=not sys.stderr.isatty()))
    client: RpcClient | None = None
    session: SessionInfo | None = None
    operation_id: str | None = None
    answer: str | None = None
    waiting: list[dict[str, Any]] = field(default_factory=list)
    events: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    interrupts: asyncio.Queue[None] = field(default_factory=asyncio.Queue)
    cancelling: bool = False
    error: tuple[str, str] | None = None

    @property
    def rpc(self) -> RpcClient:
        assert self.client is not None
        return self.client

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "session/event":
            self.events.put_nowait(params)

    def emit(self, line: dict[str, Any]) -> None:
        self.out.write(json.dumps(line, ensure_ascii=False) + "\n")
        self.out.flush()

    # -- setup ----------------------------------------------------------------------------------------------------

    async def connect(self) -> None:
        address = self.options.address
        try:
            if address is None:
                address = await asyncio.to_thread(
                    ensure_server, workspace=self.options.workspace, idle_exit_seconds=self.options.idle_exit_seconds
                )
            self.client = await RpcClient.connect(address)
        except (OSError, RuntimeError) as exc:
            raise _Stop(ExitCode.FAILED, ("cannot_connect", str(exc))) from exc
        self.client.on_notification = self._on_notification
        await self.rpc.request(
            "initialize", InitializeParams(client_info=ClientInfo(name="cowork-run", version=cowork.__version__))
        )

    async def open_session(self) -> SessionInfo:
        options = self.options
        if options.session_id:
            got: SessionGetResult = await self.rpc.request(
                "session/get", SessionGetParams(session_id=options.session_id)
            )
            session = got.session
            if options.yolo and not session.yolo:
                session = await self.rpc.request(
                    "session/update", SessionUpdateParams(session_id=session.id, yolo=True)
                )
        else:
            session = await self.rpc.request(
                "session/create", SessionCreateParams(workspace=str(options.workspace), yolo=options.yolo)
            )
        if options.model:
            session = await self.rpc.request("model/set", ModelSetParams(session_id=session.id, model=options.model))
        if options.yolo:
            print(
                "cowork run: --yolo: approvals and the sandbox are OFF for this session; commands run unconfined.",
                file=sys.stderr,
                flush=True,
            )
        return session

    # -- the turn -------------------------------------------------------------------------------------------------

    async def turn(self, view: TurnView) -> ExitCode:
        assert self.session is not None
        started: TurnStartResult = await self.rpc.request(
            "turn/start",
            TurnStartParams(session_id=self.session.id, text=self.options.prompt, client_message_id=uuid.uuid4().hex),
        )
        self.operation_id = view.operation_id = started.operation_id
        while True:
            raw = await self._next_event()
            if raw is None:  # the connection closed
                raise _Stop(ExitCode.FAILED, ("disconnected", "The connection to the Cowork server was lost."))
            if self.options.json:
                self.emit(raw)  # as it came, so a type this client does not know still reaches the script
            event = parse_event(raw)
            raw_payload = raw.get("payload")
            code = await self._handle(event, raw_payload if isinstance(raw_payload, dict) else {}, view)
            if code is not None:
                return code

    async def _next_event(self) -> dict[str, Any] | None:
        event_wait = asyncio.ensure_future(self.events.get())
        interrupt = asyncio.ensure_future(self.interrupts.get())
        closed = asyncio.ensure_future(self.rpc.closed.wait())
        while True:
            done, _ = await asyncio.wait({event_wait, interrupt, closed}, return_when=asyncio.FIRST_COMPLETED)
            if interrupt in done:
                await self._cancel()
                interrupt = asyncio.ensure_future(self.interrupts.get())
                continue
            for waiter in (interrupt, closed) if event_wait in done else (event_wait, interrupt):
                waiter.cancel()
            return event_wait.result() if event_wait in done else None

    async def _cancel(self) -> None:
        """First Ctrl-C: cancel the turn and wait (a while) for it to stop. Second Ctrl-C: leave now."""
        if self.cancelling:
            raise _Stop(ExitCode.INTERRUPTED)
        self.cancelling = True
        self.notes.print(Text("cancelling… (Ctrl-C again to quit now)", style="yellow"))
        assert self.session is not None
        with contextlib.suppress(RpcError):
            await self.rpc.call(
                "turn/cancel", TurnCancelParams(session_id=self.session.id, operation_id=self.operation_id)
            )
        loop = asyncio.get_running_loop()
        loop.call_later(_CANCEL_GRACE_SECONDS, self.interrupts.put_nowait, None)

    async def _handle(self, event: ReceivedEvent, raw_payload: dict[str, Any], view: TurnView) -> ExitCode | None:
        payload = event.payload
        ours = getattr(payload, "operation_id", None) == self.operation_id
        if isinstance(payload, ErrorEvent) and ours:
            # Shown once, at the end, with the exit code it leads to.
            self.error = (str(payload.code), payload.message)
            return None
        if not self.options.json:
            view.handle(event)
        match payload:
            case AssistantMessage():
                if ours:
                    self.answer = payload.text
            case ApprovalRequested():
                await self._approval(payload, raw_payload)
            case Ask():
                await self._question(payload)
            case OperationStatusChanged():
                return self._status(payload)
            case (
                UserMessage()
                | ModelStreamChunk()
                | Reasoning()
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
                pass  # only shown (by the view, or as JSON lines); nothing for the run to decide
            case _:
                assert_never(payload)
        return None

    async def _approval(self, payload: ApprovalRequested, raw_payload: dict[str, Any]) -> None:
        if not self.options.approve_safe:
            self._leave_waiting("approval", payload.request_id, payload.operation_id, f"approve {payload.name}")
            return
        dangerous = is_dangerous(raw_payload)
        verb = "rejected (dangerous)" if dangerous else "approved"
        self.notes.print(Text(f"--approve-safe: {verb} {payload.name}: {payload.reason}", style="yellow"))
        await self._respond(
            "approval/respond",
            ApprovalRespondParams(
                request_id=payload.request_id, approved=not dangerous, message=_REJECTED if dangerous else None
            ),
        )

    async def _question(self, payload: Ask) -> None:
        if payload.kind == "guardrail":
            self._leave_waiting("guardrail", payload.request_id, payload.operation_id, payload.question)
            return
        self.notes.print(Text(f"question: {payload.question} → {NO_USER_ANSWER}", style="dim"))
        await self._respond("ask/respond", AskRespondParams(request_id=payload.request_id, answer=NO_USER_ANSWER))

    def _leave_waiting(self, kind: str, request_id: str, operation_id: str, what: str) -> None:
        self.waiting.append({"kind": kind, "requestId": request_id, "operationId": operation_id, "what": what})

    async def _respond(self, method: str, params: ApprovalRespondParams | AskRespondParams) -> None:
        try:
            await self.rpc.call(method, params)
        except RpcError as exc:
            if exc.code != "already_resolved":  # another client answered first
                print_error(self.notes, exc.code, exc.message)

    def _status(self, payload: OperationStatusChanged) -> ExitCode | None:
        status = payload.status
        if status == OperationStatus.WAITING_FOR_HUMAN:
            if any(w["operationId"] == payload.operation_id for w in self.waiting):
                return ExitCode.NEEDS_HUMAN
            return None
        if payload.operation_id != self.operation_id:
            return None
        if status == OperationStatus.DONE:
            return ExitCode.DONE
        if status == OperationStatus.CANCELLED and self.cancelling:
            return ExitCode.INTERRUPTED
        if status.has_stopped:  # error, cancelled (not by us), interrupted
            error = self.error or (str(payload.code or status), payload.reason or f"the turn ended: {status}")
            raise _Stop(ExitCode.NO_PROVIDER if error[0] == "no_provider" else ExitCode.FAILED, error)
        return None

    # -- the whole run --------------------------------------------------------------------------------------------

    async def main(self) -> int:
        stdout = SafeConsole(file=self.out, soft_wrap=True)
        view = TurnView(stdout, None, notes=self.notes)
        error: tuple[str, str] | None = None
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, self.interrupts.put_nowait, None)
        try:
            await self.connect()
            self.session = await self.open_session()
            self.notes.print(Text(f"session {self.session.id} · {self.session.workspace}", style="dim"))
            code = await self.turn(view)
        except _Stop as stop:
            code, error = stop.code, stop.error
        except RpcError as exc:
            error = (exc.code, exc.message)
            code = (
                ExitCode.NO_PROVIDER
                if exc.code == "no_provider"
                else ExitCode.USAGE
                if exc.code in _USAGE_CODES
                else ExitCode.FAILED
            )
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)
            if self.client is not None:
                await self.client.close()
        if error is not None:
            print_error(self.notes, *error)
        if code == ExitCode.NEEDS_HUMAN and self.session is not None:
            for item in self.waiting:
                self.notes.print(Text(f"waiting for you: {item['what']}", style="yellow"))
            self.notes.print(
                Text(f"Nobody could answer. Continue with: cowork --resume {self.session.id}, then /continue", "yellow")
            )
        if self.options.json:
            self.emit(
                outcome_line(
                    code,
                    session_id=self.session.id if self.session else None,
                    operation_id=self.operation_id,
                    text=self.answer,
                    error=error,
                    waiting=self.waiting if code == ExitCode.NEEDS_HUMAN else [],
                )
            )
        return int(code)


def outcome_line(
    code: ExitCode,
    *,
    session_id: str | None = None,
    operation_id: str | None = None,
    text: str | None = None,
    error: tuple[str, str] | None = None,
    waiting: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The last line of `cowork run --json`: how the run ended."""
    return {
        "outcome": _OUTCOME[code],
        "exitCode": int(code),
        "sessionId": session_id,
        "operationId": operation_id,
        "text": text,
        "error": {"code": error[0], "message": error[1]} if error else None,
        "waiting": waiting or [],
    }


def run_once(options: RunOptions) -> int:
    """Run one turn; returns the exit code."""
    return asyncio.run(_Run(options).main())
