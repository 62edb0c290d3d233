"""The runner: pure decision logic. Given an operation's state, what should happen next?

No I/O, no clocks of its own (the caller passes `now`), no randomness: tests drive it with states and check
the instructions it returns. Executors (`_executors.py`) carry instructions out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from cowork.models import history_chars, message_chars
from cowork.policy import PolicyDecision
from cowork.protocol import GuardrailCode, OperationStatus, ToolCallStatus

from ._state import LedgerEntry, Limits, OperationState

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = [
    "ApplySteering",
    "AskHuman",
    "AwaitRunning",
    "CallLLM",
    "CallTool",
    "CallToolsBatch",
    "CompressContext",
    "Decision",
    "Finish",
    "Instruction",
    "Observe",
    "Pause",
    "RecordToolResults",
    "RequestHumanApprove",
    "Stop",
    "Wait",
    "decide",
    "estimate_tokens",
    "rerun_reason",
    "split_point",
]

Decision = Literal["run", "ask", "question"]
"""What the approval policy says about a call: run it, ask for approval, or (the `ask` tool) ask the user."""


@dataclass(frozen=True)
class CallLLM:
    pass


@dataclass(frozen=True)
class CallTool:
    tool_call_id: str


@dataclass(frozen=True)
class CallToolsBatch:
    tool_call_ids: tuple[str, ...]


@dataclass(frozen=True)
class RequestHumanApprove:
    tool_call_ids: tuple[str, ...]
    reasons: tuple[str, ...]
    dangerous: tuple[bool, ...]
    """Per call: the policy's security phase asked (a destructive command, deleting, sending, paying)."""
    allow: tuple[str | None, ...] = ()
    """Per call: the key "allow for this session" would store; None where it is not offered."""


@dataclass(frozen=True)
class AskHuman:
    tool_call_id: str


@dataclass(frozen=True)
class AwaitRunning:
    """Calls are running (one approved while others ran): wait for them before deciding again."""


@dataclass(frozen=True)
class RecordToolResults:
    """Every call of the latest response has its result: hand them to the model as one message."""


@dataclass(frozen=True)
class ApplySteering:
    """User input sent while the operation ran joins the history at this step boundary."""


@dataclass(frozen=True)
class CompressContext:
    """Summarise the oldest part of the history (for a `compact` operation: all but the latest exchange)."""


@dataclass(frozen=True)
class Observe:
    """Note dated observations of the conversation's turns not yet observed (an `observe` operation)."""


@dataclass(frozen=True)
class Pause:
    """A guardrail: wait for the user to say whether to go on."""

    code: GuardrailCode
    details: dict[str, float | int | str]


@dataclass(frozen=True)
class Stop:
    """A guardrail that ends the operation."""

    code: GuardrailCode
    message: str


@dataclass(frozen=True)
class Finish:
    pass


@dataclass(frozen=True)
class Wait:
    """Nothing can happen until a person answers."""


Instruction: TypeAlias = (
    AwaitRunning
    | CallLLM
    | CallTool
    | CallToolsBatch
    | RequestHumanApprove
    | AskHuman
    | RecordToolResults
    | ApplySteering
    | CompressContext
    | Observe
    | Pause
    | Stop
    | Finish
    | Wait
)

Policy: TypeAlias = Callable[[LedgerEntry], PolicyDecision]


def estimate_tokens(state: OperationState, extra_chars: int = 0) -> int:
    """Tokens the next request will take: the last request's count plus what was added since (≈4 chars a token)."""
    if state.last_input_tokens:
        return state.last_input_tokens + state.last_output_tokens + (state.chars_since_usage + extra_chars) // 4
    return (history_chars(state.messages) + extra_chars) // 4


def _safe_start(message: ModelMessage) -> bool:
    """A kept part may start here without splitting a tool call from its result."""
    if message.kind == "response":
        return True
    return not any(part.part_kind == "tool-return" for part in message.parts)


def split_point(messages: list[ModelMessage], keep_tokens: int) -> int | None:
    """Where compression keeps the (newest) part of a history from: as little as fits `keep_tokens`, at a safe
    boundary, and leaving at least two messages to summarise. None when no such point exists."""
    kept_chars = 0
    best: int | None = None
    for index in range(len(messages) - 1, 1, -1):
        kept_chars += message_chars(messages[index])
        if kept_chars // 4 > keep_tokens and best is not None:
            break
        if _safe_start(messages[index]):
            best = index
    return best


