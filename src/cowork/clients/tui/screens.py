"""Modal dialogs: approve a tool call, answer a question, pick a model, confirm a deletion, restore files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from cowork.clients import format as fmt
from cowork.protocol import ModelListResult, PendingApproval, PendingQuestion

__all__ = ["ApprovalAnswer", "ApprovalScreen", "ConfirmScreen", "ModelPickerScreen", "QuestionScreen", "RestoreScreen"]


@dataclass(frozen=True)
class ApprovalAnswer:
    approved: bool
    message: str | None = None
    scope: Literal["once", "session"] = "once"


_DIFF_ARGUMENTS = ("oldString", "newString", "content")
"""Arguments the diff shows better than their text."""


class ApprovalScreen(ModalScreen[ApprovalAnswer | None]):
    """A tool call waits for a yes or no (or "allow for this session"). Dismissed with None when another client
    answered first. A dangerous call is red with its whole reason, and focus starts on Reject so Enter rejects."""

    BINDINGS = [
        Binding("ctrl+y", "approve", "Approve"),
        Binding("ctrl+r", "reject", "Reject"),
        Binding("ctrl+t", "allow_session", "Allow for this session", show=False),
    ]

    def __init__(self, request: PendingApproval) -> None:
        super().__init__(classes="dialog-screen")
        self.request = request

    def compose(self) -> ComposeResult:
        r = self.request
        with Vertical(id="dialog", classes="approval dangerous" if r.dangerous else "approval"):
            if r.dangerous:
                title = Text.assemble(("Dangerous — approve ", "bold red"), (r.name, "bold"), ("?", "bold red"))
            else:
                title = Text.assemble(("Approve ", "bold yellow"), (r.name, "bold"), ("?", "bold yellow"))
            yield Label(title)
            if r.rerun:
                yield Label(Text("It was interrupted by a restart; approving runs it again.", style="yellow"))
            if r.reason:
                yield Static(Text(fmt.clean(r.reason), style="bold red" if r.dangerous else "italic"), id="reason")
            arguments = r.arguments
            if r.preview:
                arguments = {k: v for k, v in arguments.items() if k not in _DIFF_ARGUMENTS}
            with VerticalScroll(id="arguments"):
                if arguments:
                    yield Static(Text(json.dumps(arguments, indent=2, ensure_ascii=False)))
                if r.preview:
                    yield Static(fmt.diff_text(r.preview, max_lines=400), id="preview")
            yield Input(placeholder="reason for rejecting (optional, told to the model)", id="reject-reason")
            with Horizontal(classes="buttons"):
                if r.session_allow:
                    yield Button(f"Allow for session: {r.session_allow}", id="allow-session", variant="primary")
                yield Button("Approve", id="approve", variant="warning" if r.dangerous else "success")
                yield Button("Reject", id="reject", variant="error")

    def on_mount(self) -> None:
        self.query_one("#reject" if self.request.dangerous else "#approve", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "approve":
            self.action_approve()
        elif event.button.id == "allow-session":
            self.action_allow_session()
        else:
            self.action_reject()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_reject()

    def action_approve(self) -> None:
        self.dismiss(ApprovalAnswer(True))

    def action_allow_session(self) -> None:
        if self.request.session_allow:
            self.dismiss(ApprovalAnswer(True, scope="session"))

    def action_reject(self) -> None:
        reason = self.query_one("#reject-reason", Input).value.strip()
        self.dismiss(ApprovalAnswer(False, reason or None))


class QuestionScreen(ModalScreen[str | None]):
    """The agent asks something (pick an option or type an answer); a guardrail asks whether to go on."""

    def __init__(self, request: PendingQuestion) -> None:
        super().__init__(classes="dialog-screen")
        self.request = request
        options = list(request.options)
        if request.kind == "guardrail" and not options:
            options = ["continue", "stop"]
        self.options = options

    def compose(self) -> ComposeResult:
        q = self.request
        guardrail = q.kind == "guardrail"
        with Vertical(id="dialog", classes="guardrail" if guardrail else "question"):
            title = "Keep going?" if guardrail else "Question"
            yield Label(Text(title, style="bold yellow" if guardrail else "bold cyan"))
            yield Static(Text(q.question), id="question-text")
            if self.options:
                yield OptionList(*[Option(o, id=str(i)) for i, o in enumerate(self.options)], id="options")
            if not guardrail:
                placeholder = "or type another answer and press Enter" if self.options else "your answer"
                yield Input(placeholder=placeholder, id="answer")

    def on_mount(self) -> None:
        if self.options:
            self.query_one("#options", OptionList).focus()
        else:
            self.query_one("#answer", Input).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.options[event.option_index])

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())


class ModelPickerScreen(ModalScreen[str | None]):
    """`model/list` as a list: `auto` (the router picks) and every model of a connected provider."""

    BINDINGS = [Binding("escape", "cancel", "Close")]

    def __init__(self, models: ModelListResult) -> None:
        super().__init__(classes="dialog-screen")
        self.models = models

    def compose(self) -> ComposeResult:
        m = self.models
        current = "auto" if m.auto else f"{m.current_provider}:{m.current_model}"
        configured = {p.id for p in m.providers if p.configured}
        options = [Option(Text.assemble(("auto", "bold"), ("  the router picks per turn", "dim")), id="auto")]
        seen: set[str] = set()
        for model in m.models:
            if model.provider not in configured:
                continue
            ref = f"{model.provider}:{model.id}"
            seen.add(ref)
            extra = f"  [{model.tier}]" if model.tier else ""
            extra += "  (running)" if model.source == "server" else ""
            options.append(Option(Text.assemble((ref, "bold" if ref == current else ""), (extra, "dim")), id=ref))
        for provider in m.providers:
            ref = f"{provider.id}:{provider.default_model}"
            if provider.configured and provider.default_model and ref not in seen:
                options.append(Option(Text(ref), id=ref))
        with Vertical(id="dialog", classes="models"):
            yield Label(Text.assemble(("Model", "bold"), (f"  now: {current}", "dim")))
            if len(options) == 1:
                yield Label(Text("No provider is connected: `cowork` → /connect, or set an API key.", style="yellow"))
            yield OptionList(*options, id="models")

    def on_mount(self) -> None:
        self.query_one("#models", OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """A destructive action asks first: the focus starts on Cancel, so Enter (or Escape) changes nothing."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, action: str) -> None:
        super().__init__(classes="dialog-screen")
        self.question = question
        self.action_label = action

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="approval dangerous"):
            yield Static(Text(self.question, style="bold red"), id="confirm-text")
            with Horizontal(classes="buttons"):
                yield Button(self.action_label, id="confirm", variant="error")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm")

    def action_cancel(self) -> None:
        self.dismiss(False)


class RestoreScreen(ModalScreen[str | None]):
    """`/undo` and `/rewind`: what restoring changes (the diff), a warning about files changed outside Cowork since,
    and a button per choice. Dismissed with the chosen button's id, or None: the focus starts on Cancel, so Enter (or
    Escape) changes nothing."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, diff: Text, warning: Text | None, choices: list[tuple[str, str]]) -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.diff = diff
        self.warning = warning
        self.choices = choices
        """Each button's id (what the dialog is dismissed with) and label."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="approval dangerous" if self.warning is not None else "approval"):
            yield Static(Text(self.title_text, style="bold"), id="question-text")
            with VerticalScroll(id="arguments"):
                yield Static(self.diff, id="restore-diff")
            if self.warning is not None:
                yield Static(self.warning, id="reason")
            with Horizontal(classes="buttons"):
                for choice, label in self.choices:
                    yield Button(label, id=choice, variant="warning")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None if event.button.id == "cancel" else event.button.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
