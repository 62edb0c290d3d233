"""Model choice through a core: what `list_models` reports as a session's choice, and when `set_model` refuses and
changes nothing."""

from __future__ import annotations

import pytest

from cowork.protocol import (
    ErrorCode,
    ModelListParams,
    ModelSetParams,
    OperationStatus,
    ProtocolError,
)
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio


async def test_a_sessions_pinned_model_and_effort_are_its_current_choice(harness: CoreHarness) -> None:
    core = await harness.core()
    session = await harness.session(core)
    defaults = await core.model_choices.list_models(ModelListParams())

    await core.model_choices.set_model(ModelSetParams(session_id=session, model="anthropic:claude-sonnet-5-5"))
    await core.sessions.update_settings(session, reasoning_effort="high")
    chosen = await core.model_choices.list_models(ModelListParams(session_id=session))

    assert (defaults.current_provider, defaults.auto) == ("openai", False)
    assert (chosen.current_provider, chosen.current_model, chosen.auto, chosen.reasoning_effort) == (
        "anthropic",
        "claude-sonnet-5-5",
        False,
        "high",
    )
    assert [p.id for p in chosen.providers] == [p.id for p in defaults.providers]


async def test_set_model_refuses_while_a_turn_waits_and_changes_nothing(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script(
        lambda request: MockResponse(tool_calls=[MockToolCall(name="glob", arguments={"pattern": "*"})])
    )
    core = await harness.core(env={"COWORK_AGENT__MAX_STEPS": "1"})
    session = await harness.session(core)
    operation = await harness.start(core, session, "look around")
    await harness.status(session, operation, OperationStatus.WAITING_FOR_HUMAN)
    before = harness.types(session)

    with pytest.raises(ProtocolError) as refused:
        await core.model_choices.set_model(ModelSetParams(session_id=session, model="anthropic:claude-sonnet-5-5"))

    assert (refused.value.code, str(refused.value)) == (
        ErrorCode.BUSY,
        "Cannot switch models while a turn is running.",
    )
    assert (await core.sessions.get(session)).provider is None
    assert harness.types(session) == before


async def test_auto_needs_something_for_the_router_to_choose(harness: CoreHarness) -> None:
    core = await harness.core("")  # no provider at all
    session = await harness.session(core)

    with pytest.raises(ProtocolError) as refused:
        await core.model_choices.set_model(ModelSetParams(session_id=session, model="auto"))
    with pytest.raises(ProtocolError) as unknown_session:
        await core.model_choices.set_model(ModelSetParams(session_id="nope", model="auto"))

    assert refused.value.code == ErrorCode.NO_PROVIDER
    assert (await core.sessions.get(session)).auto_model is False
    assert unknown_session.value.code == ErrorCode.SESSION_NOT_FOUND
