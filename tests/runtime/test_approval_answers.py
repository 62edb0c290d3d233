"""What an approval shows and how it can be answered: the diff an edit or write would make, "allow for this
session" (by tool, or by command prefix), and what allowing never covers."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowork.core import Core
from cowork.policy import allowance_key, allowance_matches, describe_allowance
from cowork.protocol import (
    ApprovalRequested,
    ApprovalResolved,
    ApprovalRespondParams,
    ErrorCode,
    OperationStatus,
    ProtocolError,
    SessionUpdated,
    SessionUpdateParams,
    ToolResult,
)
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse, bash_step, tool_step

pytestmark = pytest.mark.anyio
S = OperationStatus


@pytest.mark.parametrize(
    ("command", "key"),
    [
        ("touch a.txt", "command:touch"),
        ("git commit -m 'a message'", "command:git commit"),
        ("git -C sub status", "command:git"),
        ("npm run build --silent", "command:npm run"),
        ("touch a; rm -rf b", None),
        ("touch a && curl example.com", None),
        ("touch $(whoami)", None),
        ("touch `id`", None),
        ("cat a | sh", None),
        ("echo hi > a.txt", None),
        ("FOO=1 touch a", None),
        ("touch a\nrm b", None),
    ],
)
def test_the_key_a_command_would_be_allowed_by(command: str, key: str | None) -> None:
    assert allowance_key("bash", command) == key


def test_an_allowance_covers_its_prefix_only() -> None:
    keys = ("command:git commit", "tool:edit")
    assert allowance_matches(keys, "bash", "git commit -am 'x'")
    assert not allowance_matches(keys, "bash", "git push")
    assert not allowance_matches(keys, "bash", "git commit -m x; git push")
    assert not allowance_matches(keys, "bash", "gitx commit")
    assert allowance_matches(keys, "edit", None) and not allowance_matches(keys, "write", None)
    assert describe_allowance("command:git commit") == "commands starting with git commit"
    assert describe_allowance("tool:edit") == "edit"


async def approval(harness: CoreHarness, sid: str, index: int = -1) -> ApprovalRequested:
    await harness.until(sid, lambda _e: len(harness.payloads(sid, ApprovalRequested)) > (index if index >= 0 else 0))
    return harness.payloads(sid, ApprovalRequested)[index]


async def test_allow_for_the_session_covers_later_calls_of_the_same_kind(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    mock_llm.set_script(
        [
            bash_step("touch one.txt"),
            bash_step("touch two.txt"),
            bash_step("touch three.txt && touch four.txt"),  # chained: asks although it starts with touch
            MockResponse(text="done"),
        ]
    )
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "make files")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN)
    first = await approval(harness, sid, 0)
    assert first.session_allow == "commands starting with touch" and not first.dangerous
    await core.runtime.respond_approval(
        ApprovalRespondParams(request_id=first.request_id, approved=True, scope="session")
    )
    await harness.until(sid, lambda _e: len(harness.payloads(sid, ApprovalRequested)) == 2)
    second = harness.payloads(sid, ApprovalRequested)[1]
    assert second.arguments["command"] == "touch three.txt && touch four.txt" and second.session_allow is None
    # The second touch ran without asking; the allowance is on the session, announced, in words.
    assert (workspace / "one.txt").exists() and (workspace / "two.txt").exists()
    (resolved,) = harness.payloads(sid, ApprovalResolved)
    assert resolved.scope == "session"
    assert harness.payloads(sid, SessionUpdated)[-1].allowances == ["commands starting with touch"]
    assert (await core.sessions.get(sid)).allowances == ["commands starting with touch"]
    # A chained call cannot be allowed for the session: refused, and nothing changes.
    with pytest.raises(ProtocolError) as info:
        await core.runtime.respond_approval(
            ApprovalRespondParams(request_id=second.request_id, approved=True, scope="session")
        )
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert (await core.sessions.get(sid)).allowances == ["commands starting with touch"]
    await core.runtime.respond_approval(ApprovalRespondParams(request_id=second.request_id, approved=False))
    await harness.status(sid, op, S.DONE)


async def test_allowances_survive_a_restart_and_can_be_cleared(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    mock_llm.set_script([bash_step("touch a.txt"), MockResponse(text="ok")])
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "one")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN)
    request = await approval(harness, sid)
    await core.runtime.respond_approval(
        ApprovalRespondParams(request_id=request.request_id, approved=True, scope="session")
    )
    await harness.status(sid, op, S.DONE)
    await core.stop()

    again: Core = await harness.core()
    harness.watch(again, sid)
    assert (await again.sessions.get(sid)).allowances == ["commands starting with touch"]
    mock_llm.set_script([bash_step("touch b.txt"), MockResponse(text="ok")])
    op = await harness.start(again, sid, "two", cmid="c2")
    await harness.status(sid, op, S.DONE)
    assert (workspace / "b.txt").exists() and not harness.payloads(sid, ApprovalRequested)

    info = await again.settings.update(SessionUpdateParams(session_id=sid, clear_allowances=True))
    assert info.allowances == []
    mock_llm.set_script([bash_step("touch c.txt"), MockResponse(text="ok")])
    op = await harness.start(again, sid, "three", cmid="c3")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN)
    await approval(harness, sid)


async def test_a_dangerous_call_is_never_offered_for_the_session(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([bash_step("rm -rf build"), MockResponse(text="ok")])
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "clean")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN)
    request = await approval(harness, sid)
    assert request.dangerous and request.session_allow is None
    (pending,) = (await core.runtime.pending(sid)).approvals
    assert pending.session_allow is None
    with pytest.raises(ProtocolError) as info:
        await core.runtime.respond_approval(
            ApprovalRespondParams(request_id=request.request_id, approved=True, scope="session")
        )
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert (await core.sessions.get(sid)).allowances == []
    (pending,) = (await core.runtime.pending(sid)).approvals  # still waiting for a real answer
    assert pending.request_id == request.request_id


async def test_an_edit_shows_its_diff_before_and_after(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    mock_llm.set_script(
        [
            tool_step("edit", filePath="notes.txt", oldString="beta", newString="BETA"),
            tool_step("write", filePath="new/hello.py", content="print('hi')\n"),
            tool_step("edit", filePath="../outside.txt", oldString="a", newString="b"),
            MockResponse(text="edited"),
        ]
    )
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "edit")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN)
    edit = await approval(harness, sid, 0)
    assert edit.preview is not None
    assert "--- a/notes.txt\n+++ b/notes.txt\n" in edit.preview and "-beta\n+BETA\n" in edit.preview
    assert edit.session_allow == "edit"
    (pending,) = (await core.runtime.pending(sid)).approvals
    assert pending.preview == edit.preview
    await core.runtime.respond_approval(ApprovalRespondParams(request_id=edit.request_id, approved=True))

    await harness.until(sid, lambda _e: len(harness.payloads(sid, ApprovalRequested)) == 2)
    write = harness.payloads(sid, ApprovalRequested)[1]
    assert write.preview is not None
    assert "--- /dev/null\n+++ b/new/hello.py\n" in write.preview and "+print('hi')\n" in write.preview
    await core.runtime.respond_approval(ApprovalRespondParams(request_id=write.request_id, approved=True))

    await harness.until(sid, lambda _e: len(harness.payloads(sid, ApprovalRequested)) == 3)
    outside = harness.payloads(sid, ApprovalRequested)[2]
    assert outside.preview is None  # outside the workspace: the path policy refuses it, so no preview is read
    await core.runtime.respond_approval(ApprovalRespondParams(request_id=outside.request_id, approved=False))
    await harness.status(sid, op, S.DONE)

    results = {r.name: r for r in harness.payloads(sid, ToolResult) if not r.rejected}
    assert results["edit"].diff is not None and "-beta\n+BETA\n" in results["edit"].diff
    assert results["write"].diff is not None and "+print('hi')\n" in results["write"].diff
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "alpha\nBETA\ngamma\n"

    # What the session changed, file by file, against each file before its first change.
    changed = await core.runtime.session_diff(sid)
    by_path = {c.path: c for c in changed.files}
    assert set(by_path) == {"notes.txt", "new/hello.py"} and not changed.truncated
    assert by_path["notes.txt"].status == "modified" and "-beta\n+BETA\n" in by_path["notes.txt"].diff
    assert (by_path["notes.txt"].additions, by_path["notes.txt"].deletions) == (1, 1)
    assert by_path["new/hello.py"].status == "added"
    # A file put back as it was drops out; a deleted one shows as deleted.
    (workspace / "notes.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    (workspace / "new" / "hello.py").unlink()
    assert [c.path for c in (await core.runtime.session_diff(sid)).files] == []
    with pytest.raises(ProtocolError) as missing:
        await core.runtime.session_diff("ses_missing")
    assert missing.value.code == ErrorCode.SESSION_NOT_FOUND
