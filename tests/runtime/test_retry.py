"""Try harder (`turn/retry`): an estimate first, then the same request on the next tier up, grouped by one askId;
the retried answer replaces the original in the history the model sees."""

from __future__ import annotations

import pytest

from cowork.core import Core
from cowork.protocol import (
    ErrorCode,
    OperationStatus,
    ProtocolError,
    Route,
    TurnRetryParams,
)
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall, MockUsage

pytestmark = pytest.mark.anyio

S = OperationStatus
USAGE = MockUsage(input_tokens=1000, output_tokens=200)


async def _core(harness: CoreHarness, model: str = "claude-haiku-5-5") -> Core:
    return await harness.core("anthropic", env={"COWORK_MODEL": model})


async def _turn(harness: CoreHarness, core: Core, sid: str, text: str) -> str:
    op = await harness.start(core, sid, text, cmid=f"m-{text}")
    assert (await harness.status(sid, op, S.DONE, S.ERROR)).status == S.DONE
    return op


async def test_try_harder_estimates_then_reruns_on_the_next_tier_and_replaces_the_answer(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script(
        [
            MockResponse(text="A quick guess.", usage=USAGE),
            MockResponse(text="A careful answer.", usage=USAGE),
            MockResponse(text="Glad it helped.", usage=USAGE),
        ]
    )
    core = await _core(harness)
    sid = await harness.session(core)
    original = await _turn(harness, core, sid, "Why is the sky blue?")
    assert mock_llm.requests[0].model == "claude-haiku-5-5"

    estimate = await core.runtime.retry(TurnRetryParams(session_id=sid))
    assert estimate.started is False and estimate.operation_id is None
    assert (estimate.provider, estimate.model, estimate.tier) == ("anthropic", "claude-sonnet-5-5", "strong")
    assert estimate.from_model == "anthropic:claude-haiku-5-5" and estimate.ask_id == original
    # The original's tokens priced for the stronger model: known, and more than the original cost.
    first_cost = (await core.usage.session_usage(sid)).totals.cost_usd
    assert estimate.estimated_cost_usd is not None and estimate.estimated_cost_usd > first_cost > 0
    assert estimate.ask_cost_usd == pytest.approx(first_cost)
    assert len(mock_llm.requests) == 1  # an estimate asks nobody

    started = await core.runtime.retry(TurnRetryParams(session_id=sid, confirm=True, client_message_id="r1"))
    assert started.started and started.operation_id and started.ask_id == original
    assert (await harness.status(sid, started.operation_id, S.DONE, S.ERROR)).status == S.DONE
    retried = mock_llm.requests[1]
    assert retried.model == "claude-sonnet-5-5"
    assert [(m["role"], m["content"]) for m in retried.messages] == [("user", "Why is the sky blue?")]
    route = [p for p in harness.payloads(sid, Route) if isinstance(p, Route)]
    assert [(r.code, r.tier, r.ask_id, r.operation_id) for r in route] == [
        ("try_harder", "strong", original, started.operation_id)
    ]

    # Both answers are on screen, grouped; only the retried one is in the model's history from now on.
    messages = await core.sessions.messages(sid)
    assert [(m.role, m.text, m.superseded, m.ask_id) for m in messages] == [
        ("user", "Why is the sky blue?", False, original),
        ("assistant", "A quick guess.", True, original),
        ("assistant", "A careful answer.", False, original),
    ]
    await _turn(harness, core, sid, "Thanks!")
    follow_up = mock_llm.requests[2]
    assert [(m["role"], m["content"]) for m in follow_up.messages] == [
        ("user", "Why is the sky blue?"),
        ("assistant", "A careful answer."),
        ("user", "Thanks!"),
    ]
    usage = await core.usage.session_usage(sid)
    group = next(a for a in usage.asks if a.ask_id == original)
    assert group.operation_ids == [original, started.operation_id]
    assert group.cost_usd == pytest.approx(sum(o.totals.cost_usd for o in usage.operations[:2]))


async def test_a_confirmed_retry_is_idempotent_by_client_message_id(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text="one", usage=USAGE), MockResponse(text="two", usage=USAGE)])
    core = await _core(harness)
    sid = await harness.session(core)
    await _turn(harness, core, sid, "q")
    first = await core.runtime.retry(TurnRetryParams(session_id=sid, confirm=True, client_message_id="r1"))
    assert first.operation_id is not None
    await harness.status(sid, first.operation_id, S.DONE)
    again = await core.runtime.retry(TurnRetryParams(session_id=sid, confirm=True, client_message_id="r1"))
    assert again.duplicate and again.operation_id == first.operation_id
    assert len(mock_llm.requests) == 2


