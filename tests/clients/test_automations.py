"""The text every terminal client shows for automations and notifications: inputs, formats, one-line notices that
fit the width, server text never taken as markup, and a wait for approval said once whatever the order."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from cowork.clients.automations import (
    WaitTracker,
    flow_format,
    notification_line,
    parse_inputs,
    step_line,
    trigger_text,
    waiting_line,
)
from cowork.protocol import AutomationRunInfo, AutomationRunStepInfo, NotificationInfo

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def run(status: str = "waiting_for_human", step: str = "greet") -> AutomationRunInfo:
    pending = {"stepId": step, "tool": "write", "arguments": {"filePath": "a.txt"}, "reason": "asks"}
    return AutomationRunInfo.model_validate(
        {
            "id": "run_1", "automationId": "auto_1", "automationName": "hello", "version": 1, "status": status,
            "trigger": {"type": "manual"}, "inputs": {}, "startedAt": T0,
            "pending": pending if status == "waiting_for_human" else None,
        }
    )  # fmt: skip


def note(kind: str = "automation", run_id: str | None = None, **extra: object) -> NotificationInfo:
    return NotificationInfo.model_validate(
        {"id": "n1", "tier": "urgent", "kind": kind, "title": "Build [red]done[/red]", "body": "All green",
         "deliveredAt": T0, "runId": run_id, **extra}
    )  # fmt: skip


def rendered(text: object, width: int = 200) -> str:
    console = Console(width=width, record=True, force_terminal=False)
    console.print(text)
    return console.export_text()


def test_inputs_are_json_when_they_parse_except_declared_strings() -> None:
    assert parse_inputs(["n=3", "flag=true", 'tags=["a"]', "who=Ann", "empty="]) == {
        "n": 3, "flag": True, "tags": ["a"], "who": "Ann", "empty": "",
    }  # fmt: skip
    assert parse_inputs(["zip=01234", "n=3"], {"zip": "string", "n": "string"}) == {"zip": "01234", "n": "3"}
    assert parse_inputs(["eq=a=b"]) == {"eq": "a=b"}
    for bad in ("who", "=x", "9lives=1", "a b=1"):
        with pytest.raises(ValueError, match="is not KEY=VALUE"):
            parse_inputs([bad])


def test_a_flow_file_s_format_is_its_suffix() -> None:
    assert flow_format(Path("a.yaml")) == "yaml" and flow_format(Path("b.YML")) == "yaml"
    assert flow_format(Path("c.toml")) == "toml"
    with pytest.raises(ValueError, match=r"ends in \.yaml, \.yml or \.toml"):
        flow_format(Path("d.json"))


def test_triggers_read_as_one_line() -> None:
    assert trigger_text({"type": "manual"}) == "manual"
    assert trigger_text({"type": "cron", "expression": "0 9 * * 1-5", "timezone": "Europe/Paris"}) == (
        "cron 0 9 * * 1-5 (Europe/Paris)"
    )
    assert trigger_text({"type": "file", "patterns": ["*.md"], "events": ["created"]}) == "files *.md (created)"
    assert trigger_text({"type": "sessionEvent", "event_type": "done"}) == "session event done"


def test_notices_fit_the_width_and_show_markup_as_typed() -> None:
    line = rendered(notification_line(note(), width=200))
    assert line.strip() == "● Build [red]done[/red] — All green   /notifications accept|dismiss|snooze n1"
    narrow = rendered(notification_line(note(body="word " * 40), width=80), width=80).splitlines()
    assert len(narrow) == 2 and narrow[1] == "  /notifications accept|dismiss|snooze n1"
    approval = rendered(notification_line(note("automation_approval", "run_1")))
    assert "/automation approve run_1 · /automation reject run_1" in approval
    waiting = rendered(waiting_line(run(), "/automation", width=200)).strip()
    assert waiting == (
        "⏸ automation hello (run run_1) waits for approval: write(filePath=a.txt)   "
        "/automation approve run_1 · /automation reject run_1"
    )
    step = AutomationRunStepInfo(step_id="greet", type="toolCall", status="done", output="x" * 500, duration_ms=12)
    assert len(rendered(step_line(step, width=80), width=80).splitlines()) == 1


def test_a_wait_is_said_once_whichever_message_comes_first() -> None:
    first_the_run = WaitTracker()
    assert first_the_run.run_changed(run()) is True
    assert first_the_run.run_changed(run()) is False  # the same wait announced again
    assert first_the_run.approval_note(note("automation_approval", "run_1")) is False
    assert first_the_run.run_changed(run("running")) is False  # even out of order, it does not make the wait news
    assert first_the_run.approval_note(note("automation_approval", "run_1")) is False
    assert first_the_run.run_changed(run(step="second")) is True  # the next step's wait is news

    first_the_note = WaitTracker()
    assert first_the_note.approval_note(note("automation_approval", "run_1")) is True
    assert first_the_note.run_changed(run()) is False
    assert first_the_note.run_changed(run(step="second")) is True

    asked_in_place = WaitTracker()
    assert asked_in_place.run_changed(run(), say=False) is False
    assert asked_in_place.approval_note(note("automation_approval", "run_1")) is False
