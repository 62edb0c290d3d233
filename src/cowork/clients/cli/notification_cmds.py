"""The REPL's side of automations and proactive notifications.

A `notification/delivered` and a run that starts waiting for approval (`automation/run`) each print one line above
the prompt (or above a running turn); `/notifications [accept|dismiss|snooze|expand ID]` lists and answers them;
`/automations` lists the automations and `/automation ACTION …` takes the words of `cowork automation ACTION …`,
running the same actions (`automation_cmds`) on the REPL's connection.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.application.current import set_app
from pydantic import ValidationError
from rich.console import RenderableType
from rich.text import Text

from cowork.clients.automation_args import SlashUsage, slash_parser
from cowork.clients.automation_listings import notifications_table
from cowork.clients.automations import APPROVAL_NOTE_DELAY, WaitTracker, notification_line, waiting_line
from cowork.clients.format import clean
from cowork.protocol import (
    AutomationListResult,
    AutomationRunInfo,
    NotificationInfo,
    NotificationListParams,
    NotificationListResult,
    NotificationRespondParams,
)

from .automation_cmds import run_action
from .automation_follow import Context
from .keys import KeyReader, LineEditor

if TYPE_CHECKING:
    from .repl import Repl

__all__ = [
    "NOTIFICATION_VERBS",
    "ReplAutomations",
    "run_automation_command",
    "run_notifications_command",
]

NOTIFICATION_VERBS = ("accept", "dismiss", "snooze", "expand")
_NOTIFICATIONS_USAGE = (
    "Usage: /notifications · /notifications accept|dismiss|expand ID · /notifications snooze ID [MINUTES]"
)
_DONE = {"accept": "Accepted", "dismiss": "Dismissed", "snooze": "Snoozed", "expand": "Expanded"}


class ReplAutomations:
    """What the REPL follows of automations and notifications between commands, and the lines it prints for them."""

    def __init__(self, repl: Repl) -> None:
        self._repl = repl
        self.context: Context | None = None
        """The `/automation` command running now: it gets the runs' updates."""
        self.waits = WaitTracker()
        self.asking: PromptSession[str] | None = None
        """The question `/automation` asks now: a line goes above it as above the prompt."""
        self._printing: set[asyncio.Future[None]] = set()
        self.names: list[str] = []
        """Automation names, for tab completion."""
        self.run_ids: list[str] = []
        """Runs seen (newest last), for tab completion."""
        self.notification_ids: list[str] = []

    def on_notification(self, method: str, params: dict[str, Any]) -> bool:
        """Take an automation or notification message; False when `method` is neither."""
        if method == "notification/delivered":
            try:
                note = NotificationInfo.model_validate(params)
            except ValidationError:
                return True  # a newer server's shape: nothing sensible to show
            self._remember(self.notification_ids, note.id)
            if note.kind == "automation_approval":
                asyncio.get_running_loop().call_later(APPROVAL_NOTE_DELAY, self._approval_note, note)
            else:
                self.announce(notification_line(note, width=self._repl.console.width))
            return True
        if method != "automation/run":
            return False
        if self.context is not None:
            self.context.on_notification(method, params)
        try:
            run = AutomationRunInfo.model_validate(params)
        except ValidationError:
            return True
        self._remember(self.run_ids, run.id)
        followed = self.context is not None and self.context.watching == run.id and self.context.ask is not None
        if self.waits.run_changed(run, say=not followed):  # a followed run asks in place
            self.announce(waiting_line(run, "/automation", width=self._repl.console.width))
        return True

    def _approval_note(self, note: NotificationInfo) -> None:
        if self.waits.approval_note(note):
            self.announce(notification_line(note, width=self._repl.console.width))

    @staticmethod
    def _remember(seen: list[str], value: str) -> None:
        if value in seen:
            seen.remove(value)
        seen.append(value)
        del seen[:-50]

    def announce(self, line: RenderableType) -> None:
        """Print `line` above the prompt (or the question) shown now, which is drawn again below it; else where the
        output is (a running turn's live view keeps it above itself)."""
        repl = self._repl
        shown = [s.app for s in (repl.prompt, self.asking) if s is not None and s.app.is_running]
        if not shown:
            repl.console.print(line)
            return
        with set_app(shown[-1]):  # run_in_terminal finds the prompt through the context it is called in
            printing = asyncio.ensure_future(run_in_terminal(lambda: repl.console.print(line)))
        self._printing.add(printing)
        printing.add_done_callback(self._printing.discard)

    async def load_names(self) -> None:
        result = AutomationListResult.model_validate(await self._repl.rpc.call("automation/list", {}))
        self.names = [a.name for a in result.automations]


async def run_automation_command(repl: Repl, arg: str) -> None:
    """`/automation ACTION …` (nothing: `list`), with `cowork automation`'s words and behaviour."""
    try:
        words = shlex.split(arg)
    except ValueError as exc:
        repl.console.print(Text(f"/automation: {exc}", style="yellow"))
        return
    try:
        args = slash_parser().parse_args(words or ["list"])
    except SlashUsage as exc:
        repl.console.print(Text(str(exc), style="yellow"))
        return
    tracker = repl.automations
    stop = asyncio.Event()
    keys = KeyReader(LineEditor(on_submit=lambda _text: None, on_interrupt=stop.set))

    async def ask(prompt: str) -> str | None:
        tracker.asking = PromptSession()
        try:
            with keys.paused():
                return await tracker.asking.prompt_async(prompt)
        except (KeyboardInterrupt, EOFError):
            return None
        finally:
            tracker.asking = None

    ctx = Context(
        client=repl.rpc,
        out=repl.console,
        err=repl.console,
        command="/automation",
        ask=ask if sys.stdin.isatty() else None,
        stop=stop,
    )
    tracker.context = ctx
    keys.start()  # Ctrl-C stops following a run (it goes on), as it cancels a turn
    try:
        await run_action(ctx, args)
    finally:
        keys.stop()
        tracker.context = None
    if args.action in ("list", "import", "delete"):
        await tracker.load_names()


async def run_notifications_command(repl: Repl, arg: str) -> None:
    """`/notifications`: the recent ones; `/notifications VERB ID`: answer one."""
    words = arg.split()
    if not words:
        raw = await repl.rpc.call("notification/list", NotificationListParams(limit=20))
        notes = NotificationListResult.model_validate(raw).notifications
        if not notes:
            repl.console.print(Text("No notifications yet.", style="dim"))
            return
        repl.automations.notification_ids = [n.id for n in reversed(notes)]
        repl.console.print(notifications_table(notes))
        repl.console.print(Text("/notifications accept|dismiss|snooze ID answers one", style="dim"))
        return
    verb = words[0].lower()
    minutes = words[2] if len(words) == 3 and verb == "snooze" else None
    if verb not in NOTIFICATION_VERBS or len(words) != (3 if minutes else 2) or (minutes and not minutes.isdigit()):
        repl.console.print(Text(_NOTIFICATIONS_USAGE, style="yellow"))
        return
    params = NotificationRespondParams.model_validate(
        {"id": words[1], "response": verb, **({"snoozeMinutes": int(minutes)} if minutes else {})}
    )
    note = NotificationInfo.model_validate(await repl.rpc.call("notification/respond", params))
    later = f" for {params.snooze_minutes} min" if verb == "snooze" else ""
    repl.console.print(Text.assemble(f"{_DONE[verb]}{later}: ", (clean(note.title), "bold")))
    if verb == "expand" and note.body.strip():
        repl.console.print(Text(clean(note.body)))
