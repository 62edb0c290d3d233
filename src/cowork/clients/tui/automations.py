"""The TUI's side of automations and proactive notifications.

A `notification/delivered` becomes a toast whose severity is its tier; a run that waits for approval a toast naming
`/automation approve RUN`; a run started or answered here a toast when it ends. `/notifications`, `/automations` and
`/automation ACTION …` (the words of `cowork automation`; the file actions stay with the command line) show their
answers as notes in the chat.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from rich.console import Group, RenderableType
from rich.text import Text

from cowork.clients.automation_args import SlashUsage, slash_parser
from cowork.clients.automation_listings import (
    automation_detail,
    automations_lines,
    notifications_lines,
    run_detail,
    runs_lines,
)
from cowork.clients.automations import (
    APPROVAL_NOTE_DELAY,
    FINAL,
    TIER_SEVERITY,
    WaitTracker,
    approval_hint,
    input_types,
    notification_hint,
    parse_inputs,
    run_heading,
    waiting_run,
)
from cowork.clients.format import clean, shorten, summarize_arguments
from cowork.protocol import (
    AutomationIdParams,
    AutomationInfo,
    AutomationListResult,
    AutomationRespondParams,
    AutomationRunIdParams,
    AutomationRunInfo,
    AutomationRunParams,
    AutomationRunsParams,
    AutomationRunsResult,
    NotificationInfo,
    NotificationListParams,
    NotificationListResult,
    NotificationRespondParams,
)

if TYPE_CHECKING:
    from .app import CoworkApp

__all__ = ["TuiAutomations", "automation_command", "notifications_command"]

_COMMAND = "/automation"
_ELSEWHERE = ("import", "export", "delete")
_NOTIFICATIONS_USAGE = "Usage: /notifications · /notifications accept|dismiss|snooze|expand ID"


class TuiAutomations:
    """Turns the server's automation and notification messages into toasts."""

    def __init__(self, app: CoworkApp) -> None:
        self._app = app
        self.waits = WaitTracker()
        self.watched: set[str] = set()
        """Runs started or answered here: a toast says how each ends."""

    def handle(self, method: str, params: dict[str, Any]) -> None:
        try:
            if method == "notification/delivered":
                self._notification(NotificationInfo.model_validate(params))
            elif method == "automation/run":
                self._run(AutomationRunInfo.model_validate(params))
        except ValidationError:
            pass  # a newer server's shape: nothing sensible to show

    def _notification(self, note: NotificationInfo) -> None:
        if note.kind == "automation_approval":
            self._app.set_timer(APPROVAL_NOTE_DELAY, lambda: self._approval_note(note))
        else:
            self._toast(note)

    def _approval_note(self, note: NotificationInfo) -> None:
        if self.waits.approval_note(note):
            self._toast(note)

    def _toast(self, note: NotificationInfo) -> None:
        body = clean(note.body.strip())
        hint = notification_hint(note)
        title = clean(note.title) + (f" (×{note.count})" if note.count > 1 else "")
        # Server text: never markup (a title or body with [brackets] shows as typed).
        self._app.notify(
            f"{body}\n{hint}" if body else hint,
            title=shorten(title, 80),
            severity=TIER_SEVERITY.get(note.tier, "information"),
            timeout=30 if note.tier == "urgent" else 12,
            markup=False,
        )

    def _run(self, run: AutomationRunInfo) -> None:
        if self.waits.run_changed(run):
            call = ""
            if run.pending is not None:
                call = f": {run.pending.tool}({summarize_arguments(run.pending.arguments, 60)})"
            self._app.notify(
                f"Run {run.id} waits for your approval{clean(call)}\n{approval_hint(run, _COMMAND)}",
                title=f"automation {clean(run.automation_name)}",
                severity="warning",
                timeout=60,
                markup=False,
            )
        elif run.status in FINAL and run.id in self.watched:
            self.watched.discard(run.id)
            error = f"\n{clean(run.error.code)}: {clean(run.error.message)}" if run.error is not None else ""
            self._app.notify(
                run_heading(run).plain + error,
                title=f"automation {clean(run.automation_name)}",
                severity="information" if run.status == "done" else "error",
                markup=False,
            )


async def notifications_command(app: CoworkApp, arg: str) -> None:
    """`/notifications`: the recent ones as a note; `/notifications VERB ID`: answer one."""
    words = arg.split()
    if not words:
        raw: NotificationListResult | None = await app.guarded(
            app.rpc_request("notification/list", NotificationListParams(limit=20))
        )
        if raw is not None:
            listed = notifications_lines(raw.notifications) if raw.notifications else Text("No notifications yet.")
            await app.chat.note(listed)
        return
    if len(words) != 2 or words[0] not in ("accept", "dismiss", "snooze", "expand"):
        await app.chat.note(Text(_NOTIFICATIONS_USAGE, style="yellow"))
        return
    params = NotificationRespondParams.model_validate({"id": words[1], "response": words[0]})
    note: NotificationInfo | None = await app.guarded(app.rpc_request("notification/respond", params))
    if note is not None:
        done = {"accept": "Accepted", "dismiss": "Dismissed", "snooze": "Snoozed", "expand": "Expanded"}[words[0]]
        shown = Text.assemble(f"{done}: ", (clean(note.title), "bold"))
        if words[0] == "expand" and note.body.strip():
            shown.append("\n" + clean(note.body))
        await app.chat.note(shown)


