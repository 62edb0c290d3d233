"""Budget caps through the runtime: a call that would go over a cap is refused before it is made; the user
continues once, stops, or raises the cap and resumes; warnings come once; sub-agents count towards their request."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime, timedelta

import pytest

from cowork.core import Core
from cowork.protocol import (
    AgentSpawned,
    Ask,
    AskRespondParams,
    BudgetSetParams,
    BudgetWarning,
    ErrorCode,
    Guardrail,
    GuardrailCode,
    OperationStatus,
    Usage,
)
from cowork.store import UsageRow, repos
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockRequest, MockResponse, MockToolCall, MockUsage
from cowork.usage import Cap, windows_at

pytestmark = pytest.mark.anyio
S = OperationStatus

INPUT_PER_MTOK, OUTPUT_PER_MTOK = 3.0, 15.0
PRICES = {
    "COWORK_PRICES": json.dumps(
        {"openai:mock-model": {"input_per_mtok": INPUT_PER_MTOK, "output_per_mtok": OUTPUT_PER_MTOK}}
    )
}
CALL = MockUsage(input_tokens=20_000, output_tokens=6_000)  # $0.06 + $0.09 = $0.15 a call
CALL_USD = 0.15
LABELS: dict[Cap, str] = {"interaction": "per-request", "daily": "daily", "weekly": "weekly", "monthly": "monthly"}
# `mark` has side effects, so the journal commits each step's usage before the tool runs; see
# test_spend_between_steps_sees_the_previous_call for what happens with a read-only tool.
AUTO_MARK = {"COWORK_TOOLS__AUTO_APPROVE": '["mark"]'}


def caps(**limits: float | None) -> dict[str, str]:
    """Prices for the mock model and the caps given (USD); the caps not given are out of the way."""
    budgets: dict[str, float | None] = {
        "per_interaction_usd": 1000.0,
        "daily_usd": 1000.0,
        "weekly_usd": 1000.0,
        "monthly_usd": 1000.0,
    }
    budgets |= {f"{'per_interaction' if cap == 'interaction' else cap}_usd": v for cap, v in limits.items()}
    return PRICES | AUTO_MARK | {"COWORK_BUDGETS": json.dumps(budgets)}


def mark(label: str, usage: MockUsage = CALL) -> MockResponse:
    return MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": label})], usage=usage)


def answer(text: str = "done", usage: MockUsage = CALL) -> MockResponse:
    return MockResponse(text=text, usage=usage)


async def seed(core: Core, usd: float, when: datetime) -> None:
    """A model call made earlier (another session, another day) at `when`."""
    row = UsageRow(
        session_id="earlier",
        operation_id="earlier-op",
        root_operation_id="earlier-op",
        step=1,
        provider="openai",
        model="mock-model",
        input_tokens=1,
        output_tokens=1,
        cached_tokens=0,
        reasoning_tokens=0,
        cost_usd=usd,
        cost_known=True,
        created_at=when,
    )
    await core.db.write(lambda conn: repos.usage.insert(conn, row))


def window_start(cap: Cap) -> datetime:
    return windows_at(datetime.now(UTC)).starts()[cap]


def guardrails(harness: CoreHarness, sid: str) -> list[Guardrail]:
    return [p for p in harness.payloads(sid, Guardrail) if isinstance(p, Guardrail)]


def usages(harness: CoreHarness, sid: str) -> list[Usage]:
    return [p for p in harness.payloads(sid, Usage) if isinstance(p, Usage)]


def warnings(harness: CoreHarness, sid: str) -> list[BudgetWarning]:
    return [p for p in harness.payloads(sid, BudgetWarning) if isinstance(p, BudgetWarning)]


async def refused(harness: CoreHarness, sid: str, op: str, cap: Cap, nth: int = 1) -> Guardrail:
    """The operation paused at a budget (its `nth` guardrail): a guardrail event and a question naming the cap."""

    def paused(_events: object) -> bool:
        return len([g for g in guardrails(harness, sid) if g.operation_id == op]) >= nth

    await harness.until(sid, paused)
    changed = await harness.status(sid, op, S.WAITING_FOR_HUMAN, S.DONE, S.ERROR, S.CANCELLED)
    assert changed.status == S.WAITING_FOR_HUMAN and changed.code == ErrorCode.BUDGET_EXCEEDED
    event = [g for g in guardrails(harness, sid) if g.operation_id == op][nth - 1]
    assert event.code == GuardrailCode.BUDGET_EXCEEDED and event.request_id is not None
    assert event.details is not None and event.details["cap"] == cap
    assert f"over the {LABELS[cap]} budget" in event.message
    (ask,) = [p for p in harness.payloads(sid, Ask) if isinstance(p, Ask) and p.request_id == event.request_id]
    assert ask.kind == "guardrail" and ask.options == ["continue", "stop"] and ask.question == event.message
    assert changed.reason == event.message
    return event


async def respond(core: Core, event: Guardrail, text: str) -> None:
    assert event.request_id is not None
    await core.runtime.respond_ask(AskRespondParams(request_id=event.request_id, answer=text))


# -- every cap refuses before the call; continue, stop ----------------------------------------------------------


@pytest.mark.parametrize("cap", ["interaction", "daily", "weekly", "monthly"])
async def test_each_cap_refuses_the_call_before_it_is_made(
    cap: Cap, harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script(lambda r: MockResponse(text="done"))  # usage: what was sent, at about 4 characters a token
    if cap == "interaction":
        # Below what any one call is estimated to cost: a request is refused at its first call.
        core = await harness.core(env=caps(interaction=0.01))
        limit, spent = 0.01, 0.0
    else:
        core = await harness.core(env=caps(**{cap: 1.0}))
        limit, spent = 1.0, 0.99
        await seed(core, 0.99, window_start(cap))  # this window's first instant
        await seed(core, 100.0, window_start(cap) - timedelta(microseconds=1))  # the window before: not counted
    sid = await harness.session(core)

    op = await harness.start(core, sid, "hello")
    event = await refused(harness, sid, op, cap)
    assert len(mock_llm.requests) == 0  # refused before the mock received anything
    assert event.details is not None
    assert event.details["limitUsd"] == limit and event.details["spentUsd"] == pytest.approx(spent)
    estimate = event.details["estimateUsd"]
    assert spent + estimate > limit and estimate >= 1024 * OUTPUT_PER_MTOK / 1e6  # the assumed output, at least
    (question,) = (await core.runtime.pending(sid)).questions
    assert question.request_id == event.request_id and question.kind == "guardrail"

    # "continue": this request goes on past the cap; the call is made.
    await respond(core, event, "continue")
    await harness.status(sid, op, S.DONE)
    assert len(mock_llm.requests) == 1
    (made,) = usages(harness, sid)
    assert made.operation_id == op
    # The estimate covered the whole request (system prompt and tools included), not just the user's message.
    assert estimate >= (made.input_tokens * INPUT_PER_MTOK + 1024 * OUTPUT_PER_MTOK) / 1e6

    # A new request is refused again, at the same cap.
    op2 = await harness.start(core, sid, "and again")
    again = await refused(harness, sid, op2, cap)
    assert len(mock_llm.requests) == 1 and again.request_id != event.request_id

    # "stop" cancels it, without a call.
    await respond(core, again, "stop")
    final = await harness.status(sid, op2, S.CANCELLED)
    assert "guardrail" in (final.reason or "")
    assert len(mock_llm.requests) == 1
    assert (await core.runtime.pending(sid)).questions == []


async def test_the_interaction_cap_counts_the_requests_earlier_calls(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    counter = itertools.count()
    mock_llm.set_script(lambda r: mark(str(next(counter))))
    core = await harness.core(env=caps(interaction=0.5))
    sid = await harness.session(core)
    op = await harness.start(core, sid, "work")
    event = await refused(harness, sid, op, "interaction")
    # $0.15, $0.30, $0.45 spent; the fourth call (about $0.09 more) would go over $0.50.
    assert len(mock_llm.requests) == 3
    assert event.details is not None and event.details["spentUsd"] == pytest.approx(0.45)
    # The estimate: the last call's tokens plus what was added since as input, and 1024 output tokens.
    assert event.details["estimateUsd"] == pytest.approx(
        (26_000 * INPUT_PER_MTOK + 1024 * OUTPUT_PER_MTOK) / 1e6, abs=0.001
    )
    # Spend is not refused on a cap that is not reached: another session's request starts fresh.
    mock_llm.set_script(lambda r: answer(usage=MockUsage(input_tokens=10, output_tokens=10)))
    other = await harness.session(core)
    op2 = await harness.start(core, other, "small")
    await harness.status(other, op2, S.DONE)


async def test_continue_covers_only_the_cap_that_was_passed(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    counter = itertools.count()
    mock_llm.set_script(lambda r: mark(str(next(counter))))
    core = await harness.core(env=caps(interaction=0.2, daily=0.65))
    sid = await harness.session(core)
    op = await harness.start(core, sid, "work")
    first = await refused(harness, sid, op, "interaction")
    assert len(mock_llm.requests) == 1  # $0.15 spent; $0.15 + ~$0.09 > $0.20
    await respond(core, first, "continue")
    # Past the per-request cap now, until the daily one: $0.60 spent, the next call would go over $0.65.
    second = await refused(harness, sid, op, "daily", nth=2)
    assert len(mock_llm.requests) == 4 and second.request_id != first.request_id
    assert second.details is not None and second.details["spentUsd"] == pytest.approx(0.6)
    await respond(core, second, "stop")
    await harness.status(sid, op, S.CANCELLED)
    assert len(mock_llm.requests) == 4


# -- raising a cap ----------------------------------------------------------------------------------------------


async def test_raising_the_cap_and_resuming_continues(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script(lambda r: answer(usage=MockUsage(input_tokens=1000, output_tokens=100)))
    core = await harness.core(env=caps(daily=1.0))
    await seed(core, 0.99, datetime.now(UTC))
    sid = await harness.session(core)
    op = await harness.start(core, sid, "hello")
    await refused(harness, sid, op, "daily")

    result = await core.usage.set_budgets(BudgetSetParams(daily_usd=5.0))
    assert {s.cap: s.limit_usd for s in result.budgets}["daily"] == 5.0
    assert await core.runtime.resume(op) == S.RUNNING  # resume answers the guardrail with "continue"
    await harness.status(sid, op, S.DONE)
    assert len(mock_llm.requests) == 1
    assert (await core.runtime.pending(sid)).questions == []

    # The new cap holds for new requests too: this one is not refused.
    op2 = await harness.start(core, sid, "more")
    await harness.status(sid, op2, S.DONE)
    assert len(mock_llm.requests) == 2 and len(guardrails(harness, sid)) == 1


async def test_caps_set_at_run_time_still_apply_after_a_restart(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script(lambda r: answer())
    env = caps(daily=1000.0)
    core = await harness.core(env=env)
    await core.usage.set_budgets(BudgetSetParams(daily_usd=0.01))
    await core.stop()
    harness.cores.remove(core)

    restarted = await harness.core(env=env)  # same home, same store
    assert restarted.usage.limit("daily") == 0.01
    sid = await harness.session(restarted)
    op = await harness.start(restarted, sid, "hello")
    event = await refused(harness, sid, op, "daily")
    assert event.details is not None and event.details["limitUsd"] == 0.01
    assert len(mock_llm.requests) == 0


# -- warnings and usage events ----------------------------------------------------------------------------------


async def test_usage_events_carry_running_totals_and_each_warning_comes_once(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    script = iter([mark("1"), mark("2"), mark("3"), mark("4"), mark("5"), answer()])
    mock_llm.set_script(lambda r: next(script))
    core = await harness.core(env=caps(interaction=0.5, daily=1.0))
    await seed(core, 0.05, datetime.now(UTC))  # spent earlier today, elsewhere
    sid = await harness.session(core)
    op = await harness.start(core, sid, "work")
    event = await refused(harness, sid, op, "interaction")
    assert [w.cap for w in warnings(harness, sid)] == ["interaction"]  # at $0.45 of $0.50 (80% is $0.40)
    await respond(core, event, "continue")
    await harness.status(sid, op, S.DONE)

    assert len(mock_llm.requests) == 6
    events = usages(harness, sid)
    assert [(u.input_tokens, u.output_tokens, u.cost_known) for u in events] == [(20_000, 6_000, True)] * 6
    assert [u.cost_usd for u in events] == [pytest.approx(CALL_USD)] * 6
    running = [pytest.approx(CALL_USD * n) for n in range(1, 7)]
    assert [u.interaction_cost_usd for u in events] == running
    assert [u.day_cost_usd for u in events] == [pytest.approx(0.05 + CALL_USD * n) for n in range(1, 7)]
    # One warning per cap: the request's at $0.45, the day's at $0.80 crossed (0.05 + 5 × 0.15 = $0.80).
    interaction, daily = warnings(harness, sid)
    assert (interaction.cap, interaction.limit_usd, interaction.fraction) == ("interaction", 0.5, 0.9)
    assert interaction.spent_usd == pytest.approx(0.45) and interaction.operation_id == op
    assert (daily.cap, daily.limit_usd) == ("daily", 1.0) and daily.spent_usd == pytest.approx(0.8)
    # The warning comes with the usage of the call that crossed it.
    types = [t for t in harness.types(sid) if t in ("usage", "budget_warning")]
    assert types == ["usage"] * 3 + ["budget_warning"] + ["usage"] * 2 + ["budget_warning"] + ["usage"]

    # A new request: the day is past its warning share already, so no second daily warning.
    mock_llm.set_script(lambda r: answer(usage=MockUsage(input_tokens=1000, output_tokens=100)))
    op2 = await harness.start(core, sid, "more")
    await harness.status(sid, op2, S.DONE)
    assert len(warnings(harness, sid)) == 2
    last = usages(harness, sid)[-1]
    assert last.cost_usd == pytest.approx(0.0045)
    assert last.interaction_cost_usd == pytest.approx(0.0045)
    assert last.day_cost_usd == pytest.approx(0.05 + 6 * CALL_USD + 0.0045)
    info = await core.runtime.operation_info(op)
    assert info.cost_usd == pytest.approx(6 * CALL_USD)


async def test_a_model_without_a_price_is_never_refused(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script(lambda r: answer())
    core = await harness.core(env={"COWORK_BUDGETS__DAILY_USD": "0"})  # no prices: mock-model costs nothing known
    sid = await harness.session(core)
    op = await harness.start(core, sid, "hello")
    await harness.status(sid, op, S.DONE)
    (event,) = usages(harness, sid)
    assert (event.cost_usd, event.cost_known, event.day_cost_usd) == (0.0, False, 0.0)
    assert guardrails(harness, sid) == [] and warnings(harness, sid) == []


async def test_spend_between_steps_sees_the_previous_call(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    """With a read-only tool nothing makes the journal commit between steps, so the spend read before the next
    call must not depend on the previous call's usage row having been written by then."""
    counter = itertools.count()
    mock_llm.set_script(
        lambda r: (
            MockResponse(tool_calls=[MockToolCall(name="peek", arguments={"label": str(next(counter))})], usage=CALL)
            if len(mock_llm.requests) < 4
            else answer()
        )
    )
    core = await harness.core(env=caps(interaction=0.5))
    core.journal._linger = 0.3  # commits lag behind, as under load
    sid = await harness.session(core)
    op = await harness.start(core, sid, "look around")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN, S.DONE)
    assert len(mock_llm.requests) == 3  # a fourth call would take the request over its cap
    await refused(harness, sid, op, "interaction")
    assert [u.interaction_cost_usd for u in usages(harness, sid)] == [pytest.approx(CALL_USD * n) for n in (1, 2, 3)]
    assert [w.cap for w in warnings(harness, sid)] == ["interaction"]


