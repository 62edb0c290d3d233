"""`/trace [ID]` in the TUI: what the session's last turn did (or trace or operation ID's), span by span, in a
scrollable dialog that Esc or q closes (the focus goes back to the prompt)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pydantic import ValidationError
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from cowork.clients.connection import RpcError
from cowork.clients.trace_view import NO_TRACE_YET, trace_params, trace_text
from cowork.protocol import TraceGetResult

if TYPE_CHECKING:
    from .app import CoworkApp

__all__ = ["TraceScreen", "show_trace"]

_MAX_WIDTH = 160


class TraceScreen(ModalScreen[None]):
    """A trace as `cowork.clients.trace_view` writes it, scrolled with the arrows and Page Up/Down."""

    # Its own ids: the app's `#dialog` rules (80 columns wide) outrank a screen's default CSS.
    DEFAULT_CSS = f"""
    TraceScreen {{ align: center middle; }}
    #trace-dialog {{ width: {_MAX_WIDTH}; max-width: 98%; height: auto; max-height: 90%; border: thick $accent;
                     background: $surface; padding: 0 1; }}
    #trace-dialog > Label {{ margin: 0 0 1 0; }}
    #trace-body {{ height: auto; max-height: 100%; background: $boost; }}
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self, title: str, trace: TraceGetResult, width: int) -> None:
        super().__init__()
        self.title_text = title
        self.trace = trace
        self.width = width
        """Columns the trace's lines are laid out for (the bar takes what is left)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="trace-dialog"):
            yield Label(Text.assemble((self.title_text, "bold"), ("   Esc or q closes", "dim")))
            with VerticalScroll(id="trace-body"):
                yield Static(trace_text(self.trace, self.width), id="trace-text")

    def on_mount(self) -> None:
        self.query_one("#trace-body", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)


async def show_trace(app: CoworkApp, arg: str) -> None:
    """Ask for the trace and show it; nothing there (no message sent yet, none stored) is a note in the chat."""
    try:
        params = trace_params(arg, app.session.id if app.session is not None else None)
    except ValidationError:
        await app.chat.note(Text("Usage: /trace (the last turn), or /trace TRACE-ID or OPERATION-ID", style="yellow"))
        return
    if params is None:
        await app.chat.note(Text(NO_TRACE_YET, style="dim"))
        return
    try:
        trace: TraceGetResult = await app.rpc_request("trace/get", params)
    except RpcError as exc:
        if exc.code != "trace_not_found":
            app.notify(exc.message, title=exc.code, severity="error")
        else:
            said = NO_TRACE_YET if not arg and not app.state.messages else exc.message
            await app.chat.note(Text(said, style="dim"))
        return
    except ConnectionError as exc:
        app.notify(str(exc), title="disconnected", severity="error")
        return
    # The dialog's inside: its width less the border, the padding and the scroll bar.
    width = min(_MAX_WIDTH, app.size.width * 98 // 100) - 6
    title = f"Trace of {arg}" if arg else "What the last turn did"

    def back_to_the_prompt(_: None) -> None:
        app.query_one("#prompt", Input).focus()

    app.push_screen(TraceScreen(title, trace, width), back_to_the_prompt)
