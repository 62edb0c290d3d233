"""Model-facing history: stored as provider-neutral pydantic-ai messages, repaired so any provider accepts it.

pydantic-ai is imported where a message is built or read, not with this module: the runtime's registry and facade
use these helpers, and a server answers its first requests before pydantic-ai's model layer has loaded (it loads in
the background after start-up, or with the first turn). Messages are told apart by their `kind` and `part_kind`
tags, which need no import.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING

from cowork.lazy import HEAVY_IMPORTS

if TYPE_CHECKING:
    from pydantic import TypeAdapter
    from pydantic_ai.messages import ModelMessage, ModelRequest

__all__ = [
    "INTERRUPTED_RESULT",
    "SUMMARY_PREFIX",
    "display_text",
    "dump_message",
    "load_message",
    "repair",
    "repair_with_positions",
    "summary_message",
    "user_request",
]

INTERRUPTED_RESULT = "This tool call was interrupted before it returned a result (cancelled or the server stopped)."
SUMMARY_PREFIX = "[Summary of the earlier conversation, written to save space]\n\n"


@cache
def _adapter() -> TypeAdapter[ModelMessage]:
    with HEAVY_IMPORTS:
        from pydantic import TypeAdapter
        from pydantic_ai.messages import ModelMessage

        return TypeAdapter(ModelMessage)


def dump_message(message: ModelMessage) -> str:
    return _adapter().dump_json(message).decode()


def load_message(data: str) -> ModelMessage:
    return _adapter().validate_json(data)


def user_request(text: str, timestamp: datetime | None = None) -> ModelRequest:
    """A request carrying the user's words."""
    with HEAVY_IMPORTS:
        from pydantic_ai.messages import ModelRequest, UserPromptPart

    part = UserPromptPart(text) if timestamp is None else UserPromptPart(text, timestamp=timestamp)
    return ModelRequest(parts=[part])


def summary_message(summary: str) -> ModelRequest:
    """The request standing in for the compressed part of a thread."""
    return user_request(SUMMARY_PREFIX + summary)


def display_text(message: ModelMessage) -> str:
    """The text a person reads: the user's words, or the assistant's answer text."""
    if message.kind == "request":
        return "\n".join(
            p.content for p in message.parts if p.part_kind == "user-prompt" and isinstance(p.content, str)
        )
    return "".join(p.content for p in message.parts if p.part_kind == "text")


def repair(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """Give every tool call a result, so the history is valid for every provider.

    A turn cancelled (or a server killed) between a model asking for tools and their results being stored leaves
    calls without results; OpenAI and Anthropic both reject such a history. Each missing result is filled with a
    note saying the call was interrupted, placed right after the response that made the call.
    """
    return repair_with_positions(messages, [-1] * len(messages))[0]


def repair_with_positions(
    messages: Sequence[ModelMessage], positions: Sequence[int]
) -> tuple[list[ModelMessage], list[int]]:
    """`repair`, keeping each message's store position alongside (-1 for an inserted filler)."""
    pending = list(messages)
    out: list[ModelMessage] = []
    out_positions: list[int] = []
    for i, message in enumerate(pending):
        out.append(message)
        out_positions.append(positions[i])
        if message.kind != "response":
            continue
        calls = [p for p in message.parts if p.part_kind == "tool-call"]
        following = pending[i + 1] if i + 1 < len(pending) else None
        answered = (
            {p.tool_call_id for p in following.parts if p.part_kind == "tool-return"}
            if following is not None and following.kind == "request"
            else set()
        )
        missing = [c for c in calls if c.tool_call_id not in answered]
        if not missing:
            continue
        with HEAVY_IMPORTS:
            from pydantic_ai.messages import ModelRequest, ToolReturnPart

        fillers = [
            ToolReturnPart(tool_name=c.tool_name, content=INTERRUPTED_RESULT, tool_call_id=c.tool_call_id)
            for c in missing
        ]
        if following is not None and following.kind == "request":
            # Results go first: providers expect tool results before any new user text in the same message.
            pending[i + 1] = dataclasses.replace(following, parts=[*fillers, *following.parts])
        else:
            out.append(ModelRequest(parts=fillers))
            out_positions.append(-1)
    return out, out_positions
