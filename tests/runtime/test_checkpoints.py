"""Checkpoints through real turns: files changed in several steps (edits, writes, shell commands that add, delete,
rename and make binary files) come back byte for byte with `session/undo` and `session/rewind`, a preview changes
nothing, files changed outside Cowork refuse a restore until forced, and the model is told what was taken back."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from cowork.core import Core
from cowork.protocol import (
    ApprovalRespondParams,
    ErrorCode,
    LogLine,
    OperationStatus,
    ProtocolError,
    SessionRewindParams,
    SessionUndoParams,
    SessionUpdateParams,
    ToolResult,
    UserMessage,
)
from cowork.sessions._shadow import ShadowRepo
from cowork.store import repos
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockRequest, MockResponse, bash_step, tool_step

pytestmark = pytest.mark.anyio
S = OperationStatus


def tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `root` (not Cowork's own folders) with its bytes and whether it is executable."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".cowork")]
        for name in files:
            path = Path(folder, name)
            out[path.relative_to(root).as_posix()] = (path.read_bytes(), os.stat(path).st_mode & stat.S_IXUSR)
    return out


async def yolo_session(harness: CoreHarness, core: Core) -> str:
    sid = await harness.session(core)
    await core.settings.update(SessionUpdateParams(session_id=sid, yolo=True))
    return sid


async def turn(harness: CoreHarness, core: Core, sid: str, text: str) -> None:
    op = await harness.start(core, sid, text)
    await harness.status(sid, op, S.DONE)


def seed(workspace: Path) -> dict[str, tuple[bytes, int]]:
    (workspace / "notes.txt").write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")  # CRLF kept as it is
    (workspace / "old.txt").write_text("to be renamed\n")
    (workspace / "gone.txt").write_text("to be deleted\n")
    (workspace / "tool.sh").write_text("echo hi\n")
    (workspace / "image.bin").write_bytes(bytes(range(256)) * 4)
    (workspace / ".gitattributes").write_text("* text eol=lf\n*.bin filter=evil\n")  # must not change any byte
    return tree(workspace)


CHANGES = [
    tool_step("write", filePath="new/a.txt", content="a new file\n"),
    tool_step("edit", filePath="notes.txt", oldString="beta", newString="BETA"),
    bash_step("mv old.txt renamed.txt && rm gone.txt && chmod +x tool.sh && printf '\\000\\001\\002' > image.bin"),
    bash_step("ls"),  # changes nothing: no checkpoint
    MockResponse(text="changed"),
]


async def changed_in_two_turns(harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path) -> tuple[Core, str]:
    mock_llm.set_script(
        [*CHANGES, tool_step("write", filePath="second.txt", content="second turn\n"), MockResponse(text="ok")]
    )
    core = await harness.core()
    sid = await yolo_session(harness, core)
    await turn(harness, core, sid, "change things")
    await turn(harness, core, sid, "one more")
    return core, sid


async def test_undo_then_rewind_restore_the_exact_bytes(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    before = seed(workspace)
    core, sid = await changed_in_two_turns(harness, mock_llm, workspace)
    assert (workspace / "renamed.txt").exists() and not (workspace / "gone.txt").exists()
    after_first = {k: v for k, v in tree(workspace).items() if k != "second.txt"}

    listed = (await core.runtime.list_checkpoints(sid)).checkpoints
    assert [(c.tool, c.message, c.undone) for c in listed] == [
        ("write", 2, False),
        ("bash", 1, False),
        ("edit", 1, False),
        ("write", 1, False),
    ]
    assert sorted(listed[1].files) == ["gone.txt", "image.bin", "old.txt", "renamed.txt", "tool.sh"]
    assert listed[0].files == ["second.txt"] and listed[3].files == ["new/a.txt"]

    # The preview touches nothing.
    preview = await core.runtime.undo(SessionUndoParams(session_id=sid))
    assert not preview.applied and [(f.path, f.status) for f in preview.files] == [("second.txt", "deleted")]
    assert "-second turn" in preview.files[0].diff and (workspace / "second.txt").exists()

    done = await core.runtime.undo(SessionUndoParams(session_id=sid, apply=True))
    assert done.applied and done.checkpoints[0].undone and done.conflicts == []
    assert tree(workspace) == after_first

    preview = await core.runtime.rewind(SessionRewindParams(session_id=sid, before_message=1, restore="files"))
    statuses = {f.path: f.status for f in preview.files}
    assert statuses == {
        "new/a.txt": "deleted",
        "notes.txt": "modified",
        "gone.txt": "added",
        "old.txt": "added",
        "renamed.txt": "deleted",
        "tool.sh": "modified",
        "image.bin": "modified",
    }
    assert "binary file" in next(f.diff for f in preview.files if f.path == "image.bin")
    rewound = await core.runtime.rewind(
        SessionRewindParams(session_id=sid, before_message=1, restore="files", apply=True)
    )
    assert rewound.applied and rewound.fork is None and len(rewound.checkpoints) == 3
    assert tree(workspace) == before  # bytes, deletions, renames, new files, the executable bit
    assert not (workspace / "new").exists()  # the folder the write made is gone with its file

    with pytest.raises(ProtocolError) as error:
        await core.runtime.undo(SessionUndoParams(session_id=sid))
    assert error.value.code == ErrorCode.NOTHING_TO_UNDO
    assert all(c.undone for c in (await core.runtime.list_checkpoints(sid)).checkpoints)
    logs = [p.text for p in harness.payloads(sid, LogLine) if p.operation_id is None]
    assert logs[0].startswith("Took back the last change (write): second.txt is as before.")
    assert logs[1].startswith("Took back 3 change(s)")


async def test_files_changed_outside_cowork_refuse_the_restore_until_forced(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    mock_llm.set_script([tool_step("write", filePath="a.txt", content="by the agent\n"), MockResponse(text="done")])
    (workspace / "a.txt").write_text("mine\n")
    core = await harness.core()
    sid = await yolo_session(harness, core)
    await turn(harness, core, sid, "write a")
    (workspace / "a.txt").write_text("edited by me afterwards\n")

    preview = await core.runtime.rewind(SessionRewindParams(session_id=sid, before_message=1, restore="files"))
    assert preview.conflicts == ["a.txt"]
    assert "-edited by me afterwards" in preview.files[0].diff and "+mine" in preview.files[0].diff
    with pytest.raises(ProtocolError) as error:
        await core.runtime.rewind(SessionRewindParams(session_id=sid, before_message=1, restore="files", apply=True))
    assert error.value.code == ErrorCode.FILES_CHANGED and "a.txt" in error.value.message
    assert (workspace / "a.txt").read_text() == "edited by me afterwards\n"  # nothing changed
    assert not (await core.runtime.list_checkpoints(sid)).checkpoints[0].undone

    # Only the conflicts the user saw may be overwritten: one not among them refuses the restore.
    with pytest.raises(ProtocolError) as error:
        await core.runtime.rewind(
            SessionRewindParams(session_id=sid, before_message=1, restore="files", apply=True, overwrite=["b.txt"])
        )
    assert error.value.code == ErrorCode.FILES_CHANGED
    assert (workspace / "a.txt").read_text() == "edited by me afterwards\n"
    accepted = await core.runtime.rewind(
        SessionRewindParams(session_id=sid, before_message=1, restore="files", apply=True, overwrite=["a.txt"])
    )
    assert accepted.applied and (workspace / "a.txt").read_text() == "mine\n"


async def test_rewinding_the_conversation_forks_and_keeps_the_branch(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    before = seed(workspace)
    core, sid = await changed_in_two_turns(harness, mock_llm, workspace)
    events_before = len((await core.sessions.replay(sid, 0, 1000)).events)

    preview = await core.runtime.rewind(SessionRewindParams(session_id=sid, before_message=2, restore="conversation"))
    assert preview.files == [] and preview.fork is None  # nothing happens in a preview

    done = await core.runtime.rewind(SessionRewindParams(session_id=sid, before_message=2, restore="both", apply=True))
    assert done.fork is not None and done.fork.message == "one more" and done.fork.messages == 1
    assert not (workspace / "second.txt").exists() and (workspace / "new/a.txt").exists()
    replayed = (await core.sessions.replay(done.fork.session.id, 0, 1000)).events
    assert [e.payload.text for e in replayed if isinstance(e.payload, UserMessage)] == ["change things"]
    # The branch left behind is all there (with one more log line saying what was taken back).
    assert len((await core.sessions.replay(sid, 0, 1000)).events) == events_before + 1

    # The fork holds the checkpoints of the turn it holds: rewinding in it takes back the first turn's changes.
    fork_id = done.fork.session.id
    listed = (await core.runtime.list_checkpoints(fork_id)).checkpoints
    assert [(c.tool, c.message) for c in listed] == [("bash", 1), ("edit", 1), ("write", 1)]
    await core.runtime.rewind(SessionRewindParams(session_id=fork_id, before_message=1, restore="files", apply=True))
    assert tree(workspace) == before
    assert not any(c.undone for c in (await core.runtime.list_checkpoints(sid)).checkpoints[1:])  # the source's own


async def test_the_model_is_told_what_was_taken_back(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    seen: list[list[str]] = []

    def script(request: MockRequest) -> MockResponse:
        said = [str(m["content"]) for m in request.messages if m["role"] == "user"]
        seen.append(said)
        if said[-1] == "write it" and not any(m["role"] == "tool" for m in request.messages):
            return tool_step("write", filePath="x.txt", content="x\n")
        return MockResponse(text="ok")

    mock_llm.set_script(script)
    core = await harness.core()
    sid = await yolo_session(harness, core)
    await turn(harness, core, sid, "write it")
    await core.runtime.undo(SessionUndoParams(session_id=sid, apply=True))
    await turn(harness, core, sid, "and now?")
    last = seen[-1]
    assert last[-1] == "and now?"
    assert any("took back the last change (write)" in s and "x.txt" in s for s in last[:-1])
    shown = await core.sessions.messages(sid)
    assert shown and not any("took back" in m.text for m in shown)  # not shown as something the user said


async def test_bad_requests_change_nothing(harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path) -> None:
    mock_llm.set_script([tool_step("write", filePath="a.txt", content="a\n"), MockResponse(text="done")])
    core = await harness.core()
    sid = await yolo_session(harness, core)
    with pytest.raises(ProtocolError) as error:
        await core.runtime.undo(SessionUndoParams(session_id=sid))
    assert error.value.code == ErrorCode.NOTHING_TO_UNDO
    await turn(harness, core, sid, "write")
    with pytest.raises(ProtocolError) as error:
        await core.runtime.rewind(SessionRewindParams(session_id=sid, before_message=2, apply=True))
    assert error.value.code == ErrorCode.INVALID_PARAMS and "1 message(s)" in error.value.message
    with pytest.raises(ProtocolError) as error:
        await core.runtime.undo(SessionUndoParams(session_id="ses_nope", apply=True))
    assert error.value.code == ErrorCode.SESSION_NOT_FOUND
    assert (workspace / "a.txt").read_text() == "a\n"
    assert not (await core.runtime.list_checkpoints(sid)).checkpoints[0].undone


async def test_a_restore_never_writes_through_a_link_made_since(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "sub").mkdir()
    (workspace / "sub" / "f.txt").write_text("original\n")
    mock_llm.set_script(
        [
            tool_step("edit", filePath="sub/f.txt", oldString="original", newString="changed"),
            bash_step(f"mv sub sub.real && ln -s {outside} sub"),
            MockResponse(text="done"),
        ]
    )
    core = await harness.core()
    sid = await yolo_session(harness, core)
    await turn(harness, core, sid, "go")
    undo = await core.runtime.undo(SessionUndoParams(session_id=sid, apply=True, force=True))  # the command
    assert (workspace / "sub").is_dir() and not (workspace / "sub").is_symlink()
    # Make the link again by hand, then take back the edit: it must not write into the linked folder.
    os.rename(workspace / "sub", workspace / "sub.mine")
    os.symlink(outside, workspace / "sub")
    undo = await core.runtime.undo(SessionUndoParams(session_id=sid, apply=True, force=True))
    assert undo.skipped == ["sub/f.txt: sub is a link now"]
    assert list(outside.iterdir()) == []


async def test_checkpoints_are_pruned_with_their_content(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path, home: Path
) -> None:
    mock_llm.set_script([tool_step("write", filePath="a.txt", content="new content\n"), MockResponse(text="done")])
    (workspace / "a.txt").write_text("old content, kept for undo\n")
    core = await harness.core()
    sid = await yolo_session(harness, core)
    await turn(harness, core, sid, "write")
    (row,) = await core.db.read(lambda conn: repos.checkpoints.for_session(conn, sid))
    repo = ShadowRepo(ShadowRepo.location(home, workspace), workspace, [])
    assert repo.read(row.files[0].before_blob or "") == b"old content, kept for undo\n"

    core.checkpoints.config = core.checkpoints.config.model_copy(update={"keep_days": 1e-9})
    assert await core.checkpoints.prune() == 1
    assert (await core.runtime.list_checkpoints(sid)).checkpoints == []
    with pytest.raises(OSError):
        repo.read(row.files[0].before_blob or "")


async def test_a_turn_under_way_refuses_a_restore(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    mock_llm.set_script(
        [
            tool_step("write", filePath="a.txt", content="a\n"),
            MockResponse(text="one"),
            bash_step("rm a.txt"),
            MockResponse(text="two"),
        ]
    )
    core = await harness.core()
    sid = await harness.session(core)  # approvals on: the second turn waits for one
    op = await harness.start(core, sid, "write")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN)
    (pending,) = (await core.runtime.pending(sid)).approvals
    await core.runtime.respond_approval(ApprovalRespondParams(request_id=pending.request_id, approved=True))
    await harness.status(sid, op, S.DONE)
    second = await harness.start(core, sid, "remove it")
    await harness.status(sid, second, S.WAITING_FOR_HUMAN)
    with pytest.raises(ProtocolError) as error:
        await core.runtime.undo(SessionUndoParams(session_id=sid, apply=True))
    assert error.value.code == ErrorCode.BUSY
    assert (workspace / "a.txt").exists()
    preview = await core.runtime.undo(SessionUndoParams(session_id=sid))  # a preview is fine meanwhile
    assert [f.path for f in preview.files] == ["a.txt"]


async def test_limits_large_files_and_large_folders(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    (workspace / "big.txt").write_text("x" * 3000 + "\nend\n")
    for index in range(30):
        (workspace / f"f{index}.txt").write_text(f"{index}\n")
    mock_llm.set_script(
        [
            tool_step("edit", filePath="big.txt", oldString="end", newString="END"),
            bash_step("rm f1.txt"),
            tool_step("write", filePath="f2.txt", content="two\n"),
            MockResponse(text="done"),
        ]
    )
    env = {"COWORK_CHECKPOINTS__MAX_FILE_MB": str(2000 / 1024 / 1024), "COWORK_CHECKPOINTS__MAX_FOLDER_FILES": "20"}
    core = await harness.core(env=env)
    sid = await yolo_session(harness, core)
    await turn(harness, core, sid, "go")
    listed = (await core.runtime.list_checkpoints(sid)).checkpoints
    # The command in a folder of more than 20 files was not checkpointed; the edit and the write were.
    assert [(c.tool, c.files) for c in listed] == [("write", ["f2.txt"]), ("edit", ["big.txt"])]
    await core.runtime.undo(SessionUndoParams(session_id=sid, apply=True))
    assert (workspace / "f2.txt").read_text() == "2\n"
    undo = await core.runtime.undo(SessionUndoParams(session_id=sid, apply=True))
    assert undo.skipped == ["big.txt: it was too large to keep, or not a file"] and undo.files == []
    assert (workspace / "big.txt").read_text().endswith("END\n")

    # A higher limit looks at the folder again.
    core.checkpoints.config = core.checkpoints.config.model_copy(update={"max_folder_files": 1000})
    mock_llm.set_script([bash_step("rm f3.txt"), MockResponse(text="done")])
    await turn(harness, core, sid, "again")
    assert (await core.runtime.list_checkpoints(sid)).checkpoints[0].files == ["f3.txt"]


async def test_deleting_a_session_deletes_its_checkpoints_and_then_their_content(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path, home: Path
) -> None:
    mock_llm.set_script([tool_step("write", filePath="a.txt", content="new\n"), MockResponse(text="done")])
    (workspace / "a.txt").write_text("old, kept for undo\n")
    core = await harness.core()
    sid = await yolo_session(harness, core)
    await turn(harness, core, sid, "write")
    (row,) = await core.db.read(lambda conn: repos.checkpoints.for_session(conn, sid))
    repo = ShadowRepo(ShadowRepo.location(home, workspace), workspace, [])
    assert repo.read(row.files[0].before_blob or "") == b"old, kept for undo\n"
    await core.runtime.delete_session(sid)
    assert await core.db.read(lambda conn: repos.checkpoints.for_session(conn, sid)) == []
    assert await core.checkpoints.prune() == 0
    with pytest.raises(OSError):
        repo.read(row.files[0].before_blob or "")


async def test_what_a_cancelled_command_changed_can_be_taken_back(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    mock_llm.set_script([bash_step("echo changed > a.txt && rm b.txt && sleep 60"), MockResponse(text="never")])
    (workspace / "a.txt").write_text("original\n")
    (workspace / "b.txt").write_text("kept\n")
    core = await harness.core()
    sid = await yolo_session(harness, core)
    op = await harness.start(core, sid, "go")
    for _ in range(200):
        if not (workspace / "b.txt").exists():
            break
        await asyncio.sleep(0.05)
    await core.runtime.cancel(sid, op)
    await harness.status(sid, op, S.CANCELLED)
    (listed,) = (await core.runtime.list_checkpoints(sid)).checkpoints
    assert listed.tool == "bash" and listed.files == ["a.txt", "b.txt"]
    await core.runtime.undo(SessionUndoParams(session_id=sid, apply=True))
    assert (workspace / "a.txt").read_text() == "original\n" and (workspace / "b.txt").read_text() == "kept\n"


def test_turn_numbers_follow_sub_agents_and_retries_to_their_turn() -> None:
    from datetime import UTC, datetime

    from cowork.runtime._fork import turn_numbers
    from cowork.store import OperationRow

    now = datetime.now(UTC)

    def op(op_id: str, *, parent: str | None = None, ask: str | None = None) -> OperationRow:
        return OperationRow(
            op_id, "s", None, "chat", "done", None, None, now, now, parent_operation_id=parent, ask_id=ask
        )

    operations = [
        op("t1"),
        op("t2"),
        op("agent", parent="t2"),
        op("nested", parent="agent"),
        op("retry", ask="t1"),
        op("agent-of-retry", parent="retry"),
        op("stray"),
    ]
    numbers = turn_numbers(["t1", "t2"], operations)
    assert numbers == {"t1": 1, "t2": 2, "agent": 2, "nested": 2, "retry": 1, "agent-of-retry": 1}


async def test_excluded_folders_do_not_count_towards_the_folder_limit(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    for index in range(5):
        (workspace / f"f{index}.txt").write_text(f"{index}\n")
    (workspace / "node_modules" / "dep").mkdir(parents=True)
    for index in range(50):
        (workspace / "node_modules" / "dep" / f"m{index}.js").write_text("//\n")
    mock_llm.set_script([bash_step("rm f1.txt node_modules/dep/m1.js"), MockResponse(text="done")])
    core = await harness.core(env={"COWORK_CHECKPOINTS__MAX_FOLDER_FILES": "20"})
    sid = await yolo_session(harness, core)
    await turn(harness, core, sid, "go")
    (listed,) = (await core.runtime.list_checkpoints(sid)).checkpoints
    assert listed.files == ["f1.txt"]  # node_modules/ is excluded: not counted, not kept


async def test_the_session_diff_shows_what_commands_changed_too(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    seed(workspace)
    core, sid = await changed_in_two_turns(harness, mock_llm, workspace)
    changed = {c.path: c for c in (await core.runtime.session_diff(sid)).files}
    assert {path: c.status for path, c in changed.items()} == {
        "gone.txt": "deleted",
        "image.bin": "modified",
        "new/a.txt": "added",
        "notes.txt": "modified",
        "old.txt": "deleted",
        "renamed.txt": "added",
        "second.txt": "added",
        "tool.sh": "modified",
    }
    assert "-beta\r\n+BETA\r\n" in changed["notes.txt"].diff and "+to be renamed" in changed["renamed.txt"].diff
    assert changed["image.bin"].diff == "binary file, 1,024 bytes → binary file, 3 bytes\n"
    assert changed["tool.sh"].diff == "mode 100644 → 100755\n"
    # Taken back, a change leaves the diff.
    await core.runtime.undo(SessionUndoParams(session_id=sid, apply=True))
    assert "second.txt" not in {c.path for c in (await core.runtime.session_diff(sid)).files}


async def test_a_large_file_a_command_makes_is_left_out(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    mock_llm.set_script(
        [
            bash_step("echo b > b.txt"),  # the folder's first snapshot happens before this one
            bash_step("head -c 5000 /dev/zero > big.bin && echo c > c.txt"),
            MockResponse(text="done"),
        ]
    )
    core = await harness.core(env={"COWORK_CHECKPOINTS__MAX_FILE_MB": str(2000 / 1024 / 1024)})
    sid = await yolo_session(harness, core)
    await turn(harness, core, sid, "go")
    listed = (await core.runtime.list_checkpoints(sid)).checkpoints
    assert [c.files for c in listed] == [["c.txt"], ["b.txt"]]  # big.bin was never read into the shadow repository
    await core.runtime.undo(SessionUndoParams(session_id=sid, apply=True))
    assert not (workspace / "c.txt").exists() and (workspace / "big.bin").stat().st_size == 5000


async def test_a_file_name_that_is_not_utf8_does_not_lose_the_checkpoint(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    mock_llm.set_script(
        [bash_step("printf x > $(printf 'bad\\377name') && echo ok > ok.txt"), MockResponse(text="done")]
    )
    core = await harness.core()
    sid = await yolo_session(harness, core)
    await turn(harness, core, sid, "go")
    assert os.fsdecode(b"bad\xffname") in os.listdir(workspace)
    (listed,) = (await core.runtime.list_checkpoints(sid)).checkpoints
    assert listed.files == ["ok.txt"]


async def test_without_git_edits_and_writes_are_still_checkpointed(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "a.txt").write_text("before\n")
    mock_llm.set_script(
        [
            tool_step("write", filePath="a.txt", content="after\n"),
            bash_step("echo c > c.txt"),  # not checkpointed: snapshots need git
            MockResponse(text="done"),
        ]
    )
    core = await harness.core()
    sid = await yolo_session(harness, core)
    with monkeypatch.context() as patched:
        patched.setattr("cowork.sessions._shadow.git_path", lambda: None)
        await turn(harness, core, sid, "go")
        (listed,) = (await core.runtime.list_checkpoints(sid)).checkpoints
        assert listed.tool == "write"
        await core.runtime.undo(SessionUndoParams(session_id=sid, apply=True))
        assert (workspace / "a.txt").read_text() == "before\n" and (workspace / "c.txt").exists()

    # Once git is there, the folder's repository is made properly and commands are checkpointed too.
    mock_llm.set_script([bash_step("echo d > d.txt"), MockResponse(text="done")])
    await turn(harness, core, sid, "again")
    assert (await core.runtime.list_checkpoints(sid)).checkpoints[0].files == ["d.txt"]


async def test_a_result_names_the_files_its_call_made_or_changed(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    """What a call changed, as its checkpoint saw it, reaches the clients with its result (they offer previews)."""
    core = await harness.core()
    sid = await yolo_session(harness, core)
    (workspace / "gone.txt").write_text("x\n")
    mock_llm.set_script(
        [
            bash_step("mkdir -p out && printf 'a,b\\n' > out/table.csv && rm gone.txt"),
            tool_step("write", filePath="report.md", content="# Report\n"),
            tool_step("read", filePath="report.md"),
            MockResponse(text="done"),
        ]
    )
    await turn(harness, core, sid, "make things")
    results = {r.name: r.files for r in harness.payloads(sid, ToolResult)}
    assert results == {"bash": ["out/table.csv"], "write": ["report.md"], "read": []}  # a deletion is not named
