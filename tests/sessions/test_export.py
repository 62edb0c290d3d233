"""Markdown and JSON exports of a session's log, from constructed events."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cowork.protocol import SessionEvent, SessionInfo
from cowork.sessions._export import export_filename, export_json, export_markdown

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SESSION = SessionInfo(
    id="ses_1", title="Fix `retry` / backoff!", workspace="/w", created_at=T0, updated_at=T0, last_seq=0
)


def log(*entries: tuple[str, dict[str, Any]]) -> list[SessionEvent]:
    return [
        SessionEvent.model_validate({"sessionId": "ses_1", "seq": n, "ts": T0, "type": kind, "payload": payload})
        for n, (kind, payload) in enumerate(entries, 1)
    ]


def user(text: str, *, steer: bool = False) -> tuple[str, dict[str, Any]]:
    return "user_message", {"operationId": "op", "messageId": "m", "text": text, "clientMessageId": "c", "steer": steer}


def call(name: str, op: str = "op", **arguments: Any) -> tuple[str, dict[str, Any]]:
    payload = {"operationId": op, "step": 1, "toolCallId": f"c-{name}", "name": name, "arguments": arguments}
    return "tool_call", payload


def result(name: str, content: str, op: str = "op", **more: Any) -> tuple[str, dict[str, Any]]:
    payload = {"operationId": op, "step": 1, "toolCallId": f"c-{name}", "name": name, "isError": False}
    return "tool_result", payload | {"content": content} | more


def answer(text: str, op: str = "op") -> tuple[str, dict[str, Any]]:
    return "assistant_message", {"operationId": op, "step": 2, "messageId": "a", "text": text}


def test_markdown_keeps_the_conversation_and_shortens_the_rest() -> None:
    events = log(
        user("fix it"),
        call("bash", command="echo ``` && rm -rf x"),
        result("bash", "Rejected by the user: not that", rejected=True, isError=True),
        call("edit", filePath="a.py", oldString="a", newString="b"),
        result("edit", "Edited a.py.", diff="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n"),
        ("agent_spawned", {"operationId": "op", "childOperationId": "child", "agentType": "explore", "task": "look"}),
        call("grep", op="child", pattern="secret"),
        answer("the child's own words", op="child"),
        result("read", "x" * 2500),
        user("and the tests", steer=True),
        answer("Done."),
        ("operation_status", {"operationId": "op2", "status": "error", "reason": "The provider\nfailed."}),
    )

    text = export_markdown(SESSION, events, T0)

    assert text.startswith("# Fix `retry` / backoff!\n")
    assert '**bash** ```` {"command": "echo ``` && rm -rf x"} ````' in text  # inline code they cannot close
    assert "*Rejected by the user: not that*" in text
    assert "```diff\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n```" in text
    assert "*Sub-agent (explore): look*" in text
    assert "secret" not in text and "the child's own words" not in text  # a sub-agent's steps stay out
    assert "x" * 2000 + "… (500 more characters)" in text
    assert "## You (added during the turn)\n\nand the tests\n\n## Cowork\n\nDone." in text
    assert text.endswith("*Turn error: The provider failed.*\n")


def test_json_is_the_log_and_the_filename_is_never_a_path() -> None:
    events = log(user("hello"), answer("hi"))
    document = json.loads(export_json(SESSION, events, T0))
    assert document["format"] == "cowork.session" and document["session"]["title"] == SESSION.title
    assert [e["type"] for e in document["events"]] == ["user_message", "assistant_message"]
    assert export_filename(SESSION, "md") == "fix-retry-backoff.md"
    hostile = SESSION.model_copy(update={"title": "../../etc/passwd"})
    assert export_filename(hostile, "json") == "etc-passwd.json"
    assert export_filename(SESSION.model_copy(update={"title": "…"}), "md") == "session.md"


def test_a_client_saves_under_the_last_part_of_the_name_it_is_given(tmp_path: Path) -> None:
    from cowork.clients.export import parse_export, save_export
    from cowork.protocol import SessionExportResult

    result = SessionExportResult(filename="../../escape.md", media_type="text/markdown", content="# x\n", events=1)
    saved = save_export(result, None, tmp_path)
    assert saved == tmp_path / "escape.md" and saved.read_text(encoding="utf-8") == "# x\n"
    assert parse_export("json my notes.json") == ("json", Path("my notes.json"))
    assert parse_export("week.json") == ("json", Path("week.json"))
    assert parse_export("") == ("markdown", None)
