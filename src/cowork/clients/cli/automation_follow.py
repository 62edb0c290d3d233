"""Following an automation run as it goes: a line per step as it settles, a spinner on the running one, the approval
question when a step waits, and how the run ended.

Shared by `cowork automation run|resume|approve|reject` and the REPL's `/automation …`: each hands its connection's
`automation/run` notifications to `Context.updates`, and says whether someone can be asked (`Context.ask`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, assert_never

from pydantic import ValidationError
from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.spinner import Spinner
from rich.text import Text

from cowork.clients.automations import (
    approval_hint,
    duration,
    pending_text,
    run_heading,
    step_line,
)
from cowork.clients.connection import RpcClient, RpcError
from cowork.clients.format import clean
from cowork.protocol import AutomationRespondParams, AutomationRunInfo, AutomationRunsParams

__all__ = ["Context", "ExitCode", "ask_terminal", "follow", "outcome"]

_SETTLED = ("done", "failed", "skipped", "interrupted")
"""Step statuses printed as a line when a step reaches them (a wait is said by the approval panel)."""
_POLL_SECONDS = 2.0


class ExitCode:
    """`cowork automation`'s exit codes (docs/cli.md)."""

    OK = 0
    FAILED = 1
    USAGE = 2
    WAITING = 3
    INTERRUPTED = 130


@dataclass
class Context:
    """What an action works with: the connection, where it writes, and who can answer a question."""

    client: RpcClient
    out: Console
    """Results and a run's progress."""
    err: Console
    """Problems."""
    command: str
    """How hints name the commands: `cowork automation` or `/automation`."""
    ask: Callable[[str], Awaitable[str | None]] | None
    """Asks a person and returns the line (None: no answer, Ctrl-C); None when nobody can be asked (no terminal)."""
    updates: asyncio.Queue[AutomationRunInfo] = field(default_factory=asyncio.Queue)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    """Set to stop following (Ctrl-C in the REPL); the run goes on."""
    watching: str | None = None
    """The run being followed, to name when the user stops watching."""

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "automation/run":
            with contextlib.suppress(ValidationError):  # a newer server's shape: the poll below still follows it
                self.updates.put_nowait(AutomationRunInfo.model_validate(params))


async def ask_terminal(prompt: str) -> str | None:
    """One line from the terminal (prompt_toolkit: Ctrl-C answers nothing instead of killing the process)."""
    from prompt_toolkit import PromptSession

    try:
        return await PromptSession[str]().prompt_async(prompt)
    except (KeyboardInterrupt, EOFError):
        return None


class _Progress:
    """The steps printed so far (each once per status it settles in) and a spinner per running step."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._shown: dict[str, str] = {}
        self._spinners: dict[str, Spinner] = {}
        self._run: AutomationRunInfo | None = None
        self._live = Live(self, console=console, transient=True, refresh_per_second=8) if console.is_terminal else None

    def __rich__(self) -> Group:
        run = self._run
        if run is None:
            return Group()
        now = datetime.now(UTC)
        lines = []
        for step in run.steps:
            if step.status != "running":
                continue
            took = f"  {duration((now - step.started_at).total_seconds())}" if step.started_at else ""
            spinner = self._spinners.setdefault(step.step_id, Spinner("dots", style="cyan"))
            spinner.update(text=Text.assemble((clean(step.step_id), "bold"), f"  {clean(step.type)}", (took, "dim")))
            lines.append(spinner)
        if not lines and run.status == "running":
            lines.append(self._spinners.setdefault("", Spinner("dots", text=Text("running…", style="dim"))))
        return Group(*lines)

    def show(self, run: AutomationRunInfo) -> None:
        self._run = run
        for step in run.steps:
            if step.status in _SETTLED and self._shown.get(step.step_id) != step.status:
                self._shown[step.step_id] = step.status
                self._console.print(step_line(step, width=self._console.width))
        if self._live is not None:
            self._live.refresh()

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        if self._live is None:
            yield
            return
        self._live.start()
        try:
            yield
        finally:
            self._live.stop()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The spinner off while a question is asked."""
        if self._live is None or not self._live.is_started:
            yield
            return
        self._live.stop()
        try:
            yield
        finally:
            self._live.start()


async def follow(ctx: Context, run: AutomationRunInfo) -> AutomationRunInfo:
    """Show `run` until it ends, waits for what cannot be answered here, is interrupted, or `ctx.stop` is set.

    A step waiting for approval is asked about once when `ctx.ask` can; the answer goes to `automation/respond`.
    """
    ctx.watching = run.id
    progress = _Progress(ctx.out)
    asked: set[str] = set()
    with progress.running():
        while True:
            progress.show(run)
            if run.status != "running" and run.status != "waiting_for_human":
                return run
            if run.status == "waiting_for_human":
                step = run.pending.step_id if run.pending is not None else ""
                if ctx.ask is None or (run.pending is not None and run.pending.session_id):
                    return run  # nobody here to ask, or an agent step's approval, answered in its session
                if step not in asked:
                    asked.add(step)
                    with progress.paused():
                        answer = await _ask(ctx, run)
                    if answer is None:
                        return run
                    run = await _respond(ctx, run, answer)
                    continue
            update = await _next(ctx, run)
            if update is None:
                return run
            run = update