def _tool_phase(state: OperationState, limits: Limits, policy: Policy) -> list[Instruction]:
    open_calls = [c for c in state.calls.values() if not c.status.is_resolved]
    if not open_calls:
        return [RecordToolResults()]
    approve: list[str] = []
    reasons: list[str] = []
    dangerous: list[bool] = []
    allow: list[str | None] = []
    questions: list[str] = []
    run: list[str] = []
    running = False
    for call in open_calls:
        if call.status == ToolCallStatus.REQUESTED:
            verdict = policy(call)
            if verdict.decision == "question":
                questions.append(call.tool_call_id)
            elif verdict.decision == "ask":
                approve.append(call.tool_call_id)
                reasons.append(verdict.reason)
                dangerous.append(verdict.phase == "security")
                allow.append(verdict.allow)
            else:
                run.append(call.tool_call_id)
        elif call.status == ToolCallStatus.APPROVED:
            run.append(call.tool_call_id)
        elif call.status == ToolCallStatus.INTERRUPTED:
            if call.side_effects:
                approve.append(call.tool_call_id)
                reasons.append(rerun_reason(call))
                dangerous.append(False)  # `rerun` says what is special about it
                allow.append(None)
            else:
                run.append(call.tool_call_id)
        elif call.status == ToolCallStatus.STARTED:
            running = True
    stuck = _stuck(state, limits, [state.calls[i] for i in run])
    if stuck is not None:
        return [stuck]
    out: list[Instruction] = []
    if approve:
        out.append(RequestHumanApprove(tuple(approve), tuple(reasons), tuple(dangerous), tuple(allow)))
    out += [AskHuman(q) for q in questions]
    if len(run) == 1:
        out.append(CallTool(run[0]))
    elif run:
        out.append(CallToolsBatch(tuple(run)))
    if not out and running:
        return [AwaitRunning()]
    return out or [Wait()]


def rerun_reason(call: LedgerEntry) -> str:
    """Why an interrupted call with side effects is asked about again, saying how its earlier run ended when that
    is known (recovery records it in the call's `meta` as `earlierRun`, see `cowork.sandbox.recover_runs`)."""
    earlier = call.meta.get("earlierRun")
    if not isinstance(earlier, dict):
        earlier = {}
    state, code = earlier.get("state"), earlier.get("exitCode")
    if state == "finished":
        status = f" (exit code {code})" if isinstance(code, int) else ""
        return (
            f"It finished{status} before Cowork stopped, but its result was not saved; running it again will "
            "repeat its effects."
        )
    if state == "stopped":
        return (
            "It was still running when Cowork stopped and has been stopped; it may have done part of its work. "
            "Running it again may repeat its effects."
        )
    if state == "running":
        return (
            "It was still running when Cowork stopped and could not be stopped: it may still be running. Running it "
            "again may repeat its effects."
        )
    return "It was running when Cowork stopped; running it again may repeat its effects."


def _stuck(state: OperationState, limits: Limits, to_run: list[LedgerEntry]) -> Pause | None:
    """Running one of these would make the same call `stuck_repeats` times in a row."""
    need = limits.stuck_repeats - 1
    recent = state.signatures[-need:] if need else []
    for call in to_run:
        if len(recent) == need and all(sig == call.signature for sig in recent):
            return Pause(GuardrailCode.STUCK, {"tool": call.name, "n": limits.stuck_repeats})
    return None


def _guardrails(state: OperationState, limits: Limits, now: float) -> Instruction | None:
    if state.step >= state.step_limit:
        return Pause(GuardrailCode.MAX_STEPS, {"n": state.step})
    window = list(state.outcomes)[-limits.error_rate_window :]
    if len(window) >= limits.error_rate_min_calls and sum(window) / len(window) > limits.error_rate_threshold:
        failed = sum(window)
        return Stop(
            GuardrailCode.ERROR_RATE,
            f"Stopped: {failed} of the last {len(window)} tool calls failed. The calls and their errors are above; "
            "fix the cause (or rephrase the task) and send a new message.",
        )
    spent = sum(usd for t, usd in state.spend if now - t <= limits.cost_window_seconds)
    if limits.cost_cap_usd > 0 and spent > limits.cost_cap_usd:
        return Pause(
            GuardrailCode.COST_CAP,
            {"usd": spent, "cap": limits.cost_cap_usd, "minutes": limits.cost_window_seconds / 60},
        )
    if now >= state.checkin_at:
        return Pause(GuardrailCode.CHECKIN, {"minutes": limits.checkin_seconds / 60})
    return None


def decide(state: OperationState, limits: Limits, policy: Policy, *, now: float) -> list[Instruction]:
    """The next instructions for a running operation, in the order to carry them out."""
    if state.status != OperationStatus.RUNNING:
        return [Wait()]
    if state.origin == "compact":  # `/compact`: compress once, then end; the model is not asked anything else
        return [Finish()] if state.summary is not None else [CompressContext()]
    if state.origin == "observe":  # observational memory: observe once, then end
        return [Finish()] if state.summary is not None else [Observe()]
    last = state.messages[-1] if state.messages else None
    # Told apart by their tag rather than isinstance: deciding needs no pydantic-ai import.
    if last is not None and last.kind == "response" and state.calls:
        return _tool_phase(state, limits, policy)
    if state.steering:
        return [ApplySteering()]
    if last is not None and last.kind == "response":
        return [Finish()]
    assert last is not None and last.kind == "request", (
        "an operation's history ends with a request before the model is called"
    )
    guardrail = _guardrails(state, limits, now)
    if guardrail is not None:
        return [guardrail]
    if (
        estimate_tokens(state) > limits.compress_at * limits.context_window
        and state.compress_failed_at_step != state.step
    ):
        return [CompressContext()]
    return [CallLLM()]
