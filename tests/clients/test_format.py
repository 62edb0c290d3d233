"""The formatting the CLI and the TUI share: one-line tool summaries, sizes, money, todos, the unknown-event line."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cowork.clients import format as fmt
from cowork.protocol import (
    CheckpointInfo,
    FileChange,
    ReceivedPayload,
    SessionRestoreResult,
    Todo,
    ToolResult,
    UnknownPayload,
    UserMessage,
)


def result(content: str, *, error: bool = False) -> ToolResult:
    return ToolResult(operation_id="o", step=1, tool_call_id="t", name="read", is_error=error, content=content)


def test_arguments_fit_one_line() -> None:
    assert fmt.summarize_arguments({"filePath": "a.md", "limit": 20}) == "filePath=a.md, limit=20"
    assert fmt.summarize_arguments({"command": "ls\npwd"}) == "command=ls pwd"
    assert fmt.summarize_arguments({"text": "x" * 100}, width=10) == "text=xxxx…"


def test_results_are_summarised_by_size_or_their_first_error_line() -> None:
    assert fmt.result_size("") == "0 lines, 0 chars"
    assert fmt.result_size("one\ntwo") == "2 lines, 7 chars"
    assert fmt.result_summary(result("a\nb\n"), 80) == "2 lines, 4 chars"
    assert fmt.result_summary(result("no such file: a.md\nmore", error=True), 7) == "no such"
    assert fmt.result_summary(result("", error=True), 80) == "error"


def test_money_and_todos() -> None:
    assert (fmt.money(0.04213), fmt.money(1.5, 2)) == ("$0.0421", "$1.50")
    assert (fmt.money(0.00004), fmt.money(0.0), fmt.money(0.001, 2)) == ("<$0.0001", "$0.0000", "<$0.01")
    # An unknown price is said in words, never as `$0.0000+?`.
    assert fmt.cost(0.0, known=False) == "price unknown"
    assert fmt.cost(0.0123, known=False) == "$0.0123 + price unknown"
    assert fmt.cost(0.0123, known=True) == "$0.0123"


def test_shortening_never_cuts_a_word() -> None:
    text = "Read a file from the workspace, with line numbers, paging through large ones"
    short = fmt.shorten(text, 40)
    assert short == "Read a file from the workspace, with…" and len(short) <= 40
    assert fmt.shorten("short  text\n here", 40) == "short text here"
    assert fmt.shorten("x" * 50, 10) == "x" * 9 + "…"
    todos = [Todo(content="Read", status="completed"), Todo(content="Fix", status="in_progress", active_form="Fixing")]
    assert fmt.render_todos(todos, indent="  ").plain == "  ✔ Read\n  ◐ Fixing\n"


def test_an_unknown_event_is_one_neutral_line() -> None:
    assert fmt.unknown_event(UnknownPayload(type="hologram")).plain == "· event hologram"
    line = fmt.unknown_event(UnknownPayload(type="tool_call", problem="step: Field required"))
    assert line.plain == "· event tool_call (unreadable: step: Field required)" and line.style == "dim"


def restore_result(**changes: object) -> SessionRestoreResult:
    data: dict[str, object] = {
        "applied": False,
        "files": [
            FileChange(
                path="notes.txt", status="modified", diff="--- a\n+++ b\n@@ -1 +1 @@\n-BETA\n+beta", deletions=1
            ),
            FileChange(path="new.txt", status="deleted", diff="-made by the agent", deletions=1),
        ],
        "checkpoints": [
            CheckpointInfo(
                id=3,
                operation_id="op",
                tool_call_id="t",
                tool="edit",
                message=2,
                files=["notes.txt"],
                created_at=datetime(2025, 1, 1, tzinfo=UTC),
                undone=False,
            )
        ],
    }
    return SessionRestoreResult.model_validate(data | changes)


def test_a_restore_preview_shows_each_file_with_its_coloured_diff_then_what_cannot_be_restored() -> None:
    preview = restore_result(skipped=["sub/f.txt: sub is a link now"])
    text = fmt.restore_diff(preview)
    assert text.plain == (
        "modified notes.txt  +0 -1\n--- a\n+++ b\n@@ -1 +1 @@\n-BETA\n+beta\n"
        "deleted new.txt  +0 -1\n-made by the agent\n"
        "not restored: sub/f.txt: sub is a link now"
    )
    styles = {text.plain[span.start : span.end]: str(span.style) for span in text.spans}
    assert styles["-BETA\n"] == "red" and styles["+beta"] == "green" and styles["notes.txt"] == "bold cyan"
    nothing = fmt.restore_diff(restore_result(files=[]), empty="No file changes since then.")
    assert nothing.plain == "No file changes since then."
    assert fmt.undo_heading(preview) == "The last change to the files (edit, in your message 2)"
    assert fmt.undo_heading(restore_result(checkpoints=[])) == "The last change to the files"


def test_files_changed_outside_cowork_are_a_warning_and_what_was_restored_is_said() -> None:
    assert fmt.conflict_warning(restore_result(), "undoing") is None
    warning = fmt.conflict_warning(restore_result(conflicts=["a.txt", "b\x1b.txt"]), "undoing")
    assert warning is not None and warning.style == "bold red"
    assert warning.plain == "⚠ changed outside Cowork since: a.txt, b\\x1b.txt — undoing overwrites that"
    done = fmt.restored(restore_result(applied=True, skipped=["x.bin: too big"]))
    assert done.plain == "Files restored: notes.txt (restored), new.txt (removed).\nnot restored: x.bin: too big"
    assert fmt.restored(restore_result(applied=True, files=[])).plain == "No file needed restoring."


def test_rewind_takes_a_message_number_and_a_files_conversation_or_both_answer() -> None:
    assert fmt.rewind_number(" 3 ") == 3
    for bad in ("", "0", "-1", "two", "1.5"):
        with pytest.raises(ValueError, match="Usage: /rewind N"):
            fmt.rewind_number(bad)
    answers = {"f": "files", "Files": "files", "c": "conversation", "conv": "conversation", " b ": "both"}
    assert {answer: fmt.rewind_choice(answer) for answer in answers} == answers
    assert [fmt.rewind_choice(a) for a in ("", "n", "x", "bothe", "yes")] == [None] * 5


def test_the_users_messages_are_numbered_as_the_server_counts_them() -> None:
    def said(text: str, steer: bool = False) -> UserMessage:
        return UserMessage(operation_id="o", message_id=text, text=text, client_message_id=text, steer=steer)

    payloads: list[ReceivedPayload] = [
        said("first ask"),
        said("also this", steer=True),
        UnknownPayload(type="x"),
        said("second\nask"),
    ]
    messages = fmt.turn_messages(payloads)
    assert messages == ["first ask", "second\nask"]  # steering a running turn has no number
    assert fmt.rewind_help(messages).plain == f"{fmt.REWIND_USAGE}\n   1. first ask\n   2. second ask"
    many = fmt.rewind_help([f"ask {n}" for n in range(1, 21)], "No such message.", last=3)
    assert many.plain == "No such message.\n  … 17 earlier\n  18. ask 18\n  19. ask 19\n  20. ask 20"
    assert fmt.rewind_help([]).plain.endswith("This session has no messages of yours yet.")
