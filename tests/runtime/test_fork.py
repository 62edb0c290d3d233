"""`session/fork` on a real store: the new session holds the conversation up to the chosen message, the model
remembers exactly that, the two go on apart, and a bad request changes nothing."""

from __future__ import annotations

import pytest

from cowork.core import Core
from cowork.protocol import (
    AssistantMessage,
    ErrorCode,
    OperationStatus,
    ProtocolError,
    SessionForkParams,
    SessionListParams,
    UserMessage,
)
from cowork.store import repos
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio

S = OperationStatus


def echo(request: MockRequest) -> MockResponse:
    """Answers with every user message it was sent, so a test sees what the model remembers."""
    said = [m["content"] for m in request.messages if m["role"] == "user"]
    return MockResponse(text=" | ".join(str(s) for s in said))


def answers(harness: CoreHarness, sid: str) -> list[str]:
    return [p.text for p in harness.payloads(sid, AssistantMessage)]


async def turn(harness: CoreHarness, core: Core, sid: str, text: str) -> None:
    op = await harness.start(core, sid, text)
    await harness.status(sid, op, S.DONE)


async def two_turns(harness: CoreHarness, mock_llm: MockLLMServer) -> tuple[Core, str]:
    mock_llm.set_script(echo)
    core = await harness.core()
    sid = await harness.session(core)
    await turn(harness, core, sid, "first question")
    await turn(harness, core, sid, "second question")
    await core.journal.flush()
    return core, sid


async def test_fork_before_a_message_holds_what_came_before_and_goes_on_apart(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    core, sid = await two_turns(harness, mock_llm)
    source_events = len(harness.events[sid])

    forked = await core.runtime.fork_session(SessionForkParams(session_id=sid, before_message=2))
    fork = forked.session
    assert forked.message == "second question" and forked.messages == 1
    assert fork.id != sid and fork.title == "first question (fork)" and fork.workspace
    replayed = (await core.sessions.replay(fork.id, 0, 1000)).events
    assert [e.seq for e in replayed] == list(range(1, len(replayed) + 1)) and fork.last_seq == len(replayed)
    said = [e.payload.text for e in replayed if isinstance(e.payload, UserMessage)]
    assert said == ["first question"]
    assert all(getattr(e.payload, "title", None) is None for e in replayed)  # the fork keeps its own title
    assert not any(e.type == "usage" for e in replayed)  # spend stays the source's

    harness.watch(core, fork.id)
    await turn(harness, core, fork.id, "another second question")
    (answer,) = answers(harness, fork.id)
    assert answer == "first question | another second question"  # the model remembers only what came before

    # The source is as it was, and goes on with its own history.
    assert len((await core.sessions.replay(sid, 0, 1000)).events) == source_events
    await turn(harness, core, sid, "third question")
    assert answers(harness, sid)[-1] == "first question | second question | third question"


async def test_a_whole_fork_holds_every_finished_turn(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    core, sid = await two_turns(harness, mock_llm)
    forked = await core.runtime.fork_session(SessionForkParams(session_id=sid))
    assert forked.message is None and forked.messages == 2
    harness.watch(core, forked.session.id)
    await turn(harness, core, forked.session.id, "and then?")
    (answer,) = answers(harness, forked.session.id)
    assert answer == "first question | second question | and then?"
    found = await core.db.read(lambda conn: repos.search.search(conn, "second question", workspace=None, limit=10))
    assert {hit.session_id for hit in found} >= {sid, forked.session.id}  # the copy is searchable on its own


async def test_a_fork_before_the_first_message_starts_empty(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    core, sid = await two_turns(harness, mock_llm)
    forked = await core.runtime.fork_session(SessionForkParams(session_id=sid, before_message=1))
    assert forked.messages == 0 and forked.message == "first question" and forked.session.last_seq == 0
    row = await core.db.read(lambda conn: repos.sessions.get(conn, forked.session.id))
    assert row is not None and row.todos == "[]"
    messages = await core.db.read(lambda conn: repos.messages.for_session(conn, forked.session.id))
    assert messages == []


@pytest.mark.parametrize("number", [3, 0])
async def test_a_message_number_the_session_lacks_is_refused_and_nothing_is_made(
    harness: CoreHarness, mock_llm: MockLLMServer, number: int
) -> None:
    core, sid = await two_turns(harness, mock_llm)
    before = await core.sessions.list_sessions(SessionListParams(include_empty=True))
    if number == 0:
        with pytest.raises(ValueError):  # the wire model refuses it before the runtime sees it
            SessionForkParams(session_id=sid, before_message=number)
    else:
        with pytest.raises(ProtocolError) as refused:
            await core.runtime.fork_session(SessionForkParams(session_id=sid, before_message=number))
        assert refused.value.code == ErrorCode.INVALID_PARAMS and "2 message(s) of yours" in refused.value.message
    after = await core.sessions.list_sessions(SessionListParams(include_empty=True))
    assert [s.id for s in after] == [s.id for s in before]


async def test_an_unknown_session_is_not_found(harness: CoreHarness) -> None:
    core = await harness.core()
    with pytest.raises(ProtocolError) as refused:
        await core.runtime.fork_session(SessionForkParams(session_id="ses_nope"))
    assert refused.value.code == ErrorCode.SESSION_NOT_FOUND


async def test_a_turn_waiting_for_an_approval_is_left_out_of_a_whole_fork(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    core, sid = await two_turns(harness, mock_llm)
    mock_llm.set_script([MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "x"})])])
    op = await harness.start(core, sid, "mark it")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN)
    forked = await core.runtime.fork_session(SessionForkParams(session_id=sid))
    assert forked.message == "mark it" and forked.messages == 2
    replayed = (await core.sessions.replay(forked.session.id, 0, 1000)).events
    assert [e.payload.text for e in replayed if isinstance(e.payload, UserMessage)] == [
        "first question",
        "second question",
    ]
    assert not any(e.type == "approval_requested" for e in replayed)
    assert forked.session.active_operation_id is None