async def automation_command(app: CoworkApp, arg: str) -> None:
    """`/automation ACTION …` (nothing: `list`), read as `cowork automation` reads it."""
    try:
        args = slash_parser().parse_args(shlex.split(arg) or ["list"])
    except (SlashUsage, ValueError) as exc:
        await app.chat.note(Text(str(exc), style="yellow"))
        return
    if args.action in _ELSEWHERE:
        await app.chat.note(Text(f"{args.action}: in a shell, cowork automation {args.action} …", style="yellow"))
        return
    shown = await app.guarded(_ACTIONS[args.action](app, args))
    if shown is not None:
        await app.chat.note(shown)


async def _list(app: CoworkApp, _args: argparse.Namespace) -> RenderableType:
    result: AutomationListResult = await app.rpc_request("automation/list", None)
    if not result.automations:
        return Text("No automations yet: cowork automation import FILE saves one from a flow file.", style="dim")
    return automations_lines(result.automations)


async def _show(app: CoworkApp, args: argparse.Namespace) -> RenderableType:
    automation: AutomationInfo = await app.rpc_request("automation/get", AutomationIdParams(id=args.name))
    runs: AutomationRunsResult = await app.rpc_request(
        "automation/runs", AutomationRunsParams(id=automation.id, limit=5)
    )
    return Group(*automation_detail(automation, runs.runs, narrow=True))


async def _run(app: CoworkApp, args: argparse.Namespace) -> RenderableType:
    automation: AutomationInfo = await app.rpc_request("automation/get", AutomationIdParams(id=args.name))
    try:
        inputs = parse_inputs(args.input, input_types(automation))
    except ValueError as exc:
        return Text(str(exc), style="yellow")
    params = AutomationRunParams(id=automation.id, inputs=inputs)
    run: AutomationRunInfo = await app.rpc_request("automation/run", params)
    app.automations.watched.add(run.id)
    return Text(f"Started {clean(run.automation_name)} (run {run.id}); a notification says how it ends.", style="dim")


async def _runs(app: CoworkApp, args: argparse.Namespace) -> RenderableType:
    result: AutomationRunsResult = await app.rpc_request(
        "automation/runs", AutomationRunsParams(id=args.name, limit=args.limit)
    )
    return runs_lines(result.runs) if result.runs else Text("No runs yet.", style="dim")


async def _run_info(app: CoworkApp, args: argparse.Namespace) -> RenderableType:
    result: AutomationRunsResult = await app.rpc_request("automation/runs", AutomationRunsParams(run_id=args.run_id))
    if not result.runs:
        return Text(f"No run {args.run_id} (/automation runs lists them).", style="yellow")
    return Text("\n").join(run_detail(result.runs[0], _COMMAND))


async def _switch(app: CoworkApp, args: argparse.Namespace) -> RenderableType:
    automation: AutomationInfo = await app.rpc_request(f"automation/{args.action}", AutomationIdParams(id=args.name))
    return Text(f"{clean(automation.name)} {'enabled' if automation.enabled else 'disabled'}", style="dim")


async def _run_change(app: CoworkApp, args: argparse.Namespace) -> RenderableType:
    """`cancel`, `resume`, `approve`, `reject`: the run as the server has it now; a toast says how it ends."""
    if args.action in ("approve", "reject"):
        run_id = args.run_id
        if run_id is None:
            recent: AutomationRunsResult = await app.rpc_request("automation/runs", AutomationRunsParams(limit=100))
            try:
                run_id = waiting_run(recent.runs, _COMMAND)
            except ValueError as exc:
                return Text(f"{args.action}: {exc}", style="yellow")
        params: Any = AutomationRespondParams(run_id=run_id, approve=args.action == "approve")
        run: AutomationRunInfo = await app.rpc_request("automation/respond", params)
    else:
        run = await app.rpc_request(f"automation/{args.action}", AutomationRunIdParams(run_id=args.run_id))
    if run.status not in FINAL:
        app.automations.watched.add(run.id)
    said = {"approve": "Approved", "reject": "Rejected", "cancel": "Cancelled", "resume": "Resumed"}[args.action]
    if run.status in FINAL:
        return Text.assemble(f"{said}: ", run_heading(run))
    return Text(f"{said}: {clean(run.automation_name)} (run {run.id}); a notification says how it ends.", "dim")


_ACTIONS: dict[str, Callable[[CoworkApp, argparse.Namespace], Awaitable[RenderableType]]] = {
    "list": _list,
    "show": _show,
    "run": _run,
    "runs": _runs,
    "run-info": _run_info,
    "enable": _switch,
    "disable": _switch,
    "cancel": _run_change,
    "resume": _run_change,
    "approve": _run_change,
    "reject": _run_change,
}
"""Every action of `cowork automation` but the file ones (`_ELSEWHERE`)."""