async def _ask(ctx: Context, run: AutomationRunInfo) -> bool | None:
    """Approve (True), reject (False), or leave it waiting (None: Ctrl-C, end of input)."""
    assert ctx.ask is not None
    title = Text(f"{clean(run.automation_name)} waits for your approval", style="bold yellow")
    ctx.out.print(Panel(pending_text(run), title=title, border_style="yellow", expand=False))
    while True:
        answer = await ctx.ask("Run this step? [y/n] › ")
        if answer is None:
            return None
        word = answer.strip().lower()
        if word in ("y", "yes"):
            return True
        if word in ("n", "no"):
            return False
        ctx.out.print(Text("Answer y (run it) or n (reject it: the run fails); Ctrl-C leaves it waiting.", "dim"))


async def _respond(ctx: Context, run: AutomationRunInfo, approve: bool) -> AutomationRunInfo:
    try:
        raw = await ctx.client.call("automation/respond", AutomationRespondParams(run_id=run.id, approve=approve))
    except RpcError as exc:
        if exc.code != "not_resumable":
            raise
        # Answered elsewhere first (another client): follow what happens next.
        ctx.out.print(Text(f"The run no longer waits for this answer: {clean(exc.message)}", style="dim"))
        return run
    ctx.out.print(Text("✓ approved" if approve else "✗ rejected", style="green" if approve else "red"))
    return AutomationRunInfo.model_validate(raw)


async def _next(ctx: Context, run: AutomationRunInfo) -> AutomationRunInfo | None:
    """The run's next state: from its notifications, or asked for when none came for a while (None: stop)."""
    deadline = time.monotonic() + _POLL_SECONDS
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        got = asyncio.ensure_future(ctx.updates.get())
        stopped = asyncio.ensure_future(ctx.stop.wait())
        done, _ = await asyncio.wait({got, stopped}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        for waiter in (got, stopped):
            if waiter not in done:
                waiter.cancel()
        if stopped in done:
            if got in done:  # taken off the queue as the stop came: put back for whoever reads on
                ctx.updates.put_nowait(got.result())
            return None
        if got in done and got.result().id == run.id:
            return got.result()
    raw = await ctx.client.call("automation/runs", AutomationRunsParams(run_id=run.id, limit=1))
    runs = raw.get("runs") if isinstance(raw, dict) else None
    return AutomationRunInfo.model_validate(runs[0]) if runs else run


def outcome(ctx: Context, run: AutomationRunInfo) -> int:
    """Say how the followed run stands, and the exit code that goes with it."""
    status = run.status
    match status:
        case "done":
            ctx.out.print(run_heading(run))
            if run.result is not None:
                result = run.result if isinstance(run.result, str) else json.dumps(run.result, indent=2)
                ctx.out.print(Text.assemble(("result: ", "dim"), clean(result)))
            return ExitCode.OK
        case "failed" | "cancelled":
            ctx.out.print(run_heading(run))
            said = {(s.error.code, s.error.message) for s in run.steps if s.error is not None}
            if run.error is not None and (run.error.code, run.error.message) not in said:
                ctx.err.print(Text(f"{clean(run.error.code)}: {clean(run.error.message)}", style="red"))
            return ExitCode.FAILED
        case "waiting_for_human":
            title = Text(f"{clean(run.automation_name)} waits for your approval", style="bold yellow")
            ctx.out.print(run_heading(run))
            ctx.out.print(Panel(pending_text(run), title=title, border_style="yellow", expand=False))
            ctx.out.print(Text(f"Answer it: {approval_hint(run, ctx.command)}", style="yellow"), soft_wrap=True)
            return ExitCode.WAITING
        case "interrupted":
            ctx.out.print(run_heading(run))
            ctx.out.print(
                Text(f"A restart cut it short; {ctx.command} resume {run.id} runs the cut step again.", "yellow")
            )
            return ExitCode.WAITING
        case "running":
            if ctx.stop.is_set():
                ctx.out.print(Text(f"Stopped watching; the run goes on: {ctx.command} run-info {run.id}", "dim"))
                return ExitCode.INTERRUPTED
            ctx.out.print(run_heading(run))
            ctx.out.print(Text(f"{ctx.command} run-info {run.id} shows how it goes on", style="dim"))
            return ExitCode.OK
        case _:
            assert_never(status)
