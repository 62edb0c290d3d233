"""Slash commands about models and money: /connect, /disconnect, /provider, /reasoning, /usage, /budget, /retry."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from rich.table import Table
from rich.text import Text

from cowork.protocol import (
    BudgetSetParams,
    BudgetSetResult,
    BudgetStatus,
    ProviderConnectParams,
    ProviderDisconnectParams,
    ProviderStatusInfo,
    ProviderStatusParams,
    ProviderStatusResult,
    SessionUpdateParams,
    SessionUsageParams,
    SessionUsageResult,
    TurnRetryParams,
    TurnRetryResult,
    UsageSummaryParams,
    UsageSummaryResult,
    UsageTotals,
)

if TYPE_CHECKING:
    from .repl import Repl

__all__ = ["MODEL_COMMANDS", "run_model_command"]

MODEL_COMMANDS: dict[str, str] = {
    "/connect": "/connect PROVIDER [KEY or URL] [--no-verify] — save a key (asked for, hidden) or a server URL",
    "/disconnect": "/disconnect PROVIDER — forget a saved key and URL",
    "/provider": "/provider [ID] — which providers are connected, and what to do about the others",
    "/reasoning": "/reasoning off|minimal|low|medium|high|xhigh|max|default — how hard the model thinks",
    "/usage": "tokens and cost: this session, today, this week, this month; budgets",
    "/budget": "/budget [request=0.5 daily=10 weekly=50 monthly=200 warn=0.8 | reset] — spend caps (none: no cap)",
    "/retry": "try harder: run the last turn again on the next stronger model (shows the cost first)",
}

_STATE_STYLE = {
    "connected": "green",
    "unchecked": "dim",
    "missing_key": "yellow",
    "unreachable": "red",
    "auth_failed": "red",
    "error": "red",
}
_BUDGET_KEYS = {
    "request": "per_interaction_usd",
    "interaction": "per_interaction_usd",
    "daily": "daily_usd",
    "weekly": "weekly_usd",
    "monthly": "monthly_usd",
    "warn": "warn_at",
}
_CAP_OF = {"per_interaction_usd": "interaction", "daily_usd": "daily", "weekly_usd": "weekly", "monthly_usd": "monthly"}


def _money(usd: float | None) -> str:
    if usd is None:
        return "—"
    return f"${usd:,.4f}" if usd < 1 else f"${usd:,.2f}"


async def _secret(prompt: str) -> str:
    if not sys.stdin.isatty():
        return sys.stdin.readline().strip()
    session: PromptSession[str] = PromptSession()
    try:
        return (await session.prompt_async(prompt, is_password=True)).strip()
    except (KeyboardInterrupt, EOFError):
        return ""


async def connect(repl: Repl, arg: str) -> None:
    words = arg.split()
    verify = "--no-verify" not in words
    words = [w for w in words if w != "--no-verify"]
    if not words:
        repl.console.print("Usage: /connect PROVIDER [KEY or URL] [--no-verify]  (see /provider for the ids)")
        return
    provider, rest = words[0], words[1:]
    fields: dict[str, Any] = {"provider": provider, "verify": verify}
    for word in rest:
        fields["base_url" if word.startswith(("http://", "https://")) else "api_key"] = word
    if "api_key" not in fields and "base_url" not in fields:
        status: ProviderStatusResult = await repl.rpc.request(
            "provider/status", ProviderStatusParams(provider=provider, probe=False)
        )
        if status.providers and status.providers[0].local:
            repl.console.print(f"Usage: /connect {provider} URL (a local server needs its address, not a key)")
            return
        key = await _secret(f"API key for {provider} (hidden) › ")
        if not key:
            repl.console.print(Text("Nothing entered; nothing saved.", style="dim"))
            return
        fields["api_key"] = key
    info: ProviderStatusInfo = await repl.rpc.request("provider/connect", ProviderConnectParams.model_validate(fields))
    where = "saved" if verify else "saved without checking"
    repl.console.print(Text(f"✔ {info.name}: {where}. {info.message}", style="green"))


async def disconnect(repl: Repl, arg: str) -> None:
    if not arg:
        repl.console.print("Usage: /disconnect PROVIDER")
        return
    result = await repl.rpc.request("provider/disconnect", ProviderDisconnectParams(provider=arg))
    removed = [what for what, done in (("key", result.removed_key), ("URL", result.removed_base_url)) if done]
    note = f"forgot the saved {' and '.join(removed)}" if removed else "nothing was saved"
    repl.console.print(Text(f"{arg}: {note}.", style="bold"))


async def provider(repl: Repl, arg: str) -> None:
    status: ProviderStatusResult = await repl.rpc.request("provider/status", ProviderStatusParams(provider=arg or None))
    table = Table("provider", "state", "key", "details")
    for p in status.providers:
        key = {"store": "saved", "env": "environment", "not_needed": "not needed", "none": "—"}[p.key_source]
        details = p.message
        if p.models:
            details += f" Serves: {', '.join(p.models[:6])}{'…' if len(p.models) > 6 else ''}."
        for check in p.preflight:
            details += f" [{check.verdict.upper()}] {check.message}"
        table.add_row(p.id, Text(p.state.replace("_", " "), style=_STATE_STYLE[p.state]), key, details)
    repl.console.print(table)
    repl.console.print(Text(f"Saved keys live in {status.credential_store}. /connect ID to add one.", style="dim"))


async def reasoning(repl: Repl, arg: str) -> None:
    await repl.current()
    assert repl.session is not None
    if not arg:
        current = repl.session.reasoning_effort or "default"
        repl.console.print(Text(f"Reasoning effort: {current}. {MODEL_COMMANDS['/reasoning']}", style="dim"))
        return
    params = SessionUpdateParams.model_validate({"sessionId": repl.session.id, "reasoningEffort": arg})
    repl.session = await repl.rpc.request("session/update", params)
    repl.console.print(Text(f"Reasoning effort: {repl.session.reasoning_effort or 'default'}", style="bold"))


def _totals_row(table: Table, label: str, totals: UsageTotals) -> None:
    unknown = f" (+{totals.unknown_cost_calls} unpriced)" if totals.unknown_cost_calls else ""
    table.add_row(
        label,
        f"{totals.calls:,}",
        f"{totals.input_tokens:,}",
        f"{totals.output_tokens:,}",
        _money(totals.cost_usd) + unknown,
    )


def _budget_table(budgets: list[BudgetStatus]) -> Table:
    table = Table("budget", "cap", "spent", "left", "resets")
    labels = {"interaction": "per request", "daily": "today", "weekly": "this week", "monthly": "this month"}
    for b in budgets:
        resets = b.resets_at.astimezone().strftime("%a %d %b %H:%M") if b.resets_at else "each request"
        spent = _money(b.spent_usd) + (" (costliest today)" if b.cap == "interaction" else "")
        table.add_row(
            labels[b.cap],
            _money(b.limit_usd) if b.limit_usd is not None else "no cap",
            spent,
            _money(b.remaining_usd),
            resets,
        )
    return table


async def usage(repl: Repl, arg: str) -> None:
    await repl.current()
    assert repl.session is not None
    session: SessionUsageResult = await repl.rpc.request(
        "session/usage", SessionUsageParams(session_id=repl.session.id)
    )
    summary: UsageSummaryResult = await repl.rpc.request("usage/summary", UsageSummaryParams(days=30))
    table = Table("", "calls", "tokens in", "tokens out", "cost")
    _totals_row(table, "this session", session.totals)
    _totals_row(table, "today", summary.today)
    _totals_row(table, "this week", summary.week)
    _totals_row(table, "this month", summary.month)
    repl.console.print(table)
    if session.by_model:
        per_model = Table("model", "calls", "tokens in", "tokens out", "cost")
        for m in session.by_model:
            _totals_row(per_model, f"{m.provider}:{m.model}", m.totals)
        repl.console.print(per_model)
    repl.console.print(_budget_table(summary.budgets))


async def budget(repl: Repl, arg: str) -> None:
    if not arg:
        summary: UsageSummaryResult = await repl.rpc.request("usage/summary", UsageSummaryParams(days=1))
        repl.console.print(_budget_table(summary.budgets))
        repl.console.print(Text(MODEL_COMMANDS["/budget"], style="dim"))
        return
    fields: dict[str, Any] = {}
    for word in arg.split():
        if word == "reset":
            fields["reset"] = True
            continue
        name, sep, value = word.partition("=")
        if not sep or name not in _BUDGET_KEYS:
            repl.console.print(f"Not understood: {word!r}. {MODEL_COMMANDS['/budget']}")
            return
        if value in ("none", "off"):
            fields.setdefault("remove", []).append(_CAP_OF[_BUDGET_KEYS[name]])
            continue
        try:
            fields[_BUDGET_KEYS[name]] = float(value.lstrip("$"))
        except ValueError:
            repl.console.print(f"{name}: {value!r} is not an amount.")
            return
    result: BudgetSetResult = await repl.rpc.request("budget/set", BudgetSetParams.model_validate(fields))
    repl.console.print(_budget_table(result.budgets))


async def retry(repl: Repl, arg: str) -> None:
    await repl.current()
    assert repl.session is not None
    tier = "same" if arg == "same" else "up"
    estimate: TurnRetryResult = await repl.rpc.request(
        "turn/retry", TurnRetryParams(session_id=repl.session.id, tier=tier)
    )
    cost = f"~{_money(estimate.estimated_cost_usd)}" if estimate.estimated_cost_usd is not None else "cost unknown"
    tier_note = f" ({estimate.tier})" if estimate.tier else ""
    repl.console.print(
        Text(
            f"Retry with {estimate.provider}:{estimate.model}{tier_note}, {cost}. "
            f"This question has cost {_money(estimate.ask_cost_usd)} so far.",
            style="bold",
        )
    )
    answer = (await repl.ask_line("Go ahead? [y/N] › ")).strip().lower()
    if answer not in ("y", "yes"):
        repl.console.print(Text("Not retried.", style="dim"))
        return
    started: TurnRetryResult = await repl.rpc.request(
        "turn/retry",
        TurnRetryParams(session_id=repl.session.id, tier=tier, confirm=True, client_message_id=uuid.uuid4().hex),
    )
    assert started.operation_id is not None
    await repl.follow(started.operation_id)


_RUN: dict[str, Callable[[Repl, str], Awaitable[None]]] = {
    "/connect": connect,
    "/disconnect": disconnect,
    "/provider": provider,
    "/reasoning": reasoning,
    "/usage": usage,
    "/budget": budget,
    "/retry": retry,
}


async def run_model_command(repl: Repl, name: str, arg: str) -> bool:
    """Run one of these commands; False when `name` is not one of them."""
    command = _RUN.get(name)
    if command is None:
        return False
    await command(repl, arg)
    return True