async def test_try_harder_climbs_to_the_top_and_stays_there(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(text=f"answer {i}", usage=USAGE) for i in range(4)])
    core = await _core(harness, "claude-sonnet-5-5")
    sid = await harness.session(core)
    await _turn(harness, core, sid, "hard question")
    up = await core.runtime.retry(TurnRetryParams(session_id=sid, confirm=True))
    assert (up.model, up.tier) == ("claude-opus-5-5", "max")
    assert up.operation_id is not None
    await harness.status(sid, up.operation_id, S.DONE)
    top = await core.runtime.retry(TurnRetryParams(session_id=sid, confirm=True))
    assert (top.model, top.tier, top.ask_id) == ("claude-opus-5-5", "max", up.ask_id)
    assert top.operation_id is not None
    await harness.status(sid, top.operation_id, S.DONE)
    codes = [p.code for p in harness.payloads(sid, Route) if isinstance(p, Route)]
    assert codes == ["try_harder", "top_tier"]
    # The same model again ("same" tier) is also a retry in the group.
    same = await core.runtime.retry(TurnRetryParams(session_id=sid, tier="same"))
    assert (same.model, same.ask_id) == ("claude-opus-5-5", up.ask_id)


async def test_only_the_latest_turn_can_be_retried_and_bad_requests_change_nothing(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text="a", usage=USAGE), MockResponse(text="b", usage=USAGE)])
    core = await _core(harness)
    sid = await harness.session(core)
    empty = await harness.session(core)
    with pytest.raises(ProtocolError) as nothing:
        await core.runtime.retry(TurnRetryParams(session_id=empty))
    assert nothing.value.code == ErrorCode.NOT_RESUMABLE
    first = await _turn(harness, core, sid, "one")
    await _turn(harness, core, sid, "two")
    with pytest.raises(ProtocolError) as older:
        await core.runtime.retry(TurnRetryParams(session_id=sid, operation_id=first, confirm=True))
    assert older.value.code == ErrorCode.NOT_RESUMABLE
    with pytest.raises(ProtocolError) as unknown:
        await core.runtime.retry(TurnRetryParams(session_id=sid, operation_id="op_nope"))
    assert unknown.value.code == ErrorCode.OPERATION_NOT_FOUND
    with pytest.raises(ProtocolError) as no_session:
        await core.runtime.retry(TurnRetryParams(session_id="ses_nope"))
    assert no_session.value.code == ErrorCode.SESSION_NOT_FOUND
    assert len(mock_llm.requests) == 2
    assert not any(m.superseded for m in await core.sessions.messages(sid))


async def test_retrying_a_turn_that_used_tools_keeps_the_question_and_drops_the_whole_attempt(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="glob", arguments={"pattern": "*.md"})], usage=USAGE),
            MockResponse(text="There is a README.", usage=USAGE),
            MockResponse(text="Only README.md, at the top.", usage=USAGE),
        ]
    )
    core = await _core(harness)
    sid = await harness.session(core)
    await _turn(harness, core, sid, "What docs are there?")
    retry = await core.runtime.retry(TurnRetryParams(session_id=sid, confirm=True))
    assert retry.operation_id is not None
    await harness.status(sid, retry.operation_id, S.DONE)
    assert [(m["role"], m["content"]) for m in mock_llm.requests[2].messages] == [("user", "What docs are there?")]
