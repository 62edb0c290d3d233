"""Semantic recall in real turns (mock LLM, real local embedder): a finished turn is indexed for its folder; the
`recall` tool in another conversation finds it by meaning, never the asking conversation's own turns; `auto` puts
it in the prompt; a sync embeds each turn once; deleting the session takes its turns out of the index."""

from __future__ import annotations

import pytest

from cowork.protocol import OperationStatus, SessionRef
from cowork.server._handlers.sessions import session_delete
from cowork.store.repos import retrieval as repo
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step

pytestmark = pytest.mark.anyio

QUESTION = "Our Berlin office lease ends in March 2027. We decided today to renew it for five more years."
ANSWER = "Noted: the Berlin office lease will be renewed for five years when it ends in March 2027."
FOLLOW_UP = "what did we agree about the rental contract for the German branch?"


async def _turn(harness: CoreHarness, core, sid: str, text: str) -> None:
    op = await harness.start(core, sid, text)
    await harness.status(sid, op, OperationStatus.DONE)


async def test_another_conversation_recalls_a_finished_turn(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    core = await harness.core(env={"COWORK_MEMORY__RECALL_QUIET_SECONDS": "3600"})  # only explicit syncs here
    mock_llm.set_script(
        [
            MockResponse(text=ANSWER),
            tool_step("recall", query=FOLLOW_UP),
            MockResponse(text="You agreed to renew it."),
            tool_step("recall", query=FOLLOW_UP),
            MockResponse(text="Only that."),
        ]
    )
    first = await harness.session(core)
    await _turn(harness, core, first, QUESTION)
    assert await core.recall.sync() == 1
    assert await core.recall.sync() == 0  # the watermark and the content hash: never embedded twice

    second = await harness.session(core)
    await _turn(harness, core, second, "remind me")
    found = mock_llm.requests[2].last_tool_results[0]["content"]
    assert found.startswith("1 earlier turn(s)") and "renew it for five more years" in found
    assert f'<untrusted_content source="conversation {first}/' in found

    # The asking conversation's own turns are not searched: from the first session, only the second one's.
    await _turn(harness, core, first, "remind me")
    own = mock_llm.requests[4].last_tool_results[0]["content"]
    assert f"conversation {second}/" in own and f"conversation {first}/" not in own

    assert await core.recall.sync() == 1  # the last turn; the others are known
    scope = str(harness.workspace.resolve())
    sources = await core.db.read(lambda c: repo.sources(c, "conversations", scope))
    assert len(sources) == 3  # the three turns (the two tool turns' answers too), each once
    await session_delete(core, None, SessionRef(session_id=first))
    left = await core.db.read(lambda c: repo.sources(c, "conversations", scope))
    assert [s.uri.split("/")[0] for s in left] == [second]
    hits = await core.recall.search(harness.workspace, FOLLOW_UP, limit=5, exclude_session=None, min_similarity=None)
    assert all(not h.uri.startswith(first) for h in hits)


async def test_auto_recall_puts_related_turns_in_the_prompt(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    core = await harness.core(env={"COWORK_MEMORY__RECALL": "auto", "COWORK_MEMORY__RECALL_QUIET_SECONDS": "0"})
    mock_llm.set_script(
        [MockResponse(text=ANSWER), MockResponse(text="Renew for five years."), MockResponse(text="Lima.")]
    )
    await _turn(harness, core, await harness.session(core), QUESTION)
    await core.recall.sync()  # a turn does not wait behind a sync under way: let the quiet-moment one finish
    second = await harness.session(core)
    await _turn(harness, core, second, FOLLOW_UP)
    system = mock_llm.requests[1].system or ""
    assert "# From earlier conversations in this folder" in system and "renew it for five more years" in system
    await _turn(harness, core, second, "what is the capital of Peru?")
    assert "# From earlier conversations" not in (mock_llm.requests[2].system or "")  # nothing similar enough


async def test_recall_off_indexes_nothing_and_the_tool_says_so(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    core = await harness.core(env={"COWORK_MEMORY__RECALL": "off"})
    mock_llm.set_script([MockResponse(text=ANSWER), tool_step("recall", query=FOLLOW_UP), MockResponse(text="ok")])
    await _turn(harness, core, await harness.session(core), QUESTION)
    assert await core.recall.sync() == 0
    await _turn(harness, core, await harness.session(core), "remind me")
    assert "Recall of past conversations is off" in mock_llm.requests[2].last_tool_results[0]["content"]