# -- sub-agents -------------------------------------------------------------------------------------------------


def is_child(request: MockRequest) -> bool:
    system = request.system or ""
    return "working for another agent" in system or "sub-agent handling one task" in system


async def test_a_sub_agent_over_the_request_cap_fails_and_its_parent_pauses(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    counter = itertools.count()

    def script(request: MockRequest) -> MockResponse:
        if is_child(request):
            return mark(f"child {next(counter)}")
        if not request.last_tool_results:
            spawn = MockToolCall(name="spawnAgent", arguments={"agentType": "general", "task": "spend"})
            return MockResponse(tool_calls=[spawn], usage=CALL)
        return answer()

    mock_llm.set_script(script)
    core = await harness.core(env=caps(interaction=0.5))
    sid = await harness.session(core)
    op = await harness.start(core, sid, "delegate")
    event = await refused(harness, sid, op, "interaction")

    # Parent $0.15, child $0.15 + $0.15: the child's third call would take the request over $0.50.
    children = [r for r in mock_llm.requests if is_child(r)]
    assert len(children) == 2 and len(mock_llm.requests) == 3
    (spawned,) = harness.payloads(sid, AgentSpawned)
    child = spawned.child_operation_id
    child_info = await core.runtime.operation_info(child)
    assert child_info.status == S.ERROR and child_info.error_code == ErrorCode.BUDGET_EXCEEDED
    assert "over the per-request budget" in (child_info.error_message or "")
    # The child fails rather than asking: only the parent holds a question, and its call was refused too.
    assert [g.operation_id for g in guardrails(harness, sid)] == [op]
    assert event.details is not None and event.details["spentUsd"] == pytest.approx(0.45)
    assert [q.operation_id for q in (await core.runtime.pending(sid)).questions] == [op]
    assert [u.interaction_cost_usd for u in usages(harness, sid)] == [pytest.approx(CALL_USD * n) for n in (1, 2, 3)]

    # The parent saw the failure as the spawnAgent result once it is let go on.
    await respond(core, event, "continue")
    await harness.status(sid, op, S.DONE)
    assert "budget" in mock_llm.requests[-1].last_tool_results[0]["content"]


async def test_continue_covers_the_sub_agents_the_request_starts_afterwards(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    def script(request: MockRequest) -> MockResponse:
        if is_child(request):
            return answer("child report", usage=MockUsage(input_tokens=1000, output_tokens=100))
        if not request.last_tool_results:
            spawn = MockToolCall(name="spawnAgent", arguments={"agentType": "general", "task": "help"})
            return MockResponse(tool_calls=[spawn], usage=MockUsage(input_tokens=1000, output_tokens=100))
        return answer(f"parent got: {request.last_tool_results[0]['content']}")

    mock_llm.set_script(script)
    core = await harness.core(env=caps(interaction=0.01))
    sid = await harness.session(core)
    op = await harness.start(core, sid, "delegate")
    event = await refused(harness, sid, op, "interaction")
    await respond(core, event, "continue")  # "continue once (this request only)": its sub-agents are part of it
    await harness.status(sid, op, S.DONE)
    assert mock_llm.requests[-1].last_tool_results[0]["content"] == "child report"
