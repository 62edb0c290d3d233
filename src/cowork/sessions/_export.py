"""A session written out from its event log: Markdown for people, JSON (the log itself) for machines.

Everything in it came from the model, the tools or the workspace, so none of it is trusted: the Markdown puts tool
output in code fences longer than any run of backticks inside it, and never writes raw HTML of its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime

from cowork.protocol import (
    AgentSpawned,
    AssistantMessage,
    ContextCompressed,
    OperationStatus,
    OperationStatusChanged,
    SessionEvent,
    SessionInfo,
    ToolCall,
    ToolResult,
    UserMessage,
)

__all__ = ["EXPORT_FORMAT", "export_filename", "export_json", "export_markdown"]

EXPORT_FORMAT = "cowork.session"
"""The JSON export's `format`; `version` says which shape of it."""

_RESULT_CHARS = 2000
_ARGUMENT_CHARS = 300
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def export_filename(session: SessionInfo, extension: str) -> str:
    """`fix-the-retry-logic.md`: the title, kept to letters, digits, dots and dashes (never a path)."""
    stem = _UNSAFE_NAME.sub("-", session.title.lower()).strip("-.")[:60].rstrip("-.") or "session"
    return f"{stem}.{extension}"


def export_json(session: SessionInfo, events: list[SessionEvent], now: datetime) -> str:
    """The session and its whole event log, as the protocol sends them."""
    document = {
        "format": EXPORT_FORMAT,
        "version": 1,
        "exportedAt": now.isoformat(),
        "session": session.model_dump(mode="json", by_alias=True),
        "events": [event.model_dump(mode="json", by_alias=True, exclude_none=True) for event in events],
    }
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def export_markdown(session: SessionInfo, events: list[SessionEvent], now: datetime) -> str:
    """The conversation as people read it: messages, each tool call with its (shortened) result, diffs, and how
    turns ended when they did not finish. Sub-agents' own steps are left out (their answers are their calls'
    results)."""
    model = f"{session.provider}:{session.model}" if session.provider and session.model else "the default model"
    lines = [
        f"# {_one_line(session.title)}",
        "",
        f"*Exported from Cowork on {now:%Y-%m-%d %H:%M} UTC · folder `{_one_line(session.workspace)}` · {model} · "
        f"session `{session.id}`*",
    ]
    lines += _blocks(events)
    return "\n".join(lines).rstrip() + "\n"


def _blocks(events: Iterable[SessionEvent]) -> list[str]:
    lines: list[str] = []
    children: set[str] = set()
    speaker: str | None = None

    def say(who: str) -> None:
        nonlocal speaker
        if speaker != who:
            lines.extend(["", f"## {who}"])
            speaker = who
        lines.append("")

    for event in events:
        payload = event.payload
        if getattr(payload, "operation_id", None) in children:
            continue
        match payload:
            case UserMessage():
                say("You (added during the turn)" if payload.steer else "You")
                lines.append(payload.text)
            case AssistantMessage() if payload.text.strip():
                say("Cowork")
                lines.append(payload.text)
            case ToolCall():
                say("Cowork")
                arguments = json.dumps(payload.arguments, ensure_ascii=False)
                lines.append(f"**{payload.name}** {_code(_cut(arguments, _ARGUMENT_CHARS))}")
            case ToolResult():
                lines.append("")
                if payload.rejected:
                    lines.append(f"*{_one_line(payload.content)}*")
                    continue
                label = "error" if payload.is_error else "result"
                lines += [f"{label}:", *_fence(_cut(payload.content, _RESULT_CHARS), "text")]
                if payload.diff:
                    lines += ["", *_fence(payload.diff, "diff")]
            case AgentSpawned():
                children.add(payload.child_operation_id)
                say("Cowork")
                lines.append(f"*Sub-agent ({payload.agent_type}): {_one_line(_cut(payload.task, _ARGUMENT_CHARS))}*")
            case ContextCompressed():
                lines += ["", f"*Context compressed: {payload.summarized_messages} earlier messages summarised.*"]
            case OperationStatusChanged() if payload.status in (OperationStatus.ERROR, OperationStatus.CANCELLED):
                reason = f": {_one_line(payload.reason)}" if payload.reason else ""
                lines += ["", f"*Turn {payload.status}{reason}*"]
            case _:
                pass  # streaming deltas, usage, approvals and the rest: not part of the conversation's text
    return lines


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _code(text: str) -> str:
    """Inline code that no backtick inside `text` can close early."""
    text = _one_line(text)
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{ticks} {text} {ticks}"


def _fence(text: str, language: str) -> list[str]:
    """A fenced block that no line of `text` can close (the fence is longer than any backtick run in it)."""
    ticks = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return [f"{ticks}{language}", text.rstrip("\n"), ticks]
